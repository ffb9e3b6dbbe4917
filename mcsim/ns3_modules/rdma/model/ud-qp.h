// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "queue-pair.h"

#include "ns3/mcsim/counter-table.h"
#include "ns3/nstime.h"

#include <cstdint>
#include <deque>

namespace ns3
{
namespace mcsim
{

/**
 * @brief Unreliable Datagram QP: single-packet SENDs to a host's QP or to a multicast group.
 *
 * No ACKs, no retransmission. The receive queue holds RqDepth posted buffers (all posted at the
 * start); a datagram takes one and hands a completion to the completion processor; the buffer is
 * re-posted only when that completion has been processed. A datagram that finds no posted buffer
 * is dropped and counted (receiver overrun). With Staging, payloads land in staging buffers and
 * the processor pays for copying them to their place.
 */
class UdQp : public QueuePair
{
  public:
    static TypeId GetTypeId();
    UdQp();
    ~UdQp() override;

    /**
     * Post one datagram.
     * @param dst a host id, or a group id | FabricHeader::GROUP_FLAG
     * @param dstQpn the QP number at the destination host (ignored for a group)
     * @param bytes payload, at most the NIC's MTU
     * @param localOffset verify mode: the payload's bytes are the region's at this offset
     * @param signalled its completion makes a CQE (QueuePair::CompleteSend)
     * @throws std::invalid_argument for 0 or more than MTU bytes
     */
    void PostSend(uint32_t dst,
                  uint32_t dstQpn,
                  uint32_t bytes,
                  uint64_t wrId,
                  bool withImm,
                  uint32_t imm,
                  int64_t localOffset = -1,
                  bool signalled = true);

    /**
     * Post one contribution to an in-network reduction (Switch, AggregationUnit): a datagram to
     * aggregation tree `tree` with sequence number `seq` in it; the tree's root delivers the sum
     * as a datagram with immediate `imm` to `resultDst` (a host, or a group | GROUP_FLAG) and
     * resultQpn there (ignored for a group).
     * @throws std::invalid_argument as PostSend
     */
    void PostContribution(uint32_t tree,
                          uint32_t seq,
                          uint32_t resultDst,
                          uint32_t resultQpn,
                          uint32_t bytes,
                          uint64_t wrId,
                          uint32_t imm,
                          int64_t localOffset = -1);

    bool HasPacket() const override;
    bool HasWork() const override;
    OutgoingPacket NextPacket() override;
    void Receive(Ptr<Packet> packet, const TransportHeader& h, uint32_t payloadBytes) override;

    uint32_t GetPostedRecvs() const; //!< receive buffers posted now

    /** The fields of UdQp::Counters, in order: X(member, initial, python_name). */
#define MCSIM_UD_QP_COUNTERS(X)                                                                    \
    /* datagrams sent */                                                                           \
    X(txPackets, 0, "tx_packets")                                                                  \
    /* payload bytes sent */                                                                       \
    X(txPayload, 0, "tx_payload")                                                                  \
    /* datagrams taken into a posted buffer */                                                     \
    X(rxPackets, 0, "rx_packets")                                                                  \
    /* their payload bytes */                                                                      \
    X(rxPayload, 0, "rx_payload")                                                                  \
    /* datagrams dropped: no receive buffer posted */                                              \
    X(overruns, 0, "overruns")                                                                     \
    /* receive completions processed (buffer re-posted) */                                         \
    X(processed, 0, "processed")                                                                   \
    /* fewest buffers ever posted (starts at RqDepth) */                                           \
    X(minPosted, 0, "min_posted")

    /** @brief Per-QP counters, read in bulk after the run. */
    struct Counters
    {
        MCSIM_COUNTERS(MCSIM_UD_QP_COUNTERS)
    };

    static constexpr uint32_t NUM_COUNTERS = Counters::COUNT;
    const Counters& GetCounters() const;

  protected:
    void OnReceiveProcessed(const Completion& c) override;
    /** The buffer's re-post is read only by this host's arrivals; the owner decides the rest. */
    bool ReceiveDeferrable(const Completion& c, const QueuedAhead& ahead) const override;

  private:
    struct Datagram
    {
        uint32_t dst; //!< a host, a group | GROUP_FLAG, or a tree | AGGREGATE_FLAG
        uint32_t dstQpn;
        uint32_t bytes;
        uint64_t wrId;
        bool withImm;
        uint32_t imm;
        int64_t localOffset; //!< verify mode: the payload's place in the region, or -1
        Time visible;        //!< its first byte may leave then (Nic::Doorbell)
        uint32_t resultDst;  //!< a contribution: where its sum goes
        uint32_t seq;        //!< a contribution: its sequence number in its tree
        bool signalled;      //!< its completion makes a CQE
    };

    /** Check a datagram's size (1..MTU) before it is posted. */
    void CheckPost(uint32_t bytes) const;

    uint32_t m_rqDepth;        //!< "RqDepth"
    bool m_staging;            //!< "Staging"
    bool m_lossyClass = false; //!< "LossyClass"
    uint32_t m_posted;
    bool m_started;
    std::deque<Datagram> m_sq;
    Counters m_counters;
};

} // namespace mcsim
} // namespace ns3
