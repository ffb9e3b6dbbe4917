// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "queue-pair.h"
#include "rc-responder.h"

#include "ns3/mcsim/counter-table.h"
#include "ns3/mcsim/protocol-timer.h"
#include "ns3/nstime.h"

#include <cstdint>
#include <deque>

namespace ns3
{
namespace mcsim
{

/**
 * @brief A protocol's lines on the wire (NCCL's LL and LL128): each line of `bytes` carries `data`
 * bytes of the message and the rest flags, so a packet of P payload bytes is P + (bytes - data) x
 * ceil(P / data) on the wire; only the last line of a message is partial. `bytes` 0: none (the
 * message's bytes alone, as the verbs define them).
 */
struct ProtocolLines
{
    uint32_t bytes = 0; //!< a line on the wire (0: no lines)
    uint32_t data = 0;  //!< the message's bytes in a full line (< bytes)

    /** The flag bytes a packet of `payload` message bytes adds. */
    uint32_t Pad(uint32_t payload) const
    {
        return (bytes - data) * ((payload + data - 1) / data);
    }

    /** The message bytes of a packet whose payload on the wire is `wire` (Pad's inverse). */
    uint32_t Data(uint32_t wire) const
    {
        return wire - (bytes - data) * ((wire + bytes - 1) / bytes);
    }

    /** The message bytes a packet of an `mtu`-byte payload carries: whole lines. */
    uint32_t PerPacket(uint32_t mtu) const
    {
        return mtu / bytes * data;
    }
};

/**
 * @brief Reliable Connected QP: SEND/RECV, RDMA WRITE (with or without immediate), RDMA READ,
 * with the InfiniBand RC rules for acknowledgement and recovery.
 *
 * The model: rdma/doc/rdma.md, "RcQp".
 */
class RcQp : public QueuePair
{
  public:
    /** @brief Work request verbs. */
    enum class Verb
    {
        SEND,
        WRITE,
        READ,
    };

    static TypeId GetTypeId();
    RcQp();
    ~RcQp() override;

    /**
     * Connect to the peer QP.
     * @param remoteHost the peer's host id
     * @param remoteQpn the peer's QP number
     * @param remoteRegionBytes size of the region the peer registered (WRITE/READ targets)
     */
    void Connect(uint32_t remoteHost, uint32_t remoteQpn, uint64_t remoteRegionBytes);

    /** A WRITE's source and a READ's destination: the same offset as the remote one. */
    static constexpr uint64_t SAME_OFFSET = UINT64_MAX;

    /**
     * Post a send work request.
     * @param localOffset where a WRITE's bytes come from and a READ's go in this host's region
     *        (verify mode); SAME_OFFSET: remoteOffset
     * @throws std::invalid_argument for a 0-byte WRITE or READ (a 0-byte SEND is one packet),
     * a target outside the peer's region, or an unconnected QP
     */
    void PostSend(Verb verb,
                  uint64_t bytes,
                  uint64_t remoteOffset,
                  uint64_t wrId,
                  bool withImm,
                  uint32_t imm,
                  uint64_t localOffset = SAME_OFFSET);
    /** Post n receive work requests (consumed by SENDs and WRITEs with immediate). */
    void PostRecv(uint32_t n);
    /**
     * Carry this QP's SENDs and WRITEs in `lines` (both QPs of a pair, before the first post):
     * each packet holds whole lines of the message, PerPacket(MTU) bytes of it at most.
     * @throws std::invalid_argument for data >= bytes, data 0, or a line longer than the MTU
     */
    void SetLines(ProtocolLines lines);

    bool HasPacket() const override;
    bool HasWork() const override;
    OutgoingPacket NextPacket() override;
    void Receive(Ptr<Packet> packet, const TransportHeader& h, uint32_t payloadBytes) override;
    bool GetPeer(uint32_t& host, uint32_t& qpn) const override;

    /** The fields of RcQp::Counters, in order: X(member, initial, python_name). */
#define MCSIM_RC_QP_COUNTERS(X)                                                                    \
    /* packets sent (data, requests, responses, ACKs) */                                           \
    X(txPackets, 0, "tx_packets")                                                                  \
    /* payload bytes sent */                                                                       \
    X(txPayload, 0, "tx_payload")                                                                  \
    /* requester packets sent again (go-back-N) */                                                 \
    X(retransmits, 0, "retransmits")                                                               \
    /* sequence-error NAKs received (explicit ones) */                                             \
    X(naksReceived, 0, "naks_received")                                                            \
    /* receiver-not-ready NAKs received */                                                         \
    X(rnrNaksReceived, 0, "rnr_naks_received")                                                     \
    /* retransmission timeouts */                                                                  \
    X(timeouts, 0, "timeouts")                                                                     \
    /* ACKs sent (NAKs included) */                                                                \
    X(acksSent, 0, "acks_sent")                                                                    \
    /* NAKs sent */                                                                                \
    X(naksSent, 0, "naks_sent")                                                                    \
    /* payload bytes accepted in order (responder + READ data) */                                  \
    X(rxPayload, 0, "rx_payload")                                                                  \
    /* packets received twice (dropped, re-ACKed) */                                               \
    X(duplicates, 0, "duplicates")                                                                 \
    /* packets received ahead of the expected PSN (dropped) */                                     \
    X(outOfSequence, 0, "out_of_sequence")                                                         \
    /* implied NAKs: a READ missed responses and was re-issued */                                  \
    X(readGaps, 0, "read_gaps")                                                                    \
    /* send work requests completed */                                                             \
    X(completed, 0, "completed")                                                                   \
    /* retries exhausted: the QP went to the error state */                                        \
    X(errors, 0, "errors")

    /** @brief Per-QP counters, read in bulk after the run. */
    struct Counters
    {
        MCSIM_COUNTERS(MCSIM_RC_QP_COUNTERS)
    };

    static constexpr uint32_t NUM_COUNTERS = Counters::COUNT;
    const Counters& GetCounters() const;

    /** "RetryCount" that never gives up (not an IB setting). */
    static constexpr uint32_t RETRY_FOREVER = UINT32_MAX;

  protected:
    void DoDispose() override;
    void OnReceiveProcessed(const Completion& c) override;

  private:
    friend class RcResponder; // its half: counters, NIC, Build, AckInterval

    struct Wqe
    {
        Verb verb;
        bool withImm;
        uint32_t imm;
        uint64_t wrId;
        uint64_t bytes;
        uint64_t remoteOffset;
        uint64_t localOffset; //!< a WRITE's source, a READ's destination (this host's region)
        uint32_t firstPsn;
        uint32_t npkts;
        bool readRequested; //!< READ: counted in m_outstandingReads
        Time visible;       //!< its first byte may leave then (Nic::Doorbell)
    };

    uint32_t Packets(uint64_t bytes) const;
    /** The message bytes in one SEND or WRITE packet: the MTU, or its whole lines (SetLines). */
    uint32_t DataMtu() const;
    std::size_t FindWqe(uint32_t psn) const; //!< index in m_sq, or m_sq.size()
    OutgoingPacket NextRequesterPacket();
    OutgoingPacket Build(TransportHeader& h,
                         uint32_t payload,
                         const uint8_t* data = nullptr,
                         uint32_t padBytes = 0);
    void HandleAck(const TransportHeader& h);
    void HandleReadResponse(Ptr<Packet> packet, const TransportHeader& h, uint32_t payload);
    /** Acknowledge SEND/WRITE PSNs below limit and complete what is done; stops at a READ. */
    void Acknowledge(uint32_t limit);
    void Progress(); //!< m_una moved: retries back, the local ACK timer starts again
    /** An ACK or response acknowledged up to limit: past m_una means a READ lost responses. */
    void CheckImpliedNak(uint32_t limit);
    /** Retry from m_una (NAK or implied NAK), once per PSN, using up one retry. */
    void Retry();
    bool UseRetry(uint32_t& used, uint32_t limit); //!< false (and the error state) when exhausted
    void GoBack(uint32_t psn);
    void ArmTimer();
    void OnTimeout();

    uint32_t m_ackInterval; //!< "AckInterval"
    Time m_timeout;         //!< "LocalAckTimeout" (0: never)
    uint32_t m_retryCount;  //!< "RetryCount"
    uint32_t m_rnrRetry;    //!< "RnrRetry" (7: for ever)
    uint32_t m_maxReads;    //!< "MaxOutstandingReads"
    Time m_rnrDelay;        //!< "RnrDelay"
    ProtocolLines m_lines;  //!< SetLines (none by default)
    uint32_t m_mtu = 0; //!< DataMtu() at the last PostSend: the requester's packets' message bytes

    bool m_connected;
    uint32_t m_remoteHost;
    uint32_t m_remoteQpn;
    uint64_t m_remoteRegion;
    // requester
    std::deque<Wqe> m_sq;              //!< incomplete work requests, oldest first
    mutable std::size_t m_wqeHint = 0; //!< FindWqe's last answer (a guess it checks first)
    uint32_t m_nextPsn;                //!< next PSN to assign to a new work request
    uint32_t m_txPsn;                  //!< next PSN to transmit
    uint32_t m_sentEnd;                //!< one past the highest PSN ever transmitted
    uint32_t m_una; //!< the expected response PSN: every PSN below is acknowledged
    uint32_t m_outstandingReads;
    uint32_t m_retries;    //!< retries since the last progress (timeouts, NAKs)
    uint32_t m_rnrRetries; //!< RNR NAKs since the last progress
    uint32_t m_retriedAt;  //!< the PSN a NAK last sent the requester back to, + 1 (0: none)
    Time m_progressAt;     //!< the local ACK timer runs from here (last progress or retry)
    Time m_rnrUntil;
    mutable bool m_windowShut = false; //!< HPCC: HasPacket found its window in flight
    bool m_error;
    /** the local ACK timer, at most one pending: it re-checks m_progressAt when it fires */
    ProtocolTimer<RcQp, &RcQp::OnTimeout> m_timer;
    RcResponder m_responder; //!< the responder half
    Counters m_counters;
};

} // namespace mcsim
} // namespace ns3
