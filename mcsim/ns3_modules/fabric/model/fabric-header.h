// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/header.h"

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * @brief The fabric's routing header, 16 bytes on the wire (it stands for the link/network
 * headers: InfiniBand LRH and the routing part of the GRH/BTH).
 *
 * dst is a host id, or a multicast group id with GROUP_FLAG set. flow identifies the flow (a QP
 * in the transport) for ECMP hashing; seq is the packet's sequence number within its flow (the
 * PSN of an RDMA packet; 0 on raw flows, whose packets are alike).
 *
 * An in-network reduction's contribution (AggregationUnit) names its aggregation tree: dst is
 * the tree id with AGGREGATE_FLAG set, flow is where the tree's root sends the sum (a host, or a
 * group with GROUP_FLAG), and seq is the contribution's sequence number in its tree (every
 * contributor sends a tree's sequence numbers in the same order).
 */
class FabricHeader : public Header
{
  public:
    static constexpr uint32_t GROUP_FLAG = 0x80000000U; //!< dst names a multicast group
    // ECN codepoints (RFC 3168), as IP's two ECN bits carry them
    static constexpr uint8_t ECN_NOT_ECT = 0; //!< not ECN-capable
    static constexpr uint8_t ECN_ECT0 = 2;    //!< ECN-capable, ECT(0)
    static constexpr uint8_t ECN_CE = 3;      //!< congestion experienced
    /** The lossy traffic class's DSCP (class selector CS1); every other packet's is 0, the
     * lossless class's (fabric.md, "Traffic classes"). */
    static constexpr uint8_t DSCP_LOSSY = 8;
    static constexpr uint32_t UPPER_BYTES = 20; //!< the UpperWords' bytes an upper layer may use
    /** An INT handle's bits (IntStore): bytes 20..22 of the UpperWords. */
    static constexpr uint32_t INT_HANDLE_BITS = 24;
    /** A handle's top bit: the packet echoes INT collected by another (an ACK): no hop adds to it.
     */
    static constexpr uint32_t INT_ECHO = 1U << (INT_HANDLE_BITS - 1);
    static constexpr uint32_t AGGREGATE_FLAG = 0x40000000U; //!< dst names an aggregation tree
    static constexpr uint32_t SERIALIZED_BYTES = 16;        //!< wire size

    /** A destination that names an aggregation tree (AGGREGATE_FLAG set, not a group). */
    static constexpr bool IsAggregateDestination(uint32_t dst)
    {
        return (dst & AGGREGATE_FLAG) != 0 && (dst & GROUP_FLAG) == 0;
    }

    /**
     * The upper layer's header as plain data (the RDMA transport's opcode, QP number, immediate
     * and RETH fields): carried beside the packet with its Fields, copied at every hop and never
     * read by the fabric, so that no layer serializes or parses a header per packet. All zero on
     * raw flows.
     */
    struct UpperWords
    {
        uint64_t word[3];
    };

    /**
     * The header's fields as plain data: what ports carry beside a packet, so that switches
     * route it without reading the packet's bytes.
     */
    struct Fields
    {
        uint32_t src;     //!< sending host
        uint32_t dst;     //!< host id, or group id | GROUP_FLAG
        uint32_t flow;    //!< flow id for ECMP
        uint32_t seq;     //!< sequence number in the flow (0 on raw flows)
        UpperWords upper; //!< the upper layer's header (see UpperWords)

        /** The packet's IP traffic-class byte, DSCP << 2 | ECN, kept in the last byte of its
         * UpperWords: the fabric's own (an upper layer uses at most the first UPPER_BYTES). */
        uint8_t GetTos() const
        {
            return static_cast<uint8_t>(upper.word[2] >> 56);
        }

        /** The packet's ECN codepoint (ECN_*): the low two bits of its traffic-class byte. */
        uint8_t GetEcn() const
        {
            return GetTos() & 3;
        }

        void SetEcn(uint8_t ecn)
        {
            upper.word[2] = (upper.word[2] & ~(uint64_t{3} << 56)) | (uint64_t{ecn & 3U} << 56);
        }

        /** Whether the packet is in the lossy traffic class (its DSCP is DSCP_LOSSY). */
        bool IsLossy() const
        {
            return GetTos() >> 2 == DSCP_LOSSY;
        }

        /** Put the packet in the lossy traffic class (a host's port, or a UD QP, that sends in it),
         * unless it is a contribution to an in-network reduction: nothing repairs a lost one, so
         * it stays lossless. */
        void SetLossy()
        {
            if (IsAggregate())
            {
                return;
            }
            upper.word[2] =
                (upper.word[2] & ~(uint64_t{0xFC} << 56)) | (uint64_t{DSCP_LOSSY} << 2 << 56);
        }

        /** The packet's INT handle (IntStore; 0: it carries no INT), kept in bytes 20..22 of
         * its UpperWords: the fabric's own. */
        uint32_t GetInt() const
        {
            return static_cast<uint32_t>(upper.word[2] >> 32) & ((1U << INT_HANDLE_BITS) - 1);
        }

        void SetInt(uint32_t handle)
        {
            const uint64_t mask = uint64_t{(1U << INT_HANDLE_BITS) - 1} << 32;
            upper.word[2] = (upper.word[2] & ~mask) | (uint64_t{handle} << 32 & mask);
        }

        bool IsGroup() const
        {
            return (dst & GROUP_FLAG) != 0;
        }

        uint32_t GetGroup() const
        {
            return dst & ~GROUP_FLAG;
        }

        bool IsAggregate() const
        {
            return IsAggregateDestination(dst);
        }

        uint32_t GetTree() const
        {
            return dst & ~AGGREGATE_FLAG;
        }
    };

    FabricHeader();
    FabricHeader(uint32_t src, uint32_t dst, uint32_t flow, uint32_t seq);

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

    uint32_t GetSource() const
    {
        return m_src;
    } //!< sending host

    uint32_t GetDestination() const
    {
        return m_dst;
    } //!< host id, or group id | GROUP_FLAG

    uint32_t GetFlow() const
    {
        return m_flow;
    } //!< flow id for ECMP

    uint32_t GetSeq() const
    {
        return m_seq;
    } //!< sequence number in the flow

    Fields GetFields() const
    {
        return {m_src, m_dst, m_flow, m_seq, {}};
    }

    bool IsGroup() const
    {
        return (m_dst & GROUP_FLAG) != 0;
    }

    uint32_t GetGroup() const
    {
        return m_dst & ~GROUP_FLAG;
    }

  private:
    uint32_t m_src;
    uint32_t m_dst;
    uint32_t m_flow;
    uint32_t m_seq;
};

} // namespace mcsim
} // namespace ns3
