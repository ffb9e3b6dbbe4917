// SPDX-License-Identifier: GPL-2.0-only
#include "collective-team.h"

#include "ns3/make-event.h"
#include "ns3/mcsim/bulk-output.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(CollectiveTeam);

namespace
{
const CounterTable g_rankTable("rank", CounterTable::Columns({}, CollectiveRank::Stats::NAMES));
} // namespace

TypeId
CollectiveTeam::GetTypeId()
{
    static TypeId tid = TypeId("ns3::mcsim::CollectiveTeam")
                            .SetParent<Object>()
                            .SetGroupName("Mcsim")
                            .AddConstructor<CollectiveTeam>()
                            .AddAttribute("BytesPerRank",
                                          "Bytes each rank contributes, in bytes (Allgather: its "
                                          "shard; Broadcast: the root's buffer; reductions: each "
                                          "block); 0: not set (Setup refuses it).",
                                          UintegerValue(0),
                                          MakeUintegerAccessor(&CollectiveTeam::m_bytesPerRank),
                                          MakeUintegerChecker<uint64_t>())
                            .AddAttribute("FirstGroup",
                                          "The team's first multicast group (a multicast rank's "
                                          "endpoint e joins FirstGroup + e).",
                                          UintegerValue(0),
                                          MakeUintegerAccessor(&CollectiveTeam::m_firstGroup),
                                          MakeUintegerChecker<uint32_t>());
    return tid;
}

CollectiveTeam::CollectiveTeam()
    : m_bytesPerRank(0),
      m_firstGroup(0),
      m_finished(0)
{
}

CollectiveTeam::~CollectiveTeam() = default;

void
CollectiveTeam::DoDispose()
{
    for (auto& r : m_ranks)
    {
        r->Dispose();
    }
    m_ranks.clear();
    m_then.clear();
    m_listener = nullptr;
    Object::DoDispose();
}

void
CollectiveTeam::Setup(Ptr<RdmaStack> stack,
                      ObjectFactory rankFactory,
                      const uint32_t* hosts,
                      std::size_t n)
{
    if (n < 2 || m_bytesPerRank == 0)
    {
        throw std::invalid_argument("CollectiveTeam: needs >= 2 ranks and > 0 bytes per rank");
    }
    std::vector<uint32_t> team(hosts, hosts + n);
    if (std::set<uint32_t>(team.begin(), team.end()).size() != n)
    {
        throw std::invalid_argument("CollectiveTeam: a host appears twice");
    }
    for (uint32_t h : team)
    {
        stack->GetNic(h); // throws for an unknown host
    }
    for (uint32_t r = 0; r < n; ++r)
    {
        Ptr<CollectiveRank> rank = rankFactory.Create<CollectiveRank>();
        if (!rank)
        {
            throw std::invalid_argument(
                "CollectiveTeam: the factory does not make a CollectiveRank");
        }
        rank->Setup(stack, r, team, m_bytesPerRank);
        rank->SetOnFinished([this, r]() { RankFinished(r); });
        m_ranks.push_back(rank);
    }
    // a ring of RC QP pairs: rank r's "next" QP talks to rank r+1's "prev" QP
    std::vector<Ptr<RcQp>> next(n), prev(n);
    for (uint32_t r = 0; r < n; ++r)
    {
        const uint32_t s = (r + 1) % n;
        auto [a, b] =
            stack->Connect(team[r], PeekPointer(m_ranks[r]), team[s], PeekPointer(m_ranks[s]));
        next[r] = a;
        prev[s] = b;
    }
    for (uint32_t r = 0; r < n; ++r)
    {
        m_ranks[r]->Wire(m_firstGroup, next[r], prev[r]);
    }
    ConnectRings(stack, team);
    auto addresses = std::make_shared<std::vector<RankAddress>>();
    for (uint32_t r = 0; r < n; ++r)
    {
        addresses->push_back({team[r], m_ranks[r]->GetAddressQpn()});
    }
    for (const auto& rank : m_ranks)
    {
        rank->Introduce(addresses);
    }
}

void
CollectiveTeam::Start(Time at)
{
    mcsim::PostPlanned(at - Simulator::Now(), MakeEvent(&CollectiveTeam::StartAll, this));
}

void
CollectiveTeam::StartAfter(Ptr<CollectiveTeam> first)
{
    if (first == nullptr || first == this ||
        std::find(first->m_then.begin(), first->m_then.end(), this) != first->m_then.end())
    {
        throw std::invalid_argument(
            "CollectiveTeam::StartAfter: another team, not followed by this one yet");
    }
    first->m_then.push_back(this);
    m_waiting++;
}

void
CollectiveTeam::StartNow()
{
    StartAll();
}

void
CollectiveTeam::SetRankListener(std::function<void(uint32_t)> listener)
{
    m_listener = std::move(listener);
}

void
CollectiveTeam::RankFinished(uint32_t rank)
{
    if (m_listener)
    {
        m_listener(rank);
    }
    if (++m_finished == m_ranks.size())
    {
        for (const auto& then : m_then)
        {
            if (--then->m_waiting == 0)
            {
                mcsim::PostPlanned(Time(0),
                                   MakeEvent(&CollectiveTeam::StartAll, PeekPointer(then)));
            }
        }
    }
}

void
CollectiveTeam::StartAll()
{
    for (auto& r : m_ranks)
    {
        r->Start();
    }
}

void
CollectiveTeam::ConnectRings(Ptr<RdmaStack> stack, const std::vector<uint32_t>& team)
{
    const std::size_t n = team.size();
    const std::vector<uint32_t> distances = m_ranks[0]->GetRingDistances();
    std::vector<std::vector<Ptr<RcQp>>> out(n), in(n);
    for (uint32_t d : distances)
    {
        for (uint32_t r = 0; r < n; ++r)
        {
            const uint32_t s = (r + d) % n;
            auto [a, b] =
                stack->Connect(team[r], PeekPointer(m_ranks[r]), team[s], PeekPointer(m_ranks[s]));
            out[r].push_back(a);
            in[s].push_back(b);
        }
    }
    for (uint32_t r = 0; !distances.empty() && r < n; ++r)
    {
        m_ranks[r]->WireRings(std::move(out[r]), std::move(in[r]));
    }
}

uint32_t
CollectiveTeam::GetNRanks() const
{
    return static_cast<uint32_t>(m_ranks.size());
}

void
CollectiveTeam::GetStats(uint64_t* out, std::size_t n) const
{
    static_assert(sizeof(CollectiveRank::Stats) == CollectiveRank::NUM_STATS * sizeof(uint64_t));
    CheckOutputSize("CollectiveTeam::GetStats", n, m_ranks.size() * CollectiveRank::NUM_STATS);
    for (std::size_t r = 0; r < m_ranks.size(); ++r)
    {
        m_ranks[r]->GetStats().CopyTo(out + r * CollectiveRank::NUM_STATS);
    }
}

void
CollectiveTeam::RecordEvents()
{
    for (const auto& rank : m_ranks)
    {
        rank->RecordEvents(true);
    }
}

std::size_t
CollectiveTeam::GetEventCount() const
{
    std::size_t n = 0;
    for (const auto& rank : m_ranks)
    {
        n += rank->GetEvents().size();
    }
    return n;
}

void
CollectiveTeam::GetEvents(int64_t* out, std::size_t n) const
{
    CheckOutputSize("CollectiveTeam::GetEvents", n, GetEventCount() * EVENT_FIELDS);
    for (std::size_t r = 0; r < m_ranks.size(); ++r)
    {
        for (const auto& e : m_ranks[r]->GetEvents())
        {
            *out++ = static_cast<int64_t>(r);
            *out++ = e.timePs;
            *out++ = static_cast<int64_t>(e.kind);
            *out++ = e.source;
            *out++ = e.value;
            *out++ = e.count;
        }
    }
}

} // namespace mcsim
} // namespace ns3
