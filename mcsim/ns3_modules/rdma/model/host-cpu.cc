// SPDX-License-Identifier: GPL-2.0-only
#include "host-cpu.h"

#include "ns3/boolean.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/line-time.h"
#include "ns3/mcsim/reusable-event.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <utility>

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(CompletionProcessor);
NS_OBJECT_ENSURE_REGISTERED(HostCpu);

TypeId
CompletionProcessor::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::mcsim::CompletionProcessor").SetParent<Object>().SetGroupName("Mcsim");
    return tid;
}

TypeId
HostCpu::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::mcsim::HostCpu")
            .SetParent<CompletionProcessor>()
            .SetGroupName("Mcsim")
            .AddConstructor<HostCpu>()
            .AddAttribute("PerCompletionCost",
                          "CPU time to poll and handle one completion (check it, read the "
                          "immediate, update doorbells and the bitmap).",
                          TimeValue(NanoSeconds(100)),
                          MakeTimeAccessor(&HostCpu::m_perCompletion),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("MemcpyRate",
                          "Rate of copying a staged payload to its place, in bit/s.",
                          DataRateValue(DataRate("100Gbps")),
                          MakeDataRateAccessor(&HostCpu::m_memcpy),
                          MakeDataRateChecker())
            .AddAttribute("DeferCompletions",
                          "Process a completion its sink says is deferrable (it only updates "
                          "state of the host: a multicast datagram that completes nothing) "
                          "without an event of its own, at its place in the canonical order. The "
                          "results are the same either way (false: one event per completion).",
                          BooleanValue(true),
                          MakeBooleanAccessor(&HostCpu::m_defer),
                          MakeBooleanChecker());
    return tid;
}

HostCpu::HostCpu()
    : m_defer(true),
      m_lastFinish(0),
      m_deferredItems(0),
      m_finishEvent(Create<ReusableEvent<HostCpu, &HostCpu::Finish>>(this)),
      m_source(EventClass::COMPLETION),
      m_processed(0),
      m_busyPs(0)
{
}

HostCpu::~HostCpu() = default;

void
HostCpu::DoDispose()
{
    if (EventLoop* loop = EventLoop::Current())
    {
        loop->Forget(this);
    }
    m_queue.clear();
    m_finishEvent = nullptr;
    CompletionProcessor::DoDispose();
}

Time
HostCpu::GetServiceTime(const Completion& c) const
{
    Time t = m_perCompletion;
    if (c.staged && c.bytes > 0)
    {
        t += LineTime(c.bytes, m_memcpy.GetBitRate());
    }
    return t;
}

void
HostCpu::Submit(const Completion& c, CompletionSink* sink)
{
    // it starts when it reaches the CPU (the NIC's receive latency) or when the CPU is free
    EventLoop* loop = EventLoop::Current();
    const auto now = static_cast<uint64_t>(mcsim::Now().GetTimeStep());
    const auto ready = static_cast<uint64_t>(c.ready.GetTimeStep());
    const uint64_t service = ServiceSteps(c);
    const uint64_t finish = std::max({ready, m_lastFinish, now}) + service;
    m_lastFinish = finish;
    const QueuedAhead ahead{m_queue.size(), m_queue.size() - m_deferredItems};
    const bool deferred = m_defer && loop != nullptr && loop->Ahead(finish, m_source.Key()) &&
                          sink->Deferrable(c, ahead);
    m_queue.push_back({c, sink, finish, service, deferred});
    if (deferred)
    {
        m_deferredItems++;
        loop->Defer(this, NodeOf(m_source.Key()));
    }
    else
    {
        PostFinish(finish);
    }
}

uint64_t
HostCpu::ServiceSteps(const Completion& c)
{
    if (!c.staged || c.bytes == 0)
    {
        return static_cast<uint64_t>(m_perCompletion.GetTimeStep());
    }
    const int64_t cost = m_perCompletion.GetTimeStep();
    const uint64_t rate = m_memcpy.GetBitRate();
    if (c.bytes != m_memo.bytes || cost != m_memo.costSteps || rate != m_memo.rateBps)
    {
        m_memo = {c.bytes, cost, rate, static_cast<uint64_t>(GetServiceTime(c).GetTimeStep())};
    }
    return m_memo.steps;
}

void
HostCpu::PostFinish(uint64_t finishTs)
{
    const auto now = static_cast<uint64_t>(mcsim::Now().GetTimeStep());
    mcsim::Post(TimeStep(static_cast<int64_t>(finishTs - now)), m_finishEvent, m_source);
}

void
HostCpu::Place(uint32_t node, uint32_t unit)
{
    m_source.Place(node, unit);
}

void
HostCpu::ProcessFront()
{
    Item it = std::move(m_queue.front());
    m_queue.pop_front();
    m_processed++;
    m_busyPs += it.servicePs;
    m_deferredItems -= it.deferred;
    it.sink->OnProcessed(it.c);
}

void
HostCpu::Finish()
{
    // the completions ending now, in their order (deferred ones before it too: they share its key)
    const auto now = static_cast<uint64_t>(mcsim::Now().GetTimeStep());
    while (!m_queue.empty() && m_queue.front().finishTs <= now)
    {
        ProcessFront();
    }
}

bool
HostCpu::CatchUp(uint64_t ts, uint64_t order)
{
    EventLoop* loop = EventLoop::Current();
    while (!m_queue.empty() && m_queue.front().deferred &&
           PlacedBefore(m_queue.front().finishTs, m_source.Key(), ts, order))
    {
        loop->AtDeferred(m_queue.front().finishTs);
        ProcessFront();
    }
    return m_deferredItems > 0;
}

void
HostCpu::Reconsider()
{
    QueuedAhead ahead;
    for (; ahead.all < m_queue.size(); ++ahead.all)
    {
        Item& it = m_queue[ahead.all];
        if (it.deferred && !it.sink->Deferrable(it.c, ahead))
        {
            it.deferred = false;
            m_deferredItems--;
            PostFinish(it.finishTs);
        }
        ahead.eventful += !it.deferred;
    }
}

uint64_t
HostCpu::GetProcessed() const
{
    return m_processed;
}

uint64_t
HostCpu::GetBusyPs() const
{
    // a completion is counted from its start (the head of the queue is in service)
    return m_busyPs + (m_queue.empty() ? 0 : m_queue.front().servicePs);
}

} // namespace mcsim
} // namespace ns3
