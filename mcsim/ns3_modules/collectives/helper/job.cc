// SPDX-License-Identifier: GPL-2.0-only
#include "job.h"

#include "ns3/make-event.h"
#include "ns3/mcsim/bulk-output.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(Job);

TypeId
Job::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::mcsim::Job")
            .SetParent<Object>()
            .SetGroupName("Mcsim")
            .AddConstructor<Job>()
            .AddAttribute("Id",
                          "The job's number: the unit of its ranks' event sources "
                          "(unit::JOB + Id on each rank's host).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&Job::m_id),
                          MakeUintegerChecker<uint32_t>(0, unit::JOB_LIMIT))
            .AddAttribute("ComputeUnits",
                          "Compute steps a rank runs at once (a GPU: 1); 0: no limit.",
                          UintegerValue(1),
                          MakeUintegerAccessor(&Job::m_units),
                          MakeUintegerChecker<uint32_t>());
    return tid;
}

Job::Job()
    : m_id(0),
      m_units(1)
{
}

Job::~Job() = default;

void
Job::DoDispose()
{
    m_steps.clear();
    Object::DoDispose();
}

void
Job::Setup(const uint32_t* hosts, std::size_t nRanks, uint32_t nSteps)
{
    if (nRanks == 0 || nSteps == 0)
    {
        throw std::invalid_argument("Job: needs >= 1 rank and >= 1 step");
    }
    m_hosts.assign(hosts, hosts + nRanks);
    m_steps.assign(nSteps, Step{});
    m_waiting.assign(nSteps * nRanks, 0);
    m_times.assign(nSteps * nRanks * TIMES, -1);
    m_sources.assign(nRanks, EventSource(EventClass::CONTROL));
    m_busy.assign(nRanks, 0);
    m_queued.assign(nRanks, {});
    for (std::size_t r = 0; r < nRanks; ++r)
    {
        m_sources[r].Place(m_hosts[r], unit::JOB + m_id);
    }
}

Job::Step&
Job::At(uint32_t step)
{
    if (step >= m_steps.size())
    {
        throw std::invalid_argument("Job: no step " + std::to_string(step) + " of " +
                                    std::to_string(m_steps.size()));
    }
    return m_steps[step];
}

void
Job::SetCompute(uint32_t step, const int64_t* durationsPs, std::size_t n)
{
    if (n != 1 && n != m_hosts.size())
    {
        throw std::invalid_argument("Job: a compute step has one duration or one per rank");
    }
    if (std::any_of(durationsPs, durationsPs + n, [](int64_t d) { return d < 0; }))
    {
        throw std::invalid_argument("Job: a compute step's duration is < 0");
    }
    Step& s = At(step);
    s.kind = Kind::COMPUTE;
    s.durations.assign(durationsPs, durationsPs + n);
}

void
Job::SetCollective(uint32_t step, Ptr<CollectiveTeam> team)
{
    if (team == nullptr || team->GetNRanks() != m_hosts.size())
    {
        throw std::invalid_argument("Job: a collective step's team has the job's ranks");
    }
    Step& s = At(step);
    s.kind = Kind::COLLECTIVE;
    s.team = team;
    team->SetRankListener([this, step](uint32_t rank) { End(step, rank); });
}

void
Job::AddDependency(uint32_t step, uint32_t on)
{
    if (step == on)
    {
        throw std::invalid_argument("Job: a step cannot wait for itself");
    }
    At(on).dependents.push_back(step);
    At(step).deps++;
}

void
Job::Start(Time at)
{
    for (std::size_t s = 0; s < m_steps.size(); ++s)
    {
        if (m_steps[s].kind == Kind::UNSET)
        {
            throw std::invalid_argument("Job: step " + std::to_string(s) + " is unset");
        }
        for (std::size_t r = 0; r < m_hosts.size(); ++r)
        {
            m_waiting[s * m_hosts.size() + r] = m_steps[s].deps;
        }
    }
    mcsim::PostPlanned(at - Simulator::Now(), MakeEvent(&Job::StartAll, this));
}

void
Job::StartAll()
{
    for (uint32_t s = 0; s < m_steps.size(); ++s)
    {
        for (uint32_t r = 0; m_steps[s].deps == 0 && r < m_hosts.size(); ++r)
        {
            Ready(s, r);
        }
    }
}

int64_t&
Job::Time3(uint32_t step, uint32_t rank, std::size_t k)
{
    return m_times[(step * m_hosts.size() + rank) * TIMES + k];
}

void
Job::Ready(uint32_t step, uint32_t rank)
{
    Step& s = m_steps[step];
    const int64_t now = Simulator::Now().GetPicoSeconds();
    Time3(step, rank, 0) = now;
    if (s.kind == Kind::COMPUTE)
    {
        if (m_units != 0 && m_busy[rank] == m_units)
        {
            m_queued[rank].push_back(step);
            return;
        }
        Compute(step, rank);
        return;
    }
    if (++s.readyRanks == m_hosts.size())
    {
        mcsim::PostPlanned(Time(0), MakeEvent(&Job::Begin, this, step));
    }
}

void
Job::Compute(uint32_t step, uint32_t rank)
{
    const Step& s = m_steps[step];
    m_busy[rank]++;
    Time3(step, rank, 1) = Simulator::Now().GetPicoSeconds();
    mcsim::Post(PicoSeconds(s.durations[s.durations.size() == 1 ? 0 : rank]),
                Ptr<EventImpl>(MakeEvent(&Job::End, this, step, rank), false),
                m_sources[rank]);
}

void
Job::Begin(uint32_t step)
{
    const int64_t now = Simulator::Now().GetPicoSeconds();
    for (uint32_t r = 0; r < m_hosts.size(); ++r)
    {
        Time3(step, r, 1) = now;
    }
    m_steps[step].team->StartNow();
}

void
Job::End(uint32_t step, uint32_t rank)
{
    Time3(step, rank, 2) = Simulator::Now().GetPicoSeconds();
    if (m_steps[step].kind == Kind::COMPUTE)
    {
        m_busy[rank]--;
        if (!m_queued[rank].empty())
        {
            const uint32_t next = m_queued[rank].front();
            m_queued[rank].pop_front();
            Compute(next, rank);
        }
    }
    for (uint32_t d : m_steps[step].dependents)
    {
        if (--m_waiting[d * m_hosts.size() + rank] == 0)
        {
            Ready(d, rank);
        }
    }
}

void
Job::GetTimeline(int64_t* out, std::size_t n) const
{
    CheckOutputSize("Job::GetTimeline", n, m_times.size());
    std::copy(m_times.begin(), m_times.end(), out);
}

} // namespace mcsim
} // namespace ns3
