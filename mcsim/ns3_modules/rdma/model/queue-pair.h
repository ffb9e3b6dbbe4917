// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "completion-processor.h"
#include "congestion-control.h"
#include "transport-header.h"

#include "ns3/mcsim/event-order.h"
#include "ns3/mcsim/fabric-header.h"
#include "ns3/object.h"
#include "ns3/packet.h"

#include <cstdint>
#include <memory>

namespace ns3
{
namespace mcsim
{

class Nic;

/** @brief The application that owns QPs: told of its completions (a C++ collective, a workload). */
class QpOwner
{
  public:
    virtual ~QpOwner() = default;
    /** A send-queue work request of QP qpn on host completed (ACKed; READ: all data in). */
    virtual void OnSendComplete(uint32_t host, uint32_t qpn, uint64_t wrId) = 0;
    /** A receive completion was processed (SEND, WRITE with immediate, UD datagram). */
    virtual void OnReceive(uint32_t host, const Completion& c) = 0;

    /** Whether OnReceive(host, c) may be deferred (CompletionSink::Deferrable): false unless the
     * owner knows that it only updates its own state, `ahead` completions processed first. */
    virtual bool Deferrable(uint32_t /* host */,
                            const Completion& /* c */,
                            const QueuedAhead& /* ahead */) const
    {
        return false;
    }
};

/**
 * @brief A packet a QP built for its NIC, with the header fields the NIC needs (so the NIC never
 * parses back a header that was just built).
 */
struct OutgoingPacket
{
    Ptr<Packet> packet;          //!< the packet (its size; its payload in verify mode)
    FabricHeader::Fields fields; //!< what the fabric routes by, and the TransportHeader
    uint32_t payloadBytes;       //!< payload (the packet's size minus its real wire headers)
};

/**
 * @brief A queue pair on a NIC: it offers packets to the NIC's arbiter and takes the packets
 * addressed to it.
 */
class QueuePair : public Object, public CompletionSink
{
  public:
    static TypeId GetTypeId();
    QueuePair();
    ~QueuePair() override;

    /** Called by Nic::AddQp: QP qpn of the NIC of node `node` (0 before Nic::Attach). */
    void Bind(Nic* nic, uint32_t node, uint32_t qpn, QpOwner* owner);
    uint32_t GetQpn() const;

    /** @return true if a packet can be sent now */
    virtual bool HasPacket() const = 0;
    /** It has work to send, now or later, without another post, packet in or timer of its own:
     * false implies HasPacket() false until one of those (the NIC's arbiter skips it till then). */
    virtual bool HasWork() const = 0;
    /** The next packet to send (only when HasPacket()). */
    virtual OutgoingPacket NextPacket() = 0;
    /** A packet for this QP arrived (the header is already parsed; the packet is read-only). */
    virtual void Receive(Ptr<Packet> packet, const TransportHeader& h, uint32_t payloadBytes) = 0;

    /** The QP at the other end (an RC QP's: its host and QP number); false if it has none. */
    virtual bool GetPeer(uint32_t& host, uint32_t& qpn) const
    {
        return false;
    }

    // Congestion control (rdma.md, "Congestion control"), the NIC's to use
    Time nextSend;             //!< the NIC paces it: no packet before (its rate's gap)
    Ptr<CongestionControl> cc; //!< its congestion control (null: none, the line rate)

    /** Its timers' order (a congestion control's timers are the QP's). */
    EventSource& TimerSource()
    {
        return m_timerSource;
    }

    /** A completion of this QP was processed: a send one tells the owner, a receive one goes on
     * to OnReceiveProcessed. */
    void OnProcessed(const Completion& c) final;
    /** A send completion never (its owner may post); a receive one as ReceiveDeferrable says. */
    bool Deferrable(const Completion& c, const QueuedAhead& ahead) const final;

  protected:
    void DoDispose() override;
    /**
     * Send work request wrId completed. The owner hears of it at once, unless it is signalled and
     * the NIC processes send completions (Nic::CompleteSend): then once its CQE is processed. An
     * unsignalled one makes no CQE; the owner's bookkeeping hears of it at once, at no cost (a
     * later signalled completion implies it).
     */
    void CompleteSend(uint64_t wrId, bool signalled);
    /** A receive completion was processed (the QP re-posts its buffer, tells the owner). */
    virtual void OnReceiveProcessed(const Completion& c) = 0;

    /** Whether OnReceiveProcessed(c) may be deferred (false unless the QP knows). */
    virtual bool ReceiveDeferrable(const Completion& /* c */, const QueuedAhead& /* ahead */) const
    {
        return false;
    }

    Nic* m_nic; //!< not owned
    uint32_t m_qpn;
    QpOwner* m_owner;          //!< not owned; may be null
    EventSource m_timerSource; //!< its timers' order: (TIMER, node, unit::QP + qpn)
};

} // namespace mcsim
} // namespace ns3
