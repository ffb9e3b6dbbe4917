// SPDX-License-Identifier: GPL-2.0-only
#include "queue-sampler.h"

#include "ns3/mcsim/bulk-output.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <stdexcept>

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(QueueSampler);

TypeId
QueueSampler::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::mcsim::QueueSampler")
            .SetParent<Object>()
            .SetGroupName("Mcsim")
            .AddConstructor<QueueSampler>()
            .AddAttribute("Interval",
                          "Time between two samples of each port's output queue, from time 0.",
                          TimeValue(PicoSeconds(DEFAULT_INTERVAL_PS)),
                          MakeTimeAccessor(&QueueSampler::m_interval),
                          MakeTimeChecker(PicoSeconds(1)))
            .AddAttribute("MaxSamples",
                          "Samples kept per port; the later ones are counted (GetLeftOut).",
                          UintegerValue(DEFAULT_MAX_SAMPLES),
                          MakeUintegerAccessor(&QueueSampler::m_maxSamples),
                          MakeUintegerChecker<uint64_t>(1));
    return tid;
}

QueueSampler::QueueSampler()
    : m_interval(PicoSeconds(DEFAULT_INTERVAL_PS)),
      m_maxSamples(DEFAULT_MAX_SAMPLES)
{
}

QueueSampler::~QueueSampler() = default;

void
QueueSampler::DoDispose()
{
    EventLoop* loop = EventLoop::Current();
    if (loop != nullptr)
    {
        loop->Unwatch(this);
    }
    m_watching = false;
    m_ports.clear();
    Object::DoDispose();
}

void
QueueSampler::Attach(Ptr<Port> port)
{
    m_ports.push_back(port);
    m_samples.emplace_back();
}

void
QueueSampler::Start()
{
    Simulator::GetImplementation(); // made if the run has no event yet
    EventLoop* loop = EventLoop::Current();
    if (loop == nullptr)
    {
        throw std::invalid_argument("QueueSampler: the simulator is not mcsim's EventLoop");
    }
    if (loop->NowSteps() != 0)
    {
        throw std::invalid_argument("QueueSampler: the run has begun (start it before the run)");
    }
    if (m_ports.empty())
    {
        throw std::invalid_argument("QueueSampler: no port attached");
    }
    loop->Watch(this, 0);
    m_watching = true;
}

uint64_t
QueueSampler::Look(uint64_t ts)
{
    const Time at = TimeStep(ts);
    for (std::size_t p = 0; p < m_ports.size(); ++p)
    {
        m_samples[p].push_back(m_ports[p]->GetQueueBytesAt(at));
    }
    m_endTs = ts;
    if (m_samples[0].size() >= m_maxSamples)
    {
        return NO_LOOK;
    }
    return ts + static_cast<uint64_t>(m_interval.GetTimeStep());
}

void
QueueSampler::Finish()
{
    EventLoop* loop = EventLoop::Current();
    if (!m_watching || loop == nullptr)
    {
        return;
    }
    loop->LookUntilNow();
    loop->Unwatch(this);
    m_watching = false;
    m_endTs = loop->NowSteps();
}

uint64_t
QueueSampler::GetKept() const
{
    return m_samples.empty() ? 0 : m_samples[0].size();
}

uint64_t
QueueSampler::GetLeftOut() const
{
    // a look at 0 and every interval up to the end: those past the kept ones were left out
    const uint64_t looks = m_endTs / static_cast<uint64_t>(m_interval.GetTimeStep()) + 1;
    return m_samples.empty() || looks <= GetKept() ? 0 : looks - GetKept();
}

void
QueueSampler::CopySamples(uint64_t* out, std::size_t n) const
{
    CheckOutputSize("QueueSampler::CopySamples", n, m_ports.size() * GetKept());
    for (const std::vector<uint64_t>& port : m_samples)
    {
        out = std::copy(port.begin(), port.end(), out);
    }
}

void
QueueSampler::CopyEcnThresholds(uint64_t* out, std::size_t n) const
{
    CheckOutputSize("QueueSampler::CopyEcnThresholds", n, 2 * m_ports.size());
    for (const Ptr<Port>& port : m_ports)
    {
        *out++ = port->GetEcnKminBytes();
        *out++ = port->GetEcnKmaxBytes();
    }
}

} // namespace mcsim
} // namespace ns3
