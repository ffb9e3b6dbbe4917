// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "wire-format.h"

#include "ns3/mcsim/fabric-header.h"

#include <cstdint>
#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * @brief The bytes of one packet's frame as its wire format carries it, with the model's field
 * values (what a packet trace writes).
 *
 * Native InfiniBand (InfiniBand Architecture Specification vol. 1, chapters 7 and 9): LRH, GRH
 * (multicast), BTH, then DETH, RETH, AETH and ImmDt as the opcode has them. RoCEv2 (Annex A17):
 * Ethernet II, IPv4, UDP to port 4791, then the same transport headers. Addresses: host h is
 * LID h + 1, GID fe80::(h + 1), MAC 02:00:00:hh:hh:hh (h + 1) and IPv4 10.0.0.0 + h + 1;
 * multicast group g is LID 0xC000 + g, GID ff12:401b::g, IPv4 239.0.0.0 + g (MAC 01:00:5e and
 * its low 23 bits); aggregation tree t (in-network reduction) is LID 0xBFFF - t and IPv4
 * 10.255.0.0 + t (the unicast addresses from the top down). A QP's number is the model's + 2 (QP0
 * and QP1 are the management QPs); a multicast packet's destination QP is 0xFFFFFF.
 *
 * With the payload's bytes (verify mode) the frame is whole: payload, pad to 4 bytes, ICRC (both
 * formats), then VCRC (InfiniBand) or the Ethernet FCS (RoCEv2). Without them it is truncated
 * after its headers (a capture's snap length).
 * @param format InfiniBand or RoCEv2
 * @param fields the packet's fabric fields (its transport header)
 * @param payloadBytes the payload's length
 * @param srcQpn the sending QP (DETH of a datagram)
 * @param payload verify mode: the payload's payloadBytes bytes; nullptr: headers only
 * @param out the frame's captured bytes (cleared first; its capacity is reused)
 * @return the frame's length on the wire (no preamble or IFG)
 */
uint32_t BuildWireFrame(WireFormat format,
                        const FabricHeader::Fields& fields,
                        uint32_t payloadBytes,
                        uint32_t srcQpn,
                        const uint8_t* payload,
                        std::vector<uint8_t>& out);

/** CRC-32 of IEEE 802.3 (reflected polynomial 0xEDB88320, seed and result inverted), continuing
 * from crc (0 to start): the ICRC and the Ethernet FCS. */
uint32_t Crc32(uint32_t crc, const uint8_t* data, std::size_t n);

/** The VCRC: CRC-16 of polynomial 0x100B with the ICRC's conventions (bits least significant
 * first, seed all ones, remainder inverted), InfiniBand Architecture Specification 7.8.2. */
uint16_t Vcrc16(const uint8_t* data, std::size_t n);

} // namespace mcsim
} // namespace ns3
