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
    // network byte order: Buffer's inline fast path (switches read this at every hop)
    start.WriteHtonU32(m_src);
    start.WriteHtonU32(m_dst);
    start.WriteHtonU32(m_flow);
    start.WriteHtonU32(m_seq);
}

uint32_t
FabricHeader::Deserialize(Buffer::Iterator start)
{
    m_src = start.ReadNtohU32();
    m_dst = start.ReadNtohU32();
    m_flow = start.ReadNtohU32();
    m_seq = start.ReadNtohU32();
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
