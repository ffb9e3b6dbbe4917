// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/** @brief Link and network encapsulation of RDMA packets. */
enum class WireFormat
{
    INFINIBAND, //!< LRH 8 [+ GRH 40] + BTH 12 + extended headers + ICRC 4 + VCRC 2
    ROCEV2,     //!< Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + extended headers + ICRC 4 + FCS 4
};

/** @brief Transport opcodes (InfiniBand BTH opcodes, RC and UD). */
enum class Opcode : uint8_t
{
    SEND_FIRST,
    SEND_MIDDLE,
    SEND_LAST,
    SEND_LAST_IMM,
    SEND_ONLY,
    SEND_ONLY_IMM,
    WRITE_FIRST,
    WRITE_MIDDLE,
    WRITE_LAST,
    WRITE_LAST_IMM,
    WRITE_ONLY,
    WRITE_ONLY_IMM,
    READ_REQUEST,
    READ_RESPONSE_FIRST,
    READ_RESPONSE_MIDDLE,
    READ_RESPONSE_LAST,
    READ_RESPONSE_ONLY,
    ACK, //!< ACK or NAK (AETH syndrome in the flags)
    UD_SEND_ONLY,
    UD_SEND_ONLY_IMM,
    COUNT
};

/** @return true if the opcode carries a RETH (remote address, length): WRITE first/only, READ
 * request */
bool HasReth(Opcode op);
/** @return true if the opcode carries immediate data (ImmDt) */
bool HasImm(Opcode op);
/** @return true if the opcode carries an AETH: ACK, READ response first/last/only */
bool HasAeth(Opcode op);
/** @return true for UD opcodes (DETH) */
bool IsUd(Opcode op);
/** @return true for READ responses */
bool IsReadResponse(Opcode op);

/**
 * The opcode of one packet of a SEND (send) or RDMA WRITE message: the first and/or the last of
 * the message (both: an ONLY packet); withImm: the message carries immediate data (on its last).
 */
Opcode MessageOpcode(bool send, bool withImm, bool first, bool last);
/** The opcode of one READ response packet: the first and/or the last of the stream. */
Opcode ReadResponseOpcode(bool first, bool last);

/**
 * Bytes of headers and trailers on the wire for one packet, from the real formats.
 * @param format InfiniBand or RoCEv2
 * @param op the opcode (decides RETH, AETH, ImmDt, DETH)
 * @param multicast UD multicast: InfiniBand adds the 40-byte GRH
 */
uint32_t WireHeaderBytes(WireFormat format, Opcode op, bool multicast);

} // namespace mcsim
} // namespace ns3
