// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "credit-account.h"
#include "drop-cause.h"
#include "ecn.h"
#include "int-store.h"
#include "link-faults.h"
#include "owned-packet.h"
#include "packet-receiver.h"
#include "pfc-port.h"
#include "port-queue.h"

#include "ns3/attribute.h"
#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/event-impl.h"
#include "ns3/mcsim/counter-table.h"
#include "ns3/mcsim/event-order.h"
#include "ns3/mcsim/fifo.h"
#include "ns3/mcsim/flagged-trace.h"
#include "ns3/mcsim/reusable-event.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/packet.h"
#include "ns3/traced-callback.h"

#include <cstdint>

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
    PFC,      //!< Priority Flow Control: a port's peer pauses it when its ingress queue fills
};

/** The checker of a FlowControl attribute (Port's and Fabric's "FlowControl"): its names. */
Ptr<const AttributeChecker> MakeFlowControlChecker();

/** A per-packet trace of a port or a NIC ("Tx", "Rx": the packet, its fields, node, port or
 * QP), whose sinks set a bit of its owner's flag word (FlaggedTrace). */
using PacketTrace =
    FlaggedTrace<Ptr<const Packet>, const FabricHeader::Fields&, uint32_t, uint32_t>;

/** @brief Told when a packet that had to wait for credits starts its journey (a source). */
class PortWaker
{
  public:
    virtual ~PortWaker() = default;
    /** The packet was committed; its last bit leaves at departure. */
    virtual void Wake(Time departure) = 0;

    /** The packet WakeAtHandover registered for was handed to the peer (see there). */
    virtual void HandedOver()
    {
    }
};

/**
 * @brief The transmit side of one direction of a full-duplex link, with its output queue.
 *
 * The port composes its queue (PortQueue), its credits (CreditAccount), its link's faults
 * (LinkFaults) and its Priority Flow Control (PfcPort); it decides when a packet goes and
 * schedules the events.
 *
 * The model: fabric/doc/fabric.md, "Port".
 */
class Port : public Object, private PfcTransmitter
{
  public:
    static TypeId GetTypeId();
    /** Signature of the "Tx" and "Rx" trace sources. */
    typedef void (*PacketTracedCallback)(Ptr<const Packet> packet,
                                         const FabricHeader::Fields& fields,
                                         uint32_t node,
                                         uint32_t port);
    /** Signature of the "PfcTx" and "PfcRx" trace sources: node, port, pause time in quanta. */
    typedef void (*PfcTracedCallback)(uint32_t node, uint32_t port, uint32_t quanta);
    /** Signature of the "Drop" trace source. */
    typedef void (*DropTracedCallback)(Ptr<const Packet> packet,
                                       const FabricHeader::Fields& fields,
                                       uint32_t node,
                                       uint32_t port,
                                       DropCause cause);
    Port();
    ~Port() override;

    /** "BufferBytes" and "CreditBytes" (and Fabric's buffers): 256 KiB (fabric/doc/fabric.md). */
    static constexpr uint64_t DEFAULT_BUFFER_BYTES = 256 * 1024;
    /** "HeaderBytes": an InfiniBand RC packet's 26 header bytes less the FabricHeader's 16. */
    static constexpr uint32_t DEFAULT_HEADER_BYTES = 26 - FabricHeader::SERIALIZED_BYTES;
    /** "PfcResumeOffsetBytes": two 4 KiB frames (fabric/doc/fabric.md, "Priority Flow Control"). */
    static constexpr uint64_t DEFAULT_PFC_RESUME_OFFSET_BYTES = 2 * 4096;

    /**
     * Connect this port to the receiver at the far end of its link (a raw back-pointer: the
     * fabric owns both objects).
     * @throws std::invalid_argument for a null peer or inconsistent attributes
     */
    void Connect(PacketReceiver* peer, uint32_t peerPort);

    /**
     * Queue a packet.
     * @param packet the packet (its whole size goes on the wire, plus HeaderBytes)
     * @param fields its FabricHeader, carried beside it to the peer
     * @param earliest it may not start before this time (the switch latency)
     * @param credit whose ingress credit to return when it has left
     * @param waker told when the packet is committed if it had to wait (may be null)
     * @return the time its last bit leaves, or Time(-1) if it waits for credits or was dropped
     */
    Time Send(const Ptr<Packet>& packet,
              const FabricHeader::Fields& fields,
              Time earliest,
              CreditReturn credit,
              PortWaker* waker)
    {
        if (!m_rewrite)
        {
            return SendFields(packet, fields, earliest, credit, waker);
        }
        FabricHeader::Fields f = fields;
        if (m_lossyClass)
        {
            f.SetLossy();
        }
        EcnStamp(f);
        return SendFields(packet, f, earliest, credit, waker);
    }

    /**
     * If the packet committed last is handed to the peer no later than its last bit leaves (a
     * cut-through peer takes it once its header is in, and the packet is longer than the header
     * plus the link delay), call waker->HandedOver() at that handover, in its arrival event, and
     * return true; else return false. One registration at a time (a NIC's next pick).
     */
    bool WakeAtHandover(PortWaker* waker);

    /** Credits come back to this port at time at (>= Now()), for its next packets. */
    void ReturnCredit(Time at, uint32_t wireBytes);

    /**
     * The peer is a cut-through switch that acts on a packet once its first `bytes` wire bytes
     * have arrived (its routing header); 0 (the default): once its last bit has (a host, or a
     * store-and-forward switch). Setup, before Connect.
     */
    void SetCutThroughBytes(uint32_t bytes);

    /**
     * How long before its last bit arrives a packet of packetBytes is handed to the peer: the
     * serialization of the bytes after the first CutThroughBytes; 0 without cut-through.
     */
    Time GetHandoverLead(uint32_t packetBytes) const
    {
        if (m_cutThroughBytes == 0)
        {
            return Time(0);
        }
        const Time tx = GetTxTime(packetBytes);
        return tx > m_headTime ? tx - m_headTime : Time(0);
    }

    Time GetTxTime(uint64_t packetBytes) const;        //!< serialization time, HeaderBytes included
    uint32_t GetWireBytes(uint32_t packetBytes) const; //!< packet size plus HeaderBytes
    uint64_t GetDataRateBps() const;                   //!< data rate after encoding, rounded down
    Time GetDelay() const;                             //!< propagation delay
    Time GetBusyUntil() const;                         //!< when the last committed bit leaves

    /**
     * Credit bytes this port holds now or will get back (returned but not yet due): equal to
     * CreditBytes once its peer's ingress buffer is empty (LOSSLESS); 0 for a LOSSY port.
     */
    uint64_t GetCreditsHeld() const;

    /** The fields of Port::Counters, in order: X(member, initial, python_name). */
#define MCSIM_PORT_COUNTERS(X)                                                                     \
    /* packets sent */                                                                             \
    X(txPackets, 0, "tx_packets")                                                                  \
    /* packet bytes sent (HeaderBytes excluded) */                                                 \
    X(txBytes, 0, "tx_bytes")                                                                      \
    /* bytes on the wire */                                                                        \
    X(txWireBytes, 0, "tx_wire_bytes")                                                             \
    /* tail drops (LOSSY; PFC: of the lossy class) */                                              \
    X(dropPackets, 0, "drop_packets")                                                              \
    /* bytes tail-dropped */                                                                       \
    X(dropBytes, 0, "drop_bytes")                                                                  \
    /* most wire bytes queued (committed not departed + waiting) */                                \
    X(maxQueueBytes, 0, "max_queue_bytes")                                                         \
    /* total serialization time */                                                                 \
    X(busyPs, 0, "busy_ps")                                                                        \
    /* packets held back by missing credits (LOSSLESS) */                                          \
    X(creditStalls, 0, "credit_stalls")                                                            \
    /* lost on the wire at random (LossProbability) */                                             \
    X(lossPackets, 0, "loss_packets")                                                              \
    /* lost on the wire because chosen (SetChosenDrops) */                                         \
    X(chosenDrops, 0, "chosen_drops")                                                              \
    /* lost on the wire because they arrived while it was down */                                  \
    X(linkDownDrops, 0, "link_down_drops")

    /** @brief Counters of one port, read in bulk after the run. */
    struct Counters
    {
        MCSIM_COUNTERS(MCSIM_PORT_COUNTERS)
    };

    static constexpr uint32_t NUM_COUNTERS = Counters::COUNT; //!< fields of Counters, in order

    const Counters& GetCounters() const;

    /** Its Priority Flow Control (FlowControl::PFC; its counters are all 0 otherwise): counters,
     * thresholds in force, the watchdog (setup). */
    PfcPort& GetPfc()
    {
        return m_pfc;
    }

    const PfcPort& GetPfc() const
    {
        return m_pfc;
    }

    uint32_t GetNode() const;  //!< SetLocation's node
    uint32_t GetIndex() const; //!< SetLocation's port
    /** PFC: every packet this port sends goes in the lossy traffic class (Fields::SetLossy: but
     * contributions to an in-network reduction; a host's port; fabric.md, "Traffic classes").
     * Setup, before the run. */
    void SetLossyClass(bool lossy);

    // Fabric setup (all of them before Connect).
    /** Where this port is: port `port` of node `node` (what its trace sources report, and the
     * key of its events in the canonical same-time order). */
    void SetLocation(uint32_t node, uint32_t port);
    void SetFlowControl(FlowControl mode);
    void SetBufferBytes(uint64_t bytes);
    void SetCreditBytes(uint64_t bytes);
    /** The port at the far end of this port's link (PFC: it sends what arrives here, and gets
     * this port's PFC frames). */
    void SetReverse(Port* reverse);
    /**
     * ECN (fabric.md, "ECN"): `mark`, RED-mark the ECN-capable packets its output queue takes (a
     * switch's port); `stamp`, make the packets it sends ECN-capable, ECT(0) (a host's port);
     * `seed` keys its marking draws. Setup, before Connect.
     */
    void SetEcn(bool mark, bool stamp, uint64_t seed);
    const EcnCounters& GetEcnCounters() const;
    /**
     * INT (fabric.md, "INT"): the fabric's records of the packets in flight; `push`, add this
     * port's hop to every packet that asks for INT as it is committed (a switch's port). Setup.
     */
    void SetIntStore(IntStore* store, bool push);
    IntStore* GetIntStore() const; //!< SetIntStore's (null before)
    const IntCounters& GetIntCounters() const;
    uint64_t GetEcnKminBytes() const; //!< in force (after Connect)
    uint64_t GetEcnKmaxBytes() const; //!< in force (after Connect)
    /** The output queue's wire bytes at `at` as RED reads them (queued and waiting), changing
     * nothing: `at` between the last event run and the next (a Watcher's look). */
    uint64_t GetQueueBytesAt(Time at) const;

    // Faults (setup, before the run).
    /**
     * Probability that a packet sent on this port is lost on the wire ("LossProbability"); p > 0
     * creates the port's uniform random variable: give it a stream with AssignStreams afterwards.
     * @throws std::invalid_argument unless 0 <= p < 1
     */
    void SetLossProbability(double p);
    double GetLossProbability() const;
    /**
     * Give the loss random variable (if any) the stream `stream`; it draws from the RngSeed and
     * RngRun set at this call.
     * @return streams used: 1 if the port has a loss random variable, else 0
     * @throws std::invalid_argument for a negative stream
     */
    int64_t AssignStreams(int64_t stream);
    /**
     * Lose the packets with these 0-based indexes in the order they were committed on this port
     * (any order, duplicates ignored); replaces an earlier list.
     */
    void SetChosenDrops(const uint64_t* indexes, std::size_t n);
    /**
     * The link (this direction) is down during [down, up) ps for each of the n rows (down, up) of
     * downUpPs: a packet whose last bit would arrive then is lost. Rows in any order; overlapping
     * intervals merge. Replaces an earlier list.
     * @throws std::invalid_argument for down < 0 or up <= down
     */
    void SetDownIntervals(const int64_t* downUpPs, std::size_t n);

  protected:
    void DoDispose() override;

  private:
    /** m_rewrite from what changes the fields (SetEcn, SetLossyClass). */
    void UpdateRewrite()
    {
        m_rewrite = m_ecn.mark || m_ecn.stamp || m_lossyClass;
    }

    /** Send with the fields as they go on (in its class, ECN stamped or marked). */
    Time SendFields(const Ptr<Packet>& packet,
                    const FabricHeader::Fields& fields,
                    Time earliest,
                    CreditReturn credit,
                    PortWaker* waker);
    /** Whether a packet of `wire` bytes overflows BufferBytes beside `queued`: if so, drop it
     * (counted and traced as a tail drop). */
    bool TailDrops(const Ptr<Packet>& packet,
                   const FabricHeader::Fields& fields,
                   uint32_t wire,
                   uint64_t queued);
    /** ECT(0) on a host's port; RED's draw on a switch's (its queue as the packet joins it). */
    void EcnStamp(FabricHeader::Fields& f);
    /** The packet of `wire` bytes committed to start at `start`, which it could have from
     * `earliest`, asks for INT: add this port's hop. */
    void IntPush(const FabricHeader::Fields& f, Time start, Time earliest, uint32_t wire);

    /** Put the packet on the wire (this port now holds it until its arrival). */
    Time Commit(OwnedPacket packet,
                const FabricHeader::Fields& fields,
                Time earliest,
                CreditReturn credit,
                Time now);
    void Arrive();
    /** A packet's earliest start given when its credits are ready; counts a stall if they set it.
     */
    Time CreditReady(Time earliest, Time ready, Time now);
    void DrainWaiting();
    void CreditEvent();
    /** Credits come back at `at`; via: see CreditAccount::Pending. */
    void AddPendingCredit(Time at, uint32_t wireBytes, Port* via);
    /** The packet in flight handed over at `handover` calls to->CreditDue() then. */
    void AttachCreditDue(Time handover, Port* to);
    void CreditDue();
    /** Return the ingress credit of a packet this port sends to `to`, at departure + to's delay
     * (PFC: it leaves to's peer's ingress queue at its start). */
    void ReturnCreditFor(Port* to, Time departure, uint32_t wireBytes, Time start);
    /** Make sure the head waiting packet is told when its credits are there. */
    void ScheduleCreditEvent();
    /**
     * Whether the packet handed over now, the index-th committed (0-based), whose last bit
     * arrives at `arrival`, is lost on the wire (counted, traced; its credit returned).
     */
    bool LoseAtArrival(const Ptr<Packet>& packet,
                       const FabricHeader::Fields& fields,
                       Time arrival,
                       uint64_t index);

    // PFC's side of the port (port-pfc.cc; the rest is PfcPort's)
    /** Send on a PFC port: commit now if the frame may start (PfcPort::MayStart), else wait. */
    Time SendPfc(const Ptr<Packet>& packet,
                 const FabricHeader::Fields& fields,
                 Time earliest,
                 CreditReturn credit,
                 PortWaker* waker,
                 uint32_t wire,
                 Time now);
    /** Send what waits while PfcPort::MayStart, the lossless class first; else ask for a wake for
     * when a frame may (PfcTransmitter). */
    void PfcDrain() override;
    /** Start the head of a class's waiting packets if it may; else bring `wake` down to when it
     * should be looked at again (none while an XOFF is on its way: its arrival looks). */
    bool PfcDrainOne(bool lossy, Time now, Time& wake);
    /** A PFC frame of wire time tx takes the wire at the next frame boundary (PfcTransmitter). */
    Time StartPfcFrame(Time tx) override;
    /** GetTypeId's PFC attributes ("PfcXoffBytes", ...) and trace sources ("PfcTx", "PfcRx"). */
    static TypeId AddPfcAttributes(TypeId tid);

    static constexpr uint64_t NO_TX_CACHE = static_cast<uint64_t>(-1); //!< m_txCacheBytes: none

    /** Accessors of the attributes the serialization time depends on ("DataRate",
     * "EncodingDataBits", "EncodingLineBits", "HeaderBytes"): setting one drops the cached time. */
    template <typename T, T Port::*Member>
    void SetLine(T value)
    {
        this->*Member = value;
        m_txCacheBytes[0] = m_txCacheBytes[1] = NO_TX_CACHE;
    }

    template <typename T, T Port::*Member>
    T GetLine() const
    {
        return this->*Member;
    }

    /** Accessors of the ECN attributes ("EcnKminBytes", ...). */
    template <typename T, T EcnState::*Member>
    void SetEcnField(T value)
    {
        m_ecn.*Member = value;
    }

    template <typename T, T EcnState::*Member>
    T GetEcnField() const
    {
        return m_ecn.*Member;
    }

    /** Accessors of the PFC attributes ("PfcXoffBytes", ...). */
    template <typename T, T PfcPort::Settings::*Member>
    void SetPfcField(T value)
    {
        m_pfc.GetSettings().*Member = value;
    }

    template <typename T, T PfcPort::Settings::*Member>
    T GetPfcField() const
    {
        return m_pfc.GetSettings().*Member;
    }

    // Hot: what every packet's Send, Commit and Arrive read and write, in the first cache lines
    // of the object (a port is touched once or twice per packet, mostly cold: the fewer lines,
    // the fewer misses): line 1 the link and the flags, line 2 the arrival's event, then the
    // queue's and the credits' hot fields and the counters a packet adds to. Cold: the line
    // attributes (read when the cached serialization time misses), the trace lists, the buffer
    // sizes, location, faults, PFC, ECN, INT.
    PacketReceiver* m_peer;
    uint32_t m_peerPort;
    FlowControl m_mode;         //!< "FlowControl"
    uint32_t m_headerBytes;     //!< "HeaderBytes": wire bytes per packet beyond its size
    uint32_t m_cutThroughBytes; //!< the peer acts on a packet after these bytes (0: the last bit)
    bool m_faulty;              //!< m_faults.Any() (the hot path's one branch)
    bool m_intPush = false;     //!< SetIntStore's push (Commit's one branch)
    bool m_rewrite = false;     //!< ECN on, or m_lossyClass: the fields change (Send's one branch)
    uint8_t m_traced = 0;       //!< TRACED_TX | TRACED_RX: "Tx" / "Rx" have sinks (FlaggedTrace)
    Time m_headTime;            //!< serialization of m_cutThroughBytes (set at Connect)
    Time m_delay;               //!< "Delay": propagation delay
    Time m_busyUntil;
    /** The last two sizes GetTxTime computed, the latest first (NO_TX_CACHE: none; a port sends
     * mostly two sizes: data and ACKs) ... */
    mutable uint64_t m_txCacheBytes[2];
    /** Every arrival's event, inside the port (the simulator reads it at each arrival); the port
     * holds a reference to it, so the simulator never deletes it, and DoDispose() drops that. */
    ReusableEvent<Port, &Port::Arrive> m_arrivalImpl;
    Ptr<EventImpl> m_arrivalEvent; //!< &m_arrivalImpl
    EventSource m_arrivalSource;   //!< its order: (ARRIVAL, node, port)
    mutable Time m_txCacheTime[2]; //!< ... and their results (each skips a 128-bit division)
    PortWaker* m_handoverWaker;    //!< WakeAtHandover's registration, or null ...
    uint64_t m_handoverIndex;      //!< ... for the packet committed as this one (0-based)
    PortQueue m_queue;             //!< waiting for credits, then in flight
    CreditAccount m_credit;        //!< LOSSLESS credits for the peer's ingress buffer
    Counters m_counters;

    PacketTrace m_txTrace; //!< "Tx"
    PacketTrace m_rxTrace; //!< "Rx"
    TracedCallback<Ptr<const Packet>, const FabricHeader::Fields&, uint32_t, uint32_t, DropCause>
        m_dropTrace; //!< "Drop"

    uint32_t m_node;              //!< node of this port (traces)
    uint32_t m_index;             //!< this port's number on its node (traces)
    DataRate m_rate;              //!< "DataRate": signalling rate
    uint32_t m_encodingDataBits;  //!< "EncodingDataBits"
    uint32_t m_encodingLineBits;  //!< "EncodingLineBits"
    uint64_t m_bufferBytes;       //!< "BufferBytes": output buffer (LOSSY)
    uint64_t m_creditBytes;       //!< "CreditBytes": peer ingress buffer (LOSSLESS)
    Ptr<EventImpl> m_creditEvent; //!< reused for every credit event (never cancelled)
    EventSource m_creditSource;   //!< its order: (TRANSMIT, node, port)
    LinkFaults m_faults;          //!< "LossProbability", chosen drops, down intervals
    PfcPort m_pfc;                //!< FlowControl::PFC; "Pfc..." attributes
    bool m_lossyClass = false;    //!< SetLossyClass
    EcnState m_ecn;
    IntStore* m_intStore = nullptr; //!< not owned (the fabric's)
    IntCounters m_intCounters;
    PfcPort::FrameTrace m_pfcTxTrace; //!< "PfcTx" (m_pfc fires it)
    PfcPort::FrameTrace m_pfcRxTrace; //!< "PfcRx" (m_pfc fires it)
};

} // namespace mcsim
} // namespace ns3
