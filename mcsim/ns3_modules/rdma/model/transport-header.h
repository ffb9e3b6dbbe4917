// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "wire-format.h"

#include "ns3/mcsim/fabric-header.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace ns3
{
namespace mcsim
{

/**
 * @brief The header of an RDMA packet as mcsim carries it: plain data, never bytes.
 *
 * Its first four fields are the FabricHeader's (source host, destination host or group, flow,
 * sequence = PSN), by which switches route; the rest (opcode, flags, destination QP number, the
 * immediate and the RETH fields its opcode has) travel in the Fields' UpperWords. A packet's bytes
 * are only its size: the NIC makes every packet as large as its payload plus the real header bytes
 * of its WireFormat (WireHeaderBytes), so the wire carries exactly what a real NIC sends, and no
 * header is serialized or parsed per packet. A field its opcode does not have (imm without ImmDt,
 * remoteOffset and length without RETH) travels as 0.
 */
struct TransportHeader
{
    static constexpr uint8_t FLAG_ACK_REQUEST = 1; //!< BTH A bit: the responder should ACK now
    static constexpr uint8_t FLAG_NAK = 2;         //!< AETH: NAK, PSN sequence error
    static constexpr uint8_t FLAG_RNR = 4;         //!< AETH: receiver not ready (no receive posted)

    uint32_t srcHost = 0; //!< sending host
    uint32_t dst = 0;     //!< destination host, or group | FabricHeader::GROUP_FLAG
    uint32_t flow = 0;    //!< ECMP flow id (the QP pair)
    uint32_t psn = 0;     //!< packet sequence number (ACK: last PSN acknowledged; NAK: expected)
    Opcode opcode = Opcode::ACK; //!< BTH opcode
    uint8_t flags = 0;           //!< FLAG_*
    uint16_t dstQpn = 0;         //!< destination QP number at the receiving NIC
    uint32_t imm = 0;            //!< immediate data (opcodes with ImmDt)
    uint64_t remoteOffset = 0;   //!< RETH: offset in the responder's registered region
    uint32_t length = 0;         //!< RETH: bytes of the WRITE or READ
    uint8_t ecn = 0;             //!< the packet's ECN codepoint as it arrived (FabricHeader's)
    uint32_t intHandle = 0;      //!< its INT records (IntStore; 0: none), FabricHeader's

    /** The header as the fabric carries it. */
    FabricHeader::Fields ToFields() const
    {
        const bool reth = HasReth(opcode);
        Upper u{}; // value-initialized: its padding is zero too
        u.remoteOffset = reth ? remoteOffset : 0;
        u.imm = HasImm(opcode) ? imm : 0;
        u.length = reth ? length : 0;
        u.dstQpn = dstQpn;
        u.opcode = opcode;
        u.flags = flags;
        FabricHeader::Fields f{srcHost, dst, flow, psn, {}};
        std::memcpy(&f.upper, &u, sizeof(u));
        if (intHandle != 0)
        {
            f.SetInt(intHandle);
        }
        return f;
    }

    /** The header of a packet the fabric delivered with these fields. */
    static TransportHeader FromFields(const FabricHeader::Fields& f)
    {
        Upper u;
        std::memcpy(&u, &f.upper, sizeof(u));
        TransportHeader h;
        h.srcHost = f.src;
        h.dst = f.dst;
        h.flow = f.flow;
        h.psn = f.seq;
        h.opcode = u.opcode;
        h.flags = u.flags;
        h.dstQpn = u.dstQpn;
        h.imm = u.imm;
        h.remoteOffset = u.remoteOffset;
        h.length = u.length;
        h.ecn = f.GetEcn();
        h.intHandle = f.GetInt();
        return h;
    }

  private:
    /** The fields beyond the FabricHeader's, as they sit in FabricHeader::UpperWords. */
    struct Upper
    {
        uint64_t remoteOffset;
        uint32_t imm;
        uint32_t length;
        uint16_t dstQpn;
        Opcode opcode;
        uint8_t flags;
    };

    // its fields (not its tail padding, which ToFields zeroes) leave the UpperWords' last four
    // bytes to the fabric (its INT handle and ECN codepoint: a new packet is not ECN-capable)
    static_assert(sizeof(Upper) <= sizeof(FabricHeader::UpperWords) &&
                      offsetof(Upper, flags) + sizeof(uint8_t) <= FabricHeader::UPPER_BYTES &&
                      std::is_trivially_copyable_v<Upper>,
                  "the transport's fields must fit the fabric's UpperWords");
};

} // namespace mcsim
} // namespace ns3
