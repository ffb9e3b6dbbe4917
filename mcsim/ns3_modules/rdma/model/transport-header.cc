// SPDX-License-Identifier: GPL-2.0-only
#include "transport-header.h"

#include "ns3/mcsim/fabric-header.h"

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(TransportHeader);

namespace
{
constexpr uint32_t FIXED_BYTES = FabricHeader::SERIALIZED_BYTES + 8; // + opcode, flags, qpn, pad
constexpr uint32_t IMM_BYTES = 4;
constexpr uint32_t RETH_FIELDS_BYTES = 12;
} // namespace

TransportHeader::TransportHeader()
    : srcHost(0),
      dst(0),
      flow(0),
      psn(0),
      opcode(Opcode::ACK),
      flags(0),
      dstQpn(0),
      imm(0),
      remoteOffset(0),
      length(0)
{
}

TypeId
TransportHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::mcsim::TransportHeader")
                            .SetParent<Header>()
                            .SetGroupName("Mcsim")
                            .AddConstructor<TransportHeader>();
    return tid;
}

TypeId
TransportHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
TransportHeader::GetSerializedSize() const
{
    return FIXED_BYTES + (HasImm(opcode) ? IMM_BYTES : 0) +
           (HasReth(opcode) ? RETH_FIELDS_BYTES : 0);
}

void
TransportHeader::Serialize(Buffer::Iterator start) const
{
    // the FabricHeader's layout first (see FabricHeader::Serialize)
    FabricHeader(srcHost, dst, flow, psn).Serialize(start);
    start.Next(FabricHeader::SERIALIZED_BYTES);
    start.WriteU8(static_cast<uint8_t>(opcode));
    start.WriteU8(flags);
    start.WriteU16(dstQpn);
    start.WriteU32(0);
    if (HasImm(opcode))
    {
        start.WriteU32(imm);
    }
    if (HasReth(opcode))
    {
        start.WriteU64(remoteOffset);
        start.WriteU32(length);
    }
}

uint32_t
TransportHeader::Deserialize(Buffer::Iterator start)
{
    FabricHeader fh;
    fh.Deserialize(start);
    start.Next(FabricHeader::SERIALIZED_BYTES);
    srcHost = fh.GetSource();
    dst = fh.GetDestination();
    flow = fh.GetFlow();
    psn = fh.GetSeq();
    opcode = static_cast<Opcode>(start.ReadU8());
    flags = start.ReadU8();
    dstQpn = start.ReadU16();
    start.ReadU32();
    imm = HasImm(opcode) ? start.ReadU32() : 0;
    if (HasReth(opcode))
    {
        remoteOffset = start.ReadU64();
        length = start.ReadU32();
    }
    return GetSerializedSize();
}

void
TransportHeader::Print(std::ostream& os) const
{
    os << "src=" << srcHost << " dst=" << dst << " qpn=" << dstQpn << " psn=" << psn
       << " opcode=" << static_cast<int>(opcode) << " flags=" << static_cast<int>(flags);
}

} // namespace mcsim
} // namespace ns3
