// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "wire-format.h"

#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/packet.h"

#include <cstddef>
#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * @brief A completion (CQE) on its way to the application: of a receive, or (send) of a signalled
 * send work request when the NIC's send completions are processed (Nic "SendCompletions").
 */
struct Completion
{
    uint32_t qpn = 0;     //!< the receiving QP
    uint32_t srcHost = 0; //!< sender
    uint32_t bytes = 0;   //!< payload bytes
    uint32_t imm = 0;     //!< immediate data (if hasImm)
    bool hasImm = false;  //!< the message carried immediate data
    bool staged = false;  //!< the payload landed in a staging buffer and must be copied out
    Opcode opcode = Opcode::ACK;
    Ptr<const Packet> packet; //!< verify mode (the NIC has memory): the datagram, for its bytes
    Time ready;               //!< it reaches the processor then (>= its Submit; NIC latency)
    bool send = false;        //!< a send completion: of work request wrId (bytes 0, not staged)
    uint64_t wrId = 0;        //!< a send completion's work request
};

/** @brief The completions queued before one at its processor: all, and those not deferred. */
struct QueuedAhead
{
    std::size_t all = 0;
    std::size_t eventful = 0;
};

/** @brief Told when a completion has been processed (a QP: it re-posts the buffer). */
class CompletionSink
{
  public:
    virtual ~CompletionSink() = default;
    virtual void OnProcessed(const Completion& c) = 0;

    /**
     * Whether OnProcessed(c) may run without an event of its own (DeferredWork): it would post
     * nothing, read no clock and change only state of this host, even if the completions queued
     * before c are processed first (ahead.all of them; ahead.eventful of those are not deferred:
     * only those may be other than deferrable datagrams). False unless the sink knows.
     */
    virtual bool Deferrable(const Completion& /* c */, const QueuedAhead& /* ahead */) const
    {
        return false;
    }
};

/**
 * @brief The engine that processes receive completions: the host CPU (HostCpu) or a SmartNIC's
 * cores. QPs hand every receive completion here (through Nic::Complete, at its last byte, with
 * the time it becomes visible, c.ready: the NIC's ReceiveLatency later); the engine starts on it
 * no earlier than that, takes its time and then tells the sink. Until then the receive buffer stays
 * in use: a slow engine starves the receive queue, and UD packets that find no posted buffer are
 * dropped (receiver overrun).
 */
class CompletionProcessor : public Object
{
  public:
    static TypeId GetTypeId();

    /** Process c, then call sink->OnProcessed(c) (sink outlives the run; not owned). */
    virtual void Submit(const Completion& c, CompletionSink* sink) = 0;

    /** Where it is: node `node`, unit `unit` (mcsim::unit), the key of its events in the
     * canonical same-time order. Nic::Attach places the processors it is given. */
    virtual void Place(uint32_t node, uint32_t unit) = 0;

    /** The sinks' state changed otherwise than by processing completions (a repair READ came
     * back): ask them again which queued completions stay deferred. */
    virtual void Reconsider()
    {
    }

    virtual uint64_t GetProcessed() const = 0; //!< completions processed
    virtual uint64_t GetBusyPs() const = 0;    //!< time spent processing (summed over workers)
};

} // namespace mcsim
} // namespace ns3
