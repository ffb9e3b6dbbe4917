// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "blank-packets.h"
#include "completion-processor.h"
#include "queue-pair.h"
#include "transport-header.h"
#include "wire-format.h"

#include "ns3/event-impl.h"
#include "ns3/mcsim/counter-table.h"
#include "ns3/mcsim/event-order.h"
#include "ns3/mcsim/fifo.h"
#include "ns3/mcsim/host.h"
#include "ns3/mcsim/packet-receiver.h"
#include "ns3/mcsim/planned-wake.h"
#include "ns3/mcsim/port.h"
#include "ns3/object-factory.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <array>
#include <cstdint>
#include <vector>

namespace ns3
{
namespace mcsim
{

/** @brief Who processes a NIC's send completions (Nic "SendCompletions"). */
enum class SendCompletions
{
    FREE,     //!< none: the application hears of each at once, at no cost
    SEPARATE, //!< a completion processor of their own (the SC'24 artifact's TX thread)
    SHARED,   //!< the receive completions' processor, in one queue with them
};

/** The fields of CcCounters, in order: X(member, initial, python_name). */
#define MCSIM_CC_COUNTERS(X)                                                                       \
    /* CNPs this NIC sent (its RC QPs got CE-marked packets) */                                    \
    X(cnpTx, 0, "cnp_tx")                                                                          \
    /* CNPs that arrived for its QPs (their rates cut) */                                          \
    X(cnpRx, 0, "cnp_rx")                                                                          \
    /* CE-marked packets its RC QPs got */                                                         \
    X(ceRx, 0, "ce_rx")

/** @brief A NIC's congestion control counters, read in bulk after the run (CNPs: DCQCN only). */
struct CcCounters
{
    MCSIM_COUNTERS(MCSIM_CC_COUNTERS)
};

/**
 * @brief An RDMA NIC on a fabric host: arbitrates among its QPs round-robin, one packet at a
 * time, and demultiplexes received packets to QPs (by QP number, or by multicast group).
 *
 * The model: rdma/doc/rdma.md, "Nic".
 */
class Nic : public Object, public PacketReceiver, public PortWaker
{
  public:
    static TypeId GetTypeId();
    /**
     * Signature of the "Tx" and "Rx" trace sources: the packet, its fields (its header is
     * TransportHeader::FromFields(fields)), this host, the QP number.
     */
    typedef void (*PacketTracedCallback)(Ptr<const Packet> packet,
                                         const FabricHeader::Fields& fields,
                                         uint32_t host,
                                         uint32_t qpn);
    Nic();
    ~Nic() override;

    /**
     * Attach to a fabric host and use this completion processor, and with SendCompletions
     * Separate txProcessor for the send completions.
     * @throws std::invalid_argument without host or processor, or a txProcessor given exactly
     * when SendCompletions is not Separate
     */
    void Attach(Ptr<Host> host,
                Ptr<CompletionProcessor> processor,
                Ptr<CompletionProcessor> txProcessor = nullptr);
    SendCompletions GetSendCompletions() const;

    /** Signalled send completions make CQEs that a processor handles (not SendCompletions Free);
     * asked for every completed send, so inline. */
    bool ProcessesSendCompletions() const
    {
        return m_txProcessor != nullptr;
    }

    /** A signalled send completion (c.send): its CQE reaches the send completion processor
     * ReceiveLatency later (c.ready), in order. Only if ProcessesSendCompletions(). */
    void CompleteSend(Completion c, CompletionSink* sink);
    /** Add a QP; @return its QP number */
    uint32_t AddQp(Ptr<QueuePair> qp, QpOwner* owner);
    Ptr<QueuePair> GetQp(uint32_t qpn) const;
    uint32_t GetNQps() const;
    /** Deliver packets for multicast group g to QP qpn (a UD QP). */
    void AttachMulticast(uint32_t group, uint32_t qpn);

    /** QP qpn has packets to send: start the arbiter if it is idle. */
    void Kick(uint32_t qpn);
    /**
     * A work request was posted now: when the NIC may send its first byte (now + SendLatency:
     * the doorbell, the WQE fetch and the payload's DMA read). The NIC looks at the QPs again
     * then; the QP must not offer the request's packets before.
     */
    Time Doorbell(uint32_t qpn);
    /**
     * A receive completion, its last byte just in: it reaches the completion processor
     * ReceiveLatency later (the payload's and the CQE's DMA writes; c.ready), in arrival order.
     */
    void Complete(Completion c, CompletionSink* sink);

    /**
     * Build a packet of payloadBytes plus the real header bytes of its opcode, with the header
     * as plain data in its fields. Without data (no verify mode) the packet is this NIC's shared
     * read-only packet of that size (BlankPackets): no packet is allocated per packet.
     * @param h the header (srcHost is filled in)
     * @param payloadBytes payload
     * @param data verify mode: the payload's bytes (the packet then has them first)
     * @param padBytes a protocol's flag bytes after the payload (RcQp::SetLines; 0: none)
     * @return the packet with its fabric fields and payloadBytes + padBytes (the payload on the
     * wire, as Receive counts it)
     */
    OutgoingPacket MakePacket(TransportHeader& h,
                              uint32_t payloadBytes,
                              const uint8_t* data = nullptr,
                              uint32_t padBytes = 0);

    /**
     * Verify mode: give this NIC a registered region of real bytes (zeroed). Packets then carry
     * real payloads: a WRITE, READ response or datagram copies bytes out of the region at its
     * local offset (RcQp::PostSend's; by default the remote one) and the receiver copies them
     * into its region at the remote offset.
     */
    void EnableMemory(uint64_t bytes);
    uint64_t GetMemoryBytes() const; //!< the verify-mode region's size (0 without one)
    /** Take packets outside verify mode from this store (an RdmaStack shares one by all NICs;
     * a NIC has its own until then). */
    void ShareBlankPackets(Ptr<BlankPackets> blank);
    bool HasMemory() const;
    /** Bulk access for Python (numpy arrays); throws std::invalid_argument out of range. */
    void WriteMemory(uint64_t offset, const uint8_t* data, std::size_t n);
    void ReadMemory(uint64_t offset, uint8_t* out, std::size_t n) const;
    /** n bytes of the region at offset; throws std::logic_error if they are not all in it (a
     * collective that sized its verify-mode region wrong). */
    uint8_t* Memory(uint64_t offset, uint64_t n);
    /** Copy the payload of a received packet (its first payloadBytes) into the region at offset. */
    void StorePayload(Ptr<const Packet> packet, uint32_t payloadBytes, uint64_t offset);

    void Receive(const Ptr<Packet>& packet,
                 const FabricHeader::Fields& fields,
                 uint32_t inPort) override;
    void Wake(Time departure) override;
    void HandedOver() override;

    uint32_t GetHostId() const;
    Ptr<Port> GetPort() const; //!< its host's port (what goes on the wire)
    uint32_t GetMtuBytes() const;
    WireFormat GetWireFormat() const;
    Ptr<CompletionProcessor> GetProcessor() const;
    /** The Separate send completion processor, or null. */
    Ptr<CompletionProcessor> GetTxProcessor() const;

    /** The fields of Nic::Counters, in order: X(member, initial, python_name). */
#define MCSIM_NIC_COUNTERS(X)                                                                      \
    /* packets sent */                                                                             \
    X(txPackets, 0, "tx_packets")                                                                  \
    /* payload bytes sent */                                                                       \
    X(txPayload, 0, "tx_payload")                                                                  \
    /* packets received */                                                                         \
    X(rxPackets, 0, "rx_packets")                                                                  \
    /* payload bytes received */                                                                   \
    X(rxPayload, 0, "rx_payload")                                                                  \
    /* packets for no QP here (dropped) */                                                         \
    X(unknownQp, 0, "unknown_qp")                                                                  \
    /* RC packets its QPs sent again (go-back-N) */                                                \
    X(retransmits, 0, "retransmits")                                                               \
    /* RC local ACK timeouts of its QPs */                                                         \
    X(rcTimeouts, 0, "rc_timeouts")                                                                \
    /* RC QPs of its that went to the error state (retries exhausted) */                           \
    X(rcErrors, 0, "rc_errors")                                                                    \
    /* send completion CQEs made (SendCompletions Separate or Shared) */                           \
    X(sendCompletions, 0, "send_completions")

    /** @brief NIC counters, read in bulk after the run. */
    struct Counters
    {
        MCSIM_COUNTERS(MCSIM_NIC_COUNTERS)
    };

    static constexpr uint32_t NUM_COUNTERS = Counters::COUNT;
    const Counters& GetCounters() const;
    const CcCounters& GetCcCounters() const;

    // Congestion control (nic-congestion.cc; rdma.md, "Congestion control")
    /** Give each QP a congestion control of this factory's (a CongestionControl's TypeId and
     * attributes); before Attach. Without it every QP sends at the line rate. */
    void SetCongestionControl(const ObjectFactory& factory);
    /** A data packet of qp asks for INT: its handle (0 unless the congestion control uses INT). */
    uint32_t TakeInt(QueuePair* qp);
    /** An INT handle nobody will read (a newer packet's records replace it). */
    void ReleaseInt(uint32_t handle);
    /** An ACK for qp brought back the records of handle; ackedEnd: every PSN below it is
     * acknowledged; nextPsn: one past the highest sent. Releases the handle. */
    void IntAck(QueuePair* qp, uint32_t handle, uint32_t ackedEnd, uint32_t nextPsn);
    /** An RC QP of this NIC retransmitted a packet / timed out / went to the error state. */
    void CountRetransmit();
    void CountRcTimeout();
    void CountRcError();

  protected:
    void DoDispose() override;

  private:
    /** At Attach: ask a congestion control of the factory what the NIC does for it. */
    void CheckCongestionControl();
    /** Give qp its congestion control (if any; not before Attach). */
    void StartCongestionControl(QueuePair* qp);
    /** A CE-marked packet arrived for RC QP qpn: a CNP to its sender, if its CC says so. */
    void NotifyCongestion(uint32_t qpn, const TransportHeader& h);
    /** A CNP arrived: the QP's reaction point cuts its rate. */
    void ReactToCnp(const TransportHeader& h);
    /** Send the first waiting CNP if any: true if it did. */
    bool SendCnp();
    /** After sending qp's packet of `wire` bytes: its next one no sooner than its rate allows
     * (its congestion control's). */
    void Pace(QueuePair* qp, uint32_t wireBytes, uint32_t payloadBytes);
    /** Nothing to send now but a paced QP: look again when it may send. */
    void PacedWakeAt(Time at);
    void PacedWake();

    void TrySend();
    void Fetched(); //!< SendLatency after a post: the request is there, the arbiter looks
    /** MulticastLoopback: a multicast datagram it sent reaches its own QP in the group. */
    void Loopback(Ptr<Packet> packet, FabricHeader::Fields fields);

    // Hot: what every packet's send (TrySend, PickQp, MakePacket) and receive (Receive, Complete)
    // read, first and together (a NIC is touched once or twice per packet, mostly cold: the fewer
    // lines, the fewer misses); then the counters and traces; cold: memory, CC setup, INT.
    Ptr<Host> m_host;
    WireFormat m_format;               //!< "WireFormat"
    uint32_t m_mtu;                    //!< "MtuBytes": payload bytes per packet
    uint32_t m_rrNext;                 //!< next QP the arbiter looks at
    SendCompletions m_sendCompletions; //!< "SendCompletions"
    bool m_loopback;                   //!< "MulticastLoopback"
    bool m_pickAtHandover;             //!< "PickAtHandover"
    bool m_idle;                       //!< no send scheduled: Kick() starts one
    bool m_ccCnps = false;             //!< it uses CNPs (CongestionControl::UsesCnps)
    bool m_ccInt = false;              //!< it uses INT (CongestionControl::UsesInt)
    uint8_t m_traced = 0;  //!< TRACED_TX | TRACED_RX: "Tx" / "Rx" have sinks (FlaggedTrace)
    Time m_sendLatency;    //!< "SendLatency"
    Time m_receiveLatency; //!< "ReceiveLatency"
    Time m_doorbellAt;     //!< when the last doorbell's Fetched is scheduled
    Time m_pacedEarliest;  //!< PickQp: the first time a paced QP may send
    Ptr<CompletionProcessor> m_processor;
    Ptr<CompletionProcessor> m_txProcessor; //!< send completions: null (Free), own or m_processor
    std::vector<Ptr<QueuePair>> m_qps;
    std::vector<int32_t> m_groupQp; //!< group -> QP number, -1 if none
    /** Bit qpn: the QP may have work (QueuePair::HasWork); set by its posts, kicks and packets in,
     * cleared by the arbiter when HasWork is false: the arbiter skips a QP at 0 without touching
     * it. */
    std::vector<uint64_t> m_work;
    void SetWork(uint32_t qpn);
    /** The first QP at or after `from` (below `end`) whose work bit is set, or `end`. */
    uint32_t NextWork(uint32_t from, uint32_t end) const;
    /** The QP the arbiter serves next (round robin from m_rrNext), or the number of QPs if none has
     * a packet now. */
    uint32_t PickQp();
    Ptr<EventImpl> m_sendEvent;
    EventSource m_sendSource;  //!< its order and Fetched's: (TRANSMIT, host, NIC)
    Ptr<BlankPackets> m_blank; //!< packets outside verify mode (shared by a stack's NICs)
    /** CNPs to send: (host, QP, flow), sent before any other packet */
    Fifo<std::array<uint32_t, 3>> m_cnps;
    Counters m_counters;
    PacketTrace m_txTrace; //!< "Tx" (Port's PacketTrace)
    PacketTrace m_rxTrace; //!< "Rx"

    EventSource m_loopbackSource;  //!< Loopback's: (ARRIVAL, host, NIC)
    std::vector<uint8_t> m_memory; //!< verify mode: the registered region
    ObjectFactory m_ccFactory;     //!< its QPs' congestion control (no TypeId: none)
    PlannedWake m_pacedWake;       //!< the paced wake's event
    Ptr<EventImpl> m_pacedEvent;
    CcCounters m_ccCounters;
    IntStore* m_intStore = nullptr; //!< the fabric's (at Attach)
};

} // namespace mcsim
} // namespace ns3
