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
