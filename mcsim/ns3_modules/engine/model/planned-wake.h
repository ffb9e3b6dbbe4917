// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/nstime.h"

namespace ns3
{
namespace mcsim
{

/**
 * @brief The bookkeeping of a reusable wake event asked for at various times: a wake is posted only
 * if none runs by the time asked (the one that runs looks again and asks anew), so asking often
 * costs no event per ask. A stale wake (posted for a later time than one posted after it) just
 * looks again.
 */
class PlannedWake
{
  public:
    /** Whether a wake must be posted for `at` (asked at `now`); if so it is remembered as posted.
     */
    bool Ask(Time at, Time now)
    {
        if (m_at >= now && m_at <= at)
        {
            return false; // a wake runs by then
        }
        m_at = at;
        return true;
    }

    /** A posted wake runs now: the one remembered has run if it was due. */
    void Ran(Time now)
    {
        if (now >= m_at)
        {
            m_at = Time(-1);
        }
    }

  private:
    Time m_at = Time(-1); //!< when the wake posted last runs (-1: none)
};

} // namespace mcsim
} // namespace ns3
