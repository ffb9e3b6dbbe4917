// SPDX-License-Identifier: GPL-2.0-only
// The collectives' part of the C ABI (ns3/mcsim/abi.h): a CollectiveTeam's calls, one each.
#include "abi.h"

#include "ns3/mcsim/collective-team.h"
#include "ns3/mcsim/job.h"
#include "ns3/mcsim/rdma-stack.h"
#include "ns3/nstime.h"

using namespace ns3;
using namespace ns3::mcsim;

namespace
{
/** A team's ranks' stats (collectives/helper/collective-team.cc), read by mcsim_counters. */
const capi::CounterReaders g_collectivesReaders({
    {"rank", capi::ReadWith<CollectiveTeam, &CollectiveTeam::GetStats>},
});
} // namespace

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

/** Every rank of the team records its protocol events (before it starts). */
MCSIM_ABI int64_t
mcsim_team_record_events(void* team)
{
    return capi::Do([&] { capi::As<CollectiveTeam>(team).RecordEvents(); });
}

MCSIM_ABI int64_t
mcsim_team_event_count(void* team)
{
    return capi::Call(
        [&] { return static_cast<int64_t>(capi::As<CollectiveTeam>(team).GetEventCount()); });
}

/** out[i * 6 + k]: rank, time (ps), kind, source, value, count of event i. */
MCSIM_ABI int64_t
mcsim_team_events(void* team, int64_t* out, uint64_t n)
{
    return capi::Do([&] { capi::As<CollectiveTeam>(team).GetEvents(out, n); });
}

// ---------------------------------------------------------------------------------------------
// a Job (collectives/helper/job.h): steps of compute and collectives with dependencies

MCSIM_ABI int64_t
mcsim_job_setup(void* job, const uint32_t* hosts, uint64_t n, uint32_t steps)
{
    return capi::Do([&] { capi::As<Job>(job).Setup(hosts, n, steps); });
}

/** Step `step` is compute: durationsPs[0] on every rank (n = 1) or durationsPs[r] on rank r. */
MCSIM_ABI int64_t
mcsim_job_compute(void* job, uint32_t step, const int64_t* durationsPs, uint64_t n)
{
    return capi::Do([&] { capi::As<Job>(job).SetCompute(step, durationsPs, n); });
}

/** Step `step` is the collective of `team` (set up with mcsim_team_setup, never started). */
MCSIM_ABI int64_t
mcsim_job_collective(void* job, uint32_t step, void* team)
{
    return capi::Do(
        [&] { capi::As<Job>(job).SetCollective(step, &capi::As<CollectiveTeam>(team)); });
}

/** On rank `rank` (UINT32_MAX: every rank), step `step` waits for step `on`. */
MCSIM_ABI int64_t
mcsim_job_depend(void* job, uint32_t step, uint32_t on, uint32_t rank)
{
    return capi::Do([&] { capi::As<Job>(job).AddDependency(step, on, rank); });
}

/** Step `step` is a transfer (its messages: mcsim_job_messages). */
MCSIM_ABI int64_t
mcsim_job_transfer(void* job, uint32_t step)
{
    return capi::Do([&] { capi::As<Job>(job).SetTransfer(step); });
}

/** n messages: message i from (step, rank) from[2i], from[2i+1] to to[2i], to[2i+1], bytes[i]. */
MCSIM_ABI int64_t
mcsim_job_messages(void* job,
                   void* stack,
                   const uint32_t* from,
                   const uint32_t* to,
                   const uint64_t* bytes,
                   uint64_t n)
{
    return capi::Do(
        [&] { capi::As<Job>(job).AddMessages(&capi::As<RdmaStack>(stack), from, to, bytes, n); });
}

MCSIM_ABI int64_t
mcsim_job_start(void* job, int64_t atPs)
{
    return capi::Do([&] { capi::As<Job>(job).Start(PicoSeconds(atPs)); });
}

/** out[(step * ranks + rank) * 3 + k]: ready, start, end in ps (-1: never). */
MCSIM_ABI int64_t
mcsim_job_timeline(void* job, int64_t* out, uint64_t n)
{
    return capi::Do([&] { capi::As<Job>(job).GetTimeline(out, n); });
}

/** out[i]: message i's state after the run (bit 1: acknowledged at its sender, bit 2: arrived). */
MCSIM_ABI int64_t
mcsim_job_message_states(void* job, uint8_t* out, uint64_t n)
{
    return capi::Do([&] { capi::As<Job>(job).GetMessageStates(out, n); });
}
