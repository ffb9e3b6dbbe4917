// SPDX-License-Identifier: GPL-2.0-only
#include "pfc-watchdog.h"

#include "port.h"

#include "ns3/mcsim/event-loop.h"
#include "ns3/simulator.h"

namespace ns3
{
namespace mcsim
{

namespace
{
constexpr uint8_t NEW = 0;
constexpr uint8_t ON_PATH = 1;
constexpr uint8_t DONE = 2;
} // namespace

void
PfcWatchdog::SetPorts(std::vector<std::vector<Port*>> byNode)
{
    m_byNode = std::move(byNode);
    m_all.clear();
    m_first.clear();
    for (const auto& ports : m_byNode)
    {
        m_first.push_back(m_all.size());
        m_all.insert(m_all.end(), ports.begin(), ports.end());
    }
}

void
PfcWatchdog::Check()
{
    if (!m_cycle.empty())
    {
        return;
    }
    const Time now = mcsim::Now();
    m_stalled.assign(m_all.size(), 0);
    for (std::size_t i = 0; i < m_all.size(); ++i)
    {
        m_stalled[i] = m_all[i]->GetPfc().Stalled(now);
    }
    std::vector<uint8_t> state(m_all.size(), NEW);
    std::vector<std::size_t> path;
    for (std::size_t i = 0; i < m_all.size(); ++i)
    {
        if (m_stalled[i] && state[i] == NEW && Visit(i, state, path))
        {
            Simulator::Stop();
            return;
        }
    }
}

bool
PfcWatchdog::Visit(std::size_t p, std::vector<uint8_t>& state, std::vector<std::size_t>& path)
{
    // a stalled port waits on its peer's node: on every stalled port there (what would drain the
    // peer's ingress queue)
    state[p] = ON_PATH;
    path.push_back(p);
    const uint32_t node = m_all[p]->GetPfc().GetPeerNode();
    const std::size_t first = m_first[node];
    for (std::size_t q = first; q < first + m_byNode[node].size(); ++q)
    {
        if (!m_stalled[q])
        {
            continue;
        }
        if (state[q] == ON_PATH)
        {
            std::size_t at = path.size();
            while (path[--at] != q)
            {
            }
            for (std::size_t k = at; k < path.size(); ++k)
            {
                m_cycle.emplace_back(m_all[path[k]]->GetNode(), m_all[path[k]]->GetIndex());
            }
            return true;
        }
        if (state[q] == NEW && Visit(q, state, path))
        {
            return true;
        }
    }
    path.pop_back();
    state[p] = DONE;
    return false;
}

const std::vector<std::pair<uint32_t, uint32_t>>&
PfcWatchdog::GetCycle() const
{
    return m_cycle;
}

} // namespace mcsim
} // namespace ns3
