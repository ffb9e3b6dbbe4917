// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "wire-format.h"

#include "ns3/header.h"

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * @brief The header of an RDMA packet as mcsim carries it.
 *
 * Its first 16 bytes have the layout of the FabricHeader (source host, destination host or group,
 * flow, sequence = PSN), so switches route it with PeekHeader(FabricHeader). Then: opcode, flags,
 * destination QP number, and the fields of the extended headers the opcode has (RETH: remote
 * offset and length; ImmDt: immediate). The NIC pads every packet to the real header size of its
 * WireFormat (WireHeaderBytes), so the bytes on the wire are exact; this serialized form is never
 * larger than the real headers.
 */
class TransportHeader : public Header
{
  public:
    static constexpr uint8_t FLAG_ACK_REQUEST = 1; //!< BTH A bit: the responder should ACK now
    static constexpr uint8_t FLAG_NAK = 2;         //!< AETH: NAK, PSN sequence error
    static constexpr uint8_t FLAG_RNR = 4;         //!< AETH: receiver not ready (no receive posted)

    TransportHeader();

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    uint32_t srcHost;      //!< sending host
    uint32_t dst;          //!< destination host, or group | FabricHeader::GROUP_FLAG
    uint32_t flow;         //!< ECMP flow id (the QP pair)
    uint32_t psn;          //!< packet sequence number (ACK: last PSN acknowledged; NAK: expected)
    Opcode opcode;         //!< BTH opcode
    uint8_t flags;         //!< FLAG_*
    uint16_t dstQpn;       //!< destination QP number at the receiving NIC
    uint32_t imm;          //!< immediate data (opcodes with ImmDt)
    uint64_t remoteOffset; //!< RETH: offset in the responder's registered region
    uint32_t length;       //!< RETH: bytes of the WRITE or READ
};

} // namespace mcsim
} // namespace ns3
