// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "packet-receiver.h"

#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/event-impl.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/packet.h"

#include <cstdint>
#include <deque>
#include <vector>

namespace ns3
{
namespace mcsim
{

class Port;

/** @brief Link-level flow control of every port of a fabric. */
enum class FlowControl
{
    LOSSLESS, //!< InfiniBand-style credits: a port sends only when the next hop has room
    LOSSY,    //!< tail drop when an output buffer is full
};

/** @brief Told when a packet that had to wait for credits starts its journey (a source). */
class PortWaker
{
  public:
    virtual ~PortWaker() = default;
    /** The packet was committed; its last bit leaves at departure. */
    virtual void Wake(Time departure) = 0;
};

/**
 * @brief A replicated (multicast) packet's ingress credit: returned once, after its last copy
 * leaves the switch. Owned by itself: deleted when the last copy has been accounted for.
 */
struct SharedCredit
{
    Port* to;            //!< the upstream port to credit
    uint32_t wireBytes;  //!< bytes the packet took on the upstream link
    uint32_t copiesLeft; //!< copies not yet departed
    Time latest;         //!< latest departure so far
};

/** @brief Where a packet's ingress buffer credit goes when it leaves; nothing by default. */
struct CreditReturn
{
    Port* to = nullptr;              //!< upstream port (unicast), or null
    SharedCredit* shared = nullptr;  //!< or a shared credit (multicast copies)
};

/**
 * @brief The transmit side of one direction of a full-duplex link, with its output queue.
 *
 * Serialization: a packet occupies the wire for (size + HeaderBytes) * 8 bits at the data rate,
 * which is the signalling DataRate times EncodingDataBits / EncodingLineBits (FDR InfiniBand:
 * 56.25 Gbit/s and 64b/66b give 54.55 Gbit/s); computed in integer ps and rounded up. Packets
 * leave in FIFO order and arrive at the peer Delay after their last bit left.
 *
 * Flow control: LOSSLESS ports hold credits for the peer's ingress buffer (CreditBytes); a packet
 * is committed to the wire only when the credits for it are there, else it waits in the queue;
 * the peer gives the credits back when the packet has left it (plus one link delay). LOSSY ports
 * tail-drop a packet that does not fit into BufferBytes of queued bytes.
 *
 * Speed: one event per packet (its arrival). A committed packet's start time is known at once
 * (busy-until), returned credits are applied lazily, and an event for credits is scheduled only
 * while packets are blocked on them.
 */
class Port : public Object
{
  public:
    static TypeId GetTypeId();
    Port();
    ~Port() override;

    /**
     * Connect this port to the receiver at the far end of its link (a raw back-pointer: the
     * fabric owns both objects).
     * @throws std::invalid_argument for a null peer or inconsistent attributes
     */
    void Connect(PacketReceiver* peer, uint32_t peerPort);

    /**
     * Queue a packet.
     * @param packet the packet (its whole size goes on the wire, plus HeaderBytes)
     * @param earliest it may not start before this time (the switch latency)
     * @param credit whose ingress credit to return when it has left
     * @param waker told when the packet is committed if it had to wait (may be null)
     * @return the time its last bit leaves, or Time(-1) if it waits for credits or was dropped
     */
    Time Send(Ptr<Packet> packet, Time earliest, CreditReturn credit, PortWaker* waker);

    /** Credits come back to this port at time at (>= Now()), for its next packets. */
    void ReturnCredit(Time at, uint32_t wireBytes);

    Time GetTxTime(uint64_t packetBytes) const;   //!< serialization time, HeaderBytes included
    uint32_t GetWireBytes(uint32_t packetBytes) const; //!< packet size plus HeaderBytes
    uint64_t GetDataRateBps() const;              //!< data rate after encoding, rounded down
    Time GetDelay() const;                        //!< propagation delay
    Time GetBusyUntil() const;                    //!< when the last committed bit leaves

    /** @brief Counters of one port, read in bulk after the run. */
    struct Counters
    {
        uint64_t txPackets = 0;     //!< packets sent
        uint64_t txBytes = 0;       //!< packet bytes sent (HeaderBytes excluded)
        uint64_t txWireBytes = 0;   //!< bytes on the wire
        uint64_t dropPackets = 0;   //!< tail drops (LOSSY)
        uint64_t dropBytes = 0;     //!< bytes tail-dropped
        uint64_t maxQueueBytes = 0; //!< most wire bytes queued (committed not departed + waiting)
        uint64_t busyPs = 0;        //!< total serialization time
        uint64_t creditStalls = 0;  //!< packets that waited for credits (LOSSLESS)
    };
    static constexpr uint32_t NUM_COUNTERS = 8; //!< fields of Counters, in order

    const Counters& GetCounters() const;

    // Fabric setup (all of them before Connect).
    void SetFlowControl(FlowControl mode);
    void SetBufferBytes(uint64_t bytes);
    void SetCreditBytes(uint64_t bytes);

  protected:
    void DoDispose() override;

  private:
    struct Waiting
    {
        Ptr<Packet> packet;
        Time earliest;
        CreditReturn credit;
        PortWaker* waker;
    };

    struct InFlight
    {
        Time arrival;
        Ptr<Packet> packet;
    };

    struct PendingCredit
    {
        Time at;
        uint32_t bytes;
    };

    Time Commit(Ptr<Packet> packet, Time earliest, CreditReturn credit, Time now);
    void Arrive();
    void HarvestCredits(Time now);
    void DrainWaiting();
    void ScheduleCreditEvent();
    void ReleaseQueue(Time now);

    static constexpr uint64_t DEFAULT_BUFFER_BYTES = 256 * 1024;

    DataRate m_rate;             //!< "DataRate": signalling rate
    uint32_t m_encodingDataBits; //!< "EncodingDataBits"
    uint32_t m_encodingLineBits; //!< "EncodingLineBits"
    uint32_t m_headerBytes;      //!< "HeaderBytes": wire bytes per packet beyond its size
    Time m_delay;                //!< "Delay": propagation delay
    FlowControl m_mode;          //!< "FlowControl"
    uint64_t m_bufferBytes;      //!< "BufferBytes": output buffer (LOSSY)
    uint64_t m_creditBytes;      //!< "CreditBytes": peer ingress buffer (LOSSLESS)

    PacketReceiver* m_peer;
    uint32_t m_peerPort;
    Time m_busyUntil;
    int64_t m_credits;                        //!< bytes the peer can still take
    std::deque<Waiting> m_waiting;            //!< blocked on credits, FIFO
    uint64_t m_waitingBytes;
    std::deque<InFlight> m_inFlight;          //!< committed, FIFO by arrival
    std::deque<std::pair<Time, uint32_t>> m_departures; //!< committed, not yet departed
    uint64_t m_queuedBytes;                   //!< wire bytes in m_departures
    std::deque<PendingCredit> m_pending; //!< returned credits not yet usable, sorted by time
    mutable uint64_t m_txCacheBytes;     //!< last size GetTxTime computed, at ...
    mutable uint64_t m_txCacheRate;      //!< ... this rate and ...
    mutable uint64_t m_txCacheLine;      //!< ... this header and encoding (packed) ...
    mutable Time m_txCacheTime;          //!< ... and its result (skips a 128-bit division)
    EventId m_creditEvent;
    Ptr<EventImpl> m_arrivalEvent; //!< reused for every arrival (one allocation per port)
    Counters m_counters;
};

} // namespace mcsim
} // namespace ns3
