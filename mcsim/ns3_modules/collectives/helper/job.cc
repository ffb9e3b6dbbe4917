// SPDX-License-Identifier: GPL-2.0-only
#include "job.h"

#include "ns3/make-event.h"
#include "ns3/mcsim/bulk-output.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <limits>
#include <map>
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
    m_messages.clear();
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
Job::SetTransfer(uint32_t step)
{
    At(step).kind = Kind::TRANSFER;
}

void
Job::AddMessages(Ptr<RdmaStack> stack,
                 const uint32_t* from,
                 const uint32_t* to,
                 const uint64_t* bytes,
                 std::size_t n)
{
    const auto ranks = static_cast<uint32_t>(m_hosts.size());
    if (!m_messages.empty() || n > std::numeric_limits<uint32_t>::max())
    {
        throw std::invalid_argument("Job: messages are added once, at most 2^32 - 1 of them");
    }
    std::map<std::pair<uint32_t, uint32_t>, std::pair<Ptr<RcQp>, Ptr<RcQp>>>
        qps;                                                // a < b: (a's, b's)
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> into; // (to, from): count
    for (std::size_t i = 0; i < n; ++i)
    {
        const uint32_t a = from[2 * i + 1];
        const uint32_t b = to[2 * i + 1];
        const std::string what = "Job: message " + std::to_string(i);
        if (a >= ranks || b >= ranks || a == b)
        {
            throw std::invalid_argument(what + " goes between ranks " + std::to_string(a) +
                                        " and " + std::to_string(b) + " (two ranks of the job)");
        }
        if (At(from[2 * i]).kind != Kind::TRANSFER || At(to[2 * i]).kind != Kind::TRANSFER)
        {
            throw std::invalid_argument(what + " leaves or enters a step that is no transfer");
        }
        if (bytes[i] == 0 || bytes[i] > stack->GetRegionBytes())
        {
            throw std::invalid_argument(what + " has " + std::to_string(bytes[i]) +
                                        " bytes; give 1 .. the region's " +
                                        std::to_string(stack->GetRegionBytes()));
        }
        auto& pair = qps[{std::min(a, b), std::max(a, b)}];
        if (pair.first == nullptr)
        {
            pair = stack->Connect(m_hosts[std::min(a, b)], this, m_hosts[std::max(a, b)], this);
        }
        into[{b, a}]++;
        m_messages.push_back({from[2 * i] * ranks + a,
                              to[2 * i] * ranks + b,
                              bytes[i],
                              a < b ? pair.first : pair.second});
    }
    for (const auto& [key, count] : into)
    {
        const auto& pair = qps[{std::min(key.first, key.second), std::max(key.first, key.second)}];
        (key.first < key.second ? pair.first : pair.second)->PostRecv(count);
    }
    Indices();
}

void
Job::Indices()
{
    const std::size_t sides = m_steps.size() * m_hosts.size();
    m_sideStart.assign(sides + 1, 0);
    for (const Message& m : m_messages)
    {
        m_sideStart[m.from + 1]++;
        m_sideStart[m.to + 1]++;
    }
    for (std::size_t s = 0; s < sides; ++s)
    {
        m_sideStart[s + 1] += m_sideStart[s];
    }
    m_sideList.assign(m_sideStart.back(), 0);
    std::vector<uint32_t> next(m_sideStart.begin(), m_sideStart.end() - 1);
    for (uint32_t i = 0; i < m_messages.size(); ++i)
    {
        m_sideList[next[m_messages[i].from]++] = i;
        m_sideList[next[m_messages[i].to]++] = i;
    }
}

void
Job::AddDependency(uint32_t step, uint32_t on, uint32_t rank)
{
    if (step == on)
    {
        throw std::invalid_argument("Job: a step cannot wait for itself");
    }
    if (rank != ALL_RANKS && rank >= m_hosts.size())
    {
        throw std::invalid_argument("Job: no rank " + std::to_string(rank));
    }
    At(on).dependents.emplace_back(step, rank);
    if (rank == ALL_RANKS)
    {
        At(step).deps++;
    }
    else
    {
        At(step).rankDeps.push_back(rank);
    }
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
        for (uint32_t r : m_steps[s].rankDeps)
        {
            m_waiting[s * m_hosts.size() + r]++;
        }
    }
    if (m_sideStart.empty())
    {
        Indices();
    }
    m_pending.resize(m_waiting.size());
    for (std::size_t side = 0; side < m_pending.size(); ++side)
    {
        m_pending[side] = m_sideStart[side + 1] - m_sideStart[side];
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
            if (m_waiting[s * m_hosts.size() + r] == 0)
            {
                Ready(s, r);
            }
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
    if (s.kind == Kind::TRANSFER)
    {
        Transfer(step, rank);
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
Job::Transfer(uint32_t step, uint32_t rank)
{
    const auto ranks = static_cast<uint32_t>(m_hosts.size());
    const uint32_t side = step * ranks + rank;
    Time3(step, rank, 1) = Simulator::Now().GetPicoSeconds();
    if (m_pending[side] == 0) // nothing to send, and whatever it receives is in
    {
        mcsim::Post(Time(0),
                    Ptr<EventImpl>(MakeEvent(&Job::End, this, step, rank), false),
                    m_sources[rank]);
        return;
    }
    for (uint32_t k = m_sideStart[side]; k < m_sideStart[side + 1]; ++k)
    {
        const uint32_t i = m_sideList[k];
        if (m_messages[i].from == side)
        {
            m_messages[i].qp->PostSend(RcQp::Verb::WRITE, m_messages[i].bytes, 0, i, true, i, 0);
        }
    }
}

void
Job::OnSendComplete(uint32_t /* host */, uint32_t /* qpn */, uint64_t wrId)
{
    Message& m = m_messages.at(wrId);
    m.done |= ACKED;
    Arrived(m.from);
}

void
Job::OnReceive(uint32_t /* host */, const Completion& c)
{
    Message& m = m_messages.at(c.imm);
    m.done |= ARRIVED;
    Arrived(m.to);
}

void
Job::Arrived(uint32_t side)
{
    const auto ranks = static_cast<uint32_t>(m_hosts.size());
    // a message in before its receiver is ready for the step waits in its buffer: the step then
    // ends when ready (Transfer)
    if (--m_pending[side] == 0 && Time3(side / ranks, side % ranks, 0) >= 0)
    {
        End(side / ranks, side % ranks);
    }
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
    for (const auto& [d, on] : m_steps[step].dependents)
    {
        if ((on == ALL_RANKS || on == rank) && --m_waiting[d * m_hosts.size() + rank] == 0)
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

void
Job::GetMessageStates(uint8_t* out, std::size_t n) const
{
    CheckOutputSize("Job::GetMessageStates", n, m_messages.size());
    std::transform(m_messages.begin(), m_messages.end(), out, [](const Message& m) {
        return m.done;
    });
}

} // namespace mcsim
} // namespace ns3
