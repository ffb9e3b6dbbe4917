// SPDX-License-Identifier: GPL-2.0-only
#include "wire-format.h"

namespace ns3
{
namespace mcsim
{

namespace
{
// InfiniBand Architecture Specification, vol. 1, chapter 9 (transport) and 7 (link)
constexpr uint32_t LRH_BYTES = 8;
constexpr uint32_t GRH_BYTES = 40;
constexpr uint32_t BTH_BYTES = 12;
constexpr uint32_t RETH_BYTES = 16;
constexpr uint32_t AETH_BYTES = 4;
constexpr uint32_t IMMDT_BYTES = 4;
constexpr uint32_t DETH_BYTES = 8;
constexpr uint32_t ICRC_BYTES = 4;
constexpr uint32_t VCRC_BYTES = 2;
// RoCEv2 (Annex A17): Ethernet II + IPv4 + UDP replace LRH/GRH; the Ethernet FCS replaces VCRC
constexpr uint32_t ETH_BYTES = 14;
constexpr uint32_t IPV4_BYTES = 20;
constexpr uint32_t UDP_BYTES = 8;
constexpr uint32_t FCS_BYTES = 4;
} // namespace

Opcode
MessageOpcode(bool send, bool withImm, bool first, bool last)
{
    if (first && last)
    {
        return send ? (withImm ? Opcode::SEND_ONLY_IMM : Opcode::SEND_ONLY)
                    : (withImm ? Opcode::WRITE_ONLY_IMM : Opcode::WRITE_ONLY);
    }
    if (first)
    {
        return send ? Opcode::SEND_FIRST : Opcode::WRITE_FIRST;
    }
    if (last)
    {
        return send ? (withImm ? Opcode::SEND_LAST_IMM : Opcode::SEND_LAST)
                    : (withImm ? Opcode::WRITE_LAST_IMM : Opcode::WRITE_LAST);
    }
    return send ? Opcode::SEND_MIDDLE : Opcode::WRITE_MIDDLE;
}

Opcode
ReadResponseOpcode(bool first, bool last)
{
    return first && last ? Opcode::READ_RESPONSE_ONLY
           : first       ? Opcode::READ_RESPONSE_FIRST
           : last        ? Opcode::READ_RESPONSE_LAST
                         : Opcode::READ_RESPONSE_MIDDLE;
}

uint32_t
WireHeaderBytes(WireFormat format, Opcode op, bool multicast)
{
    uint32_t bytes = BTH_BYTES + ICRC_BYTES;
    bytes += HasReth(op) ? RETH_BYTES : 0;
    bytes += HasAeth(op) ? AETH_BYTES : 0;
    bytes += HasImm(op) ? IMMDT_BYTES : 0;
    bytes += IsUd(op) ? DETH_BYTES : 0;
    if (format == WireFormat::INFINIBAND)
    {
        return bytes + LRH_BYTES + VCRC_BYTES + (multicast ? GRH_BYTES : 0);
    }
    return bytes + ETH_BYTES + IPV4_BYTES + UDP_BYTES + FCS_BYTES;
}

} // namespace mcsim
} // namespace ns3
