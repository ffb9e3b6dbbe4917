// SPDX-License-Identifier: GPL-2.0-only
#include "credit-account.h"

#include <algorithm>

namespace ns3
{
namespace mcsim
{

CreditAccount::CreditAccount()
    : m_credits(0)
{
}

void
CreditAccount::Reset(uint64_t bytes)
{
    m_credits = static_cast<int64_t>(bytes);
}

uint64_t
CreditAccount::Held() const
{
    int64_t held = m_credits;
    for (std::size_t i = 0; i < m_pending.size(); ++i)
    {
        held += m_pending[i].bytes;
    }
    return static_cast<uint64_t>(held);
}

void
CreditAccount::Add(Time at, uint32_t wireBytes, Port* via)
{
    // returns come nearly in time order: insert from the back, usually at the back
    std::size_t i = m_pending.size();
    while (i > 0 && m_pending[i - 1].at > at)
    {
        --i;
    }
    m_pending.insert(i, {at, wireBytes, via});
}

void
CreditAccount::Harvest(Time now)
{
    while (!m_pending.empty() && m_pending.front().at <= now)
    {
        m_credits += m_pending.front().bytes;
        m_pending.pop_front();
    }
}

std::size_t
CreditAccount::Needed(uint32_t wireBytes, Time horizon) const
{
    int64_t have = m_credits;
    std::size_t n = 0;
    while (have < wireBytes && n < m_pending.size() && m_pending[n].at <= horizon)
    {
        have += m_pending[n].bytes;
        ++n;
    }
    return have < wireBytes ? NOT_ENOUGH : n;
}

bool
CreditAccount::Take(uint32_t wireBytes, Time now, Time delay, Time& ready)
{
    const std::size_t n = Needed(wireBytes, now + delay);
    if (n == NOT_ENOUGH)
    {
        Harvest(now);
        return false;
    }
    int64_t have = m_credits;
    for (std::size_t i = 0; i < n; ++i)
    {
        have += m_pending[i].bytes;
    }
    // credits left over from the last entry are due by then too; the packets after this one
    // start after it, so they may use them
    ready = n > 0 ? m_pending[n - 1].at : Time(0);
    for (std::size_t i = 0; i < n; ++i)
    {
        m_pending.pop_front();
    }
    m_credits = have - wireBytes;
    return true;
}

CreditWakeup
CreditAccount::PlanWakeup(uint32_t wireBytes, Time now, Time delay)
{
    // which returned credit completes the head packet's?
    const std::size_t n = Needed(wireBytes, Time::Max());
    if (n == NOT_ENOUGH)
    {
        // the rest are still held downstream; a return calls again when they come
        return {CreditWakeup::NONE, now, nullptr};
    }
    Time at = now;
    if (n > 0)
    {
        const Pending& last = m_pending[n - 1];
        if (last.via != nullptr && last.at > now)
        {
            return {CreditWakeup::ATTACH, last.at, last.via}; // that arrival calls CreditDue()
        }
        // one link delay before it is due, every credit due by then is known (Take)
        at = std::max(last.at - delay, now);
    }
    if (!m_events.empty() && m_events.front() <= at)
    {
        return {CreditWakeup::NONE, at, nullptr}; // an event at or before then will look again
    }
    // earlier than any scheduled one: the later ones stay scheduled and find nothing or little
    // to do (cheaper than cancelling, which leaves a dead event in the queue anyway)
    m_events.insert(0, at);
    return {CreditWakeup::SCHEDULE, at, nullptr};
}

} // namespace mcsim
} // namespace ns3
