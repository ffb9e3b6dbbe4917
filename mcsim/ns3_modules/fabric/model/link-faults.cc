// SPDX-License-Identifier: GPL-2.0-only
#include "link-faults.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ns3
{
namespace mcsim
{

LinkFaults::LinkFaults()
    : m_lossProbability(0.0),
      m_chosenNext(0),
      m_downNext(0)
{
}

void
LinkFaults::SetLossProbability(double p)
{
    if (!(p >= 0.0 && p < 1.0)) // NaN fails too
    {
        throw std::invalid_argument("Port: LossProbability=" + std::to_string(p) +
                                    " must be >= 0 and < 1");
    }
    m_lossProbability = p;
    if (p > 0.0 && !m_lossRng)
    {
        m_lossRng = CreateObject<UniformRandomVariable>();
    }
    else if (p == 0.0)
    {
        m_lossRng = nullptr;
    }
}

double
LinkFaults::GetLossProbability() const
{
    return m_lossProbability;
}

int64_t
LinkFaults::AssignStreams(int64_t stream)
{
    if (stream < 0)
    {
        throw std::invalid_argument("Port::AssignStreams: stream " + std::to_string(stream) +
                                    " must be >= 0");
    }
    if (!m_lossRng)
    {
        return 0;
    }
    m_lossRng->SetStream(stream);
    return 1;
}

void
LinkFaults::SetChosenDrops(const uint64_t* indexes, std::size_t n)
{
    m_chosen.assign(indexes, indexes + n);
    std::sort(m_chosen.begin(), m_chosen.end());
    m_chosen.erase(std::unique(m_chosen.begin(), m_chosen.end()), m_chosen.end());
    m_chosenNext = 0;
}

void
LinkFaults::SetDownIntervals(const int64_t* downUpPs, std::size_t n)
{
    std::vector<std::pair<Time, Time>> down;
    down.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
    {
        const int64_t from = downUpPs[2 * i];
        const int64_t to = downUpPs[2 * i + 1];
        if (from < 0 || to <= from)
        {
            throw std::invalid_argument("Port: down interval [" + std::to_string(from) + ", " +
                                        std::to_string(to) + ") ps must have 0 <= down < up");
        }
        down.emplace_back(PicoSeconds(from), PicoSeconds(to));
    }
    std::sort(down.begin(), down.end());
    m_down.clear();
    for (const auto& d : down)
    {
        if (!m_down.empty() && d.first <= m_down.back().second)
        {
            m_down.back().second = std::max(m_down.back().second, d.second);
        }
        else
        {
            m_down.push_back(d);
        }
    }
    m_downNext = 0;
}

bool
LinkFaults::Any() const
{
    return m_lossProbability > 0.0 || !m_chosen.empty() || !m_down.empty();
}

DropCause
LinkFaults::Decide(uint64_t index, Time now)
{
    // one draw per arrival, whatever the other causes decide
    const bool random = m_lossRng && m_lossRng->GetValue() < m_lossProbability;
    while (m_downNext < m_down.size() && m_down[m_downNext].second <= now)
    {
        ++m_downNext;
    }
    while (m_chosenNext < m_chosen.size() && m_chosen[m_chosenNext] < index)
    {
        ++m_chosenNext;
    }
    if (m_downNext < m_down.size() && m_down[m_downNext].first <= now)
    {
        return DropCause::LINK_DOWN;
    }
    if (m_chosenNext < m_chosen.size() && m_chosen[m_chosenNext] == index)
    {
        return DropCause::CHOSEN;
    }
    return random ? DropCause::RANDOM : DropCause::NONE;
}

void
LinkFaults::Dispose()
{
    m_lossRng = nullptr;
}

} // namespace mcsim
} // namespace ns3
