// SPDX-License-Identifier: GPL-2.0-only
#include "fabric-header.h"

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(FabricHeader);

FabricHeader::FabricHeader()
    : FabricHeader(0, 0, 0, 0)
{
}

FabricHeader::FabricHeader(uint32_t src, uint32_t dst, uint32_t flow, uint32_t seq)
    : m_src(src),
      m_dst(dst),
      m_flow(flow),
      m_seq(seq)
{
}

TypeId
FabricHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::mcsim::FabricHeader")
                            .SetParent<Header>()
                            .SetGroupName("Mcsim")
                            .AddConstructor<FabricHeader>();
    return tid;
}

TypeId
FabricHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
FabricHeader::GetSerializedSize() const
{
    return SERIALIZED_BYTES;
}

void
FabricHeader::Serialize(Buffer::Iterator start) const
{
    uint8_t raw[SERIALIZED_BYTES]; // little-endian, as Deserialize reads it
    const uint32_t fields[4] = {m_src, m_dst, m_flow, m_seq};
    for (int f = 0; f < 4; ++f)
    {
        for (int b = 0; b < 4; ++b)
        {
            raw[4 * f + b] = static_cast<uint8_t>(fields[f] >> (8 * b));
        }
    }
    start.Write(raw, SERIALIZED_BYTES);
}

uint32_t
FabricHeader::Deserialize(Buffer::Iterator start)
{
    uint8_t raw[SERIALIZED_BYTES]; // one bounds check instead of sixteen
    start.Read(raw, SERIALIZED_BYTES);
    auto u32 = [&raw](int i) {
        return static_cast<uint32_t>(raw[i]) | static_cast<uint32_t>(raw[i + 1]) << 8 |
               static_cast<uint32_t>(raw[i + 2]) << 16 | static_cast<uint32_t>(raw[i + 3]) << 24;
    };
    m_src = u32(0);
    m_dst = u32(4);
    m_flow = u32(8);
    m_seq = u32(12);
    return SERIALIZED_BYTES;
}

void
FabricHeader::Print(std::ostream& os) const
{
    os << "src=" << m_src << " dst=";
    if (IsGroup())
    {
        os << "group " << GetGroup();
    }
    else
    {
        os << m_dst;
    }
    os << " flow=" << m_flow << " seq=" << m_seq;
}

} // namespace mcsim
} // namespace ns3
