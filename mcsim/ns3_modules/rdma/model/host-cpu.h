// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "completion-processor.h"

#include "ns3/data-rate.h"
#include "ns3/event-impl.h"
#include "ns3/mcsim/deferred-work.h"
#include "ns3/mcsim/event-order.h"
#include "ns3/mcsim/fifo.h"
#include "ns3/nstime.h"

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * @brief One host CPU thread polling the completion queue: completions are processed one at a
 * time, in arrival order, each taking PerCompletionCost plus, for a staged payload, its bytes at
 * MemcpyRate (the copy from the staging buffer to its place), starting no earlier than it is
 * visible (Completion::ready).
 *
 * Its finish time is known when a completion is queued (FIFO). A completion whose sink says it is
 * Deferrable is processed without an event of its own, at its place in the canonical order
 * (DeferredWork; "DeferCompletions"); the others have their event.
 */
class HostCpu : public CompletionProcessor, public DeferredWork
{
  public:
    static TypeId GetTypeId();
    HostCpu();
    ~HostCpu() override;

    void Submit(const Completion& c, CompletionSink* sink) override;
    void Place(uint32_t node, uint32_t unit) override;
    void Reconsider() override;
    uint64_t GetProcessed() const override;
    uint64_t GetBusyPs() const override;
    bool CatchUp(uint64_t ts, uint64_t order) override;

    /** Time to process c: PerCompletionCost + (staged ? bytes / MemcpyRate : 0). */
    Time GetServiceTime(const Completion& c) const;

  protected:
    void DoDispose() override;

  private:
    /** A queued completion: it is served from max(c.ready, the previous one's end) for its
     * service time (GetServiceTime) and ends at finishTs. */
    struct Item
    {
        Completion c;
        CompletionSink* sink;
        uint64_t finishTs;  //!< time steps
        uint64_t servicePs; //!< GetServiceTime(c)
        bool deferred;      //!< processed without an event of its own
    };

    /** The event of a completion that is not deferred: process every completion ending by now. */
    void Finish();
    /** Process the head of the queue and tell its sink. */
    void ProcessFront();
    /** Post the finish event of a completion that ends at finishTs. */
    void PostFinish(uint64_t finishTs);
    /** GetServiceTime(c) in time steps, the staged copy's remembered for the last payload size
     * (a division per datagram otherwise; the same value). */
    uint64_t ServiceSteps(const Completion& c);

    Time m_perCompletion;  //!< "PerCompletionCost"
    DataRate m_memcpy;     //!< "MemcpyRate"
    bool m_defer;          //!< "DeferCompletions"
    Fifo<Item> m_queue;    //!< in arrival order; the head is in service
    uint64_t m_lastFinish; //!< when the last queued completion ends (time steps)
    uint64_t m_deferredItems;
    Ptr<EventImpl> m_finishEvent;
    EventSource m_source; //!< its order: (COMPLETION, host, its unit)
    uint64_t m_processed;
    uint64_t m_busyPs; //!< of the completions processed

    /** ServiceSteps' memo: the last staged payload's size, and the cost and rate it was for */
    struct
    {
        uint32_t bytes = 0;
        int64_t costSteps = -1;
        uint64_t rateBps = 0;
        uint64_t steps = 0;
    } m_memo;
};

} // namespace mcsim
} // namespace ns3
