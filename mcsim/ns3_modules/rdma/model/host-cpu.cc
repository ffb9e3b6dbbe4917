// SPDX-License-Identifier: GPL-2.0-only
#include "host-cpu.h"

#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/line-time.h"
#include "ns3/mcsim/reusable-event.h"
#include "ns3/simulator.h"

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
                          MakeDataRateChecker());
    return tid;
}

HostCpu::HostCpu()
    : m_finishEvent(Create<ReusableEvent<HostCpu, &HostCpu::Finish>>(this)),
      m_source(EventClass::COMPLETION),
      m_processed(0),
      m_busyPs(0)
{
}

HostCpu::~HostCpu() = default;

void
HostCpu::DoDispose()
{
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
    m_queue.push_back({c, sink});
    if (m_queue.size() == 1)
    {
        Start(c);
    }
}

void
HostCpu::Place(uint32_t node, uint32_t unit)
{
    m_source.Place(node, unit);
}

void
HostCpu::Finish()
{
    auto [c, sink] = std::move(m_queue.front());
    m_queue.pop_front();
    m_processed++;
    if (!m_queue.empty())
    {
        Start(m_queue.front().first);
    }
    sink->OnProcessed(c);
}

void
HostCpu::Start(const Completion& c)
{
    // it starts now, or when it reaches the CPU (the NIC's receive latency), whichever is later
    const Time now = mcsim::Now();
    const Time t = GetServiceTime(c);
    m_busyPs += static_cast<uint64_t>(t.GetPicoSeconds());
    mcsim::Post(std::max(c.ready, now) - now + t, m_finishEvent, m_source);
}

uint64_t
HostCpu::GetProcessed() const
{
    return m_processed;
}

uint64_t
HostCpu::GetBusyPs() const
{
    return m_busyPs;
}

} // namespace mcsim
} // namespace ns3
