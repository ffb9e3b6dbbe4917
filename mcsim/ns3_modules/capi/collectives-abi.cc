// SPDX-License-Identifier: GPL-2.0-only
// The collectives' part of the C ABI (ns3/mcsim/abi.h): a CollectiveTeam's calls, one each.
#include "abi.h"

#include "ns3/mcsim/collective-team.h"
#include "ns3/mcsim/rdma-stack.h"
#include "ns3/nstime.h"

using namespace ns3;
using namespace ns3::mcsim;

MCSIM_ABI int64_t
mcsim_team_setup(void* team, void* stack, void* rankFactory, const uint32_t* hosts, uint64_t n)
{
    return capi::Do([&] {
        capi::As<CollectiveTeam>(team).Setup(&capi::As<RdmaStack>(stack),
                                             capi::FactoryAt(rankFactory),
                                             hosts,
                                             n);
    });
}

/** Start every rank at an absolute time in ps. */
MCSIM_ABI int64_t
mcsim_team_start(void* team, int64_t atPs)
{
    return capi::Do([&] { capi::As<CollectiveTeam>(team).Start(PicoSeconds(atPs)); });
}

/** Start every rank of team once every rank of first has finished (instead of mcsim_team_start). */
MCSIM_ABI int64_t
mcsim_team_start_after(void* team, void* first)
{
    return capi::Do(
        [&] { capi::As<CollectiveTeam>(team).StartAfter(&capi::As<CollectiveTeam>(first)); });
}

MCSIM_ABI int64_t
mcsim_team_n_ranks(void* team)
{
    return capi::Call([&] { return capi::As<CollectiveTeam>(team).GetNRanks(); });
}

MCSIM_ABI int64_t
mcsim_team_stats(void* team, uint64_t* out, uint64_t n)
{
    return capi::Do([&] { capi::As<CollectiveTeam>(team).GetStats(out, n); });
}
