// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "queue-pair.h"

#include "ns3/event-id.h"
#include "ns3/nstime.h"

#include <cstdint>
#include <deque>

namespace ns3
{
namespace mcsim
{

/**
 * @brief Reliable Connected QP: SEND/RECV, RDMA WRITE (with or without immediate), RDMA READ.
 *
 * Requester: every packet has a PSN (a READ request takes the PSNs of its responses); packets
 * stay unacknowledged until a cumulative ACK; a NAK (PSN sequence error at the responder) or a
 * retransmission timeout goes back N to the first unacknowledged PSN; a missing READ response
 * re-issues the READ from the missing PSN; at most MaxOutstandingReads READs are in flight.
 * Responder: accepts only the expected PSN, ACKs every AckInterval packets and the last packet of
 * a message (coalesced), NAKs once per sequence error, re-ACKs duplicates, serves READs (also
 * duplicate ones), and RNR-NAKs a SEND or a WRITE with immediate when no receive is posted.
 * PSNs are 32-bit and never wrap within a run.
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

    /**
     * Post a send work request.
     * @throws std::invalid_argument for a 0-byte WRITE or READ (a 0-byte SEND is one packet),
     * a target outside the peer's region, or an unconnected QP
     */
    void PostSend(Verb verb, uint64_t bytes, uint64_t remoteOffset, uint64_t wrId, bool withImm,
                  uint32_t imm);
    /** Post n receive work requests (consumed by SENDs and WRITEs with immediate). */
    void PostRecv(uint32_t n);

    bool HasPacket() const override;
    Ptr<Packet> NextPacket() override;
    void Receive(Ptr<Packet> packet, const TransportHeader& h, uint32_t payloadBytes) override;
    void OnProcessed(const Completion& c) override;

    /** @brief Per-QP counters, read in bulk after the run. */
    struct Counters
    {
        uint64_t txPackets = 0;       //!< packets sent (data, requests, responses, ACKs)
        uint64_t txPayload = 0;       //!< payload bytes sent
        uint64_t retransmits = 0;     //!< requester packets sent again (go-back-N)
        uint64_t naksReceived = 0;    //!< sequence-error NAKs received
        uint64_t rnrNaksReceived = 0; //!< receiver-not-ready NAKs received
        uint64_t timeouts = 0;        //!< retransmission timeouts
        uint64_t acksSent = 0;        //!< ACKs sent (NAKs included)
        uint64_t naksSent = 0;        //!< NAKs sent
        uint64_t rxPayload = 0;       //!< payload bytes accepted in order (responder + READ data)
        uint64_t duplicates = 0;      //!< packets received twice (dropped, re-ACKed)
        uint64_t outOfSequence = 0;   //!< packets received ahead of the expected PSN (dropped)
        uint64_t readGaps = 0;        //!< READ responses missing: READ re-issued
        uint64_t completed = 0;       //!< send work requests completed
        uint64_t errors = 0;          //!< RetryLimit exceeded: the QP stopped
    };
    static constexpr uint32_t NUM_COUNTERS = 14;
    const Counters& GetCounters() const;

  protected:
    void DoDispose() override;

  private:
    struct Wqe
    {
        Verb verb;
        bool withImm;
        uint32_t imm;
        uint64_t wrId;
        uint64_t bytes;
        uint64_t remoteOffset;
        uint32_t firstPsn;
        uint32_t npkts;
        uint32_t readRecvd;      //!< READ: responses accepted
        bool readRequested;      //!< READ: counted in m_outstandingReads
        uint32_t readReissuedAt; //!< READ: the PSN a gap last re-issued it from
    };

    struct Control
    {
        uint32_t psn;
        uint8_t flags;
    };

    struct ReadJob
    {
        uint32_t firstPsn;
        uint32_t npkts;
        uint64_t bytes;
        uint32_t sent;
        uint64_t offset; //!< in this (the responder's) region
    };

    uint32_t Packets(uint64_t bytes) const;
    std::size_t FindWqe(uint32_t psn) const; //!< index in m_sq, or m_sq.size()
    Ptr<Packet> NextRequesterPacket();
    Ptr<Packet> Build(TransportHeader& h, uint32_t payload, const uint8_t* data = nullptr);
    void HandleAck(const TransportHeader& h);
    void HandleReadResponse(Ptr<Packet> packet, const TransportHeader& h, uint32_t payload);
    void HandleRequest(Ptr<Packet> packet, const TransportHeader& h, uint32_t payload);
    void Acknowledge(uint32_t upTo);
    void GoBack(uint32_t psn);
    void QueueControl(uint32_t psn, uint8_t flags);
    void ArmTimer();
    void OnTimeout();
    void Deliver(const TransportHeader& h);

    uint32_t m_ackInterval;      //!< "AckInterval"
    Time m_timeout;              //!< "RetransmitTimeout"
    uint32_t m_retryLimit;       //!< "RetryLimit"
    uint32_t m_maxReads;         //!< "MaxOutstandingReads"
    Time m_rnrDelay;             //!< "RnrDelay"

    bool m_connected;
    uint32_t m_remoteHost;
    uint32_t m_remoteQpn;
    uint64_t m_remoteRegion;
    // requester
    std::deque<Wqe> m_sq;        //!< incomplete work requests, oldest first
    uint32_t m_nextPsn;          //!< next PSN to assign to a new work request
    uint32_t m_txPsn;            //!< next PSN to transmit
    uint32_t m_sentEnd;          //!< one past the highest PSN ever transmitted
    uint32_t m_una;              //!< every PSN below is acknowledged
    uint32_t m_outstandingReads;
    uint32_t m_retries;
    Time m_rnrUntil;
    bool m_error;
    EventId m_timer;
    // responder
    uint32_t m_ePsn;             //!< expected PSN
    bool m_nakSent;              //!< a NAK for m_ePsn is out
    uint32_t m_unacked;          //!< packets accepted since the last ACK
    uint64_t m_msgBytes;         //!< bytes of the message being received
    uint64_t m_msgOffset;        //!< its place in the region (a WRITE's RETH)
    uint32_t m_postedRecvs;
    std::deque<Control> m_control; //!< ACKs and NAKs to send
    std::deque<ReadJob> m_reads;   //!< READ responses to send
    Counters m_counters;
};

} // namespace mcsim
} // namespace ns3
