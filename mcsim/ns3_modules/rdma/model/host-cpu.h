// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "completion-processor.h"

#include "ns3/data-rate.h"
#include "ns3/event-impl.h"
#include "ns3/mcsim/event-order.h"
#include "ns3/mcsim/fifo.h"
#include "ns3/nstime.h"

#include <utility>

namespace ns3
{
namespace mcsim
{

/**
 * @brief One host CPU thread polling the completion queue: completions are processed one at a
 * time, in arrival order, each taking PerCompletionCost plus, for a staged payload, its bytes at
 * MemcpyRate (the copy from the staging buffer to its place), starting no earlier than it is
 * visible (Completion::ready).
 */
class HostCpu : public CompletionProcessor
{
  public:
    static TypeId GetTypeId();
    HostCpu();
    ~HostCpu() override;

    void Submit(const Completion& c, CompletionSink* sink) override;
    void Place(uint32_t node, uint32_t unit) override;
    uint64_t GetProcessed() const override;
    uint64_t GetBusyPs() const override;

    /** Time to process c: PerCompletionCost + (staged ? bytes / MemcpyRate : 0). */
    Time GetServiceTime(const Completion& c) const;

  protected:
    void DoDispose() override;

  private:
    void Finish();
    /** Serve c, the head of the queue: from max(now, c.ready), for GetServiceTime(c). */
    void Start(const Completion& c);

    Time m_perCompletion;                                 //!< "PerCompletionCost"
    DataRate m_memcpy;                                    //!< "MemcpyRate"
    Fifo<std::pair<Completion, CompletionSink*>> m_queue; //!< head is in service
    Ptr<EventImpl> m_finishEvent;
    EventSource m_source; //!< its order: (COMPLETION, host, its unit)
    uint64_t m_processed;
    uint64_t m_busyPs;
};

} // namespace mcsim
} // namespace ns3
