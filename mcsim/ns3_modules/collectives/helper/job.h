// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "collective-team.h"

#include "ns3/mcsim/event-order.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include <cstdint>
#include <deque>
#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * @brief A job: its ranks run one graph of steps, every rank every step (SPMD). A step is compute
 * of a duration or a collective (a CollectiveTeam on the job's hosts, set up and not started). A
 * rank's step is ready once the same rank's steps it depends on have ended. A compute step starts
 * when ready and a compute unit of its rank is free (ComputeUnits per rank, 0: no limit; ready
 * steps wait in the order they became ready), and ends its duration later. A collective step starts
 * on every rank at once, when its last rank is ready (a rank waits for the others to enter it), and
 * ends on a rank when the rank has its output. Several jobs on one RdmaStack share its NICs and
 * links. The timeline (per step and rank: ready, start, end) is read in bulk after the run.
 */
class Job : public Object
{
  public:
    static TypeId GetTypeId();
    Job();
    ~Job() override;

    /**
     * The job's ranks (rank i on hosts[i]) and its number of steps, every step unset.
     * @throws std::invalid_argument for no host or no step
     */
    void Setup(const uint32_t* hosts, std::size_t nRanks, uint32_t nSteps);
    /** Step `step` is compute: durationsPs[0] ps on every rank (n = 1) or durationsPs[r] on rank r
     * (n = ranks). @throws std::invalid_argument for another n or a negative duration */
    void SetCompute(uint32_t step, const int64_t* durationsPs, std::size_t n);
    /** Step `step` is the collective `team` (its ranks: the job's, in order). */
    void SetCollective(uint32_t step, Ptr<CollectiveTeam> team);
    /** On every rank, step `step` waits for step `on` to end. */
    void AddDependency(uint32_t step, uint32_t on);
    /** Start the job at an absolute time: the steps without dependencies are ready then.
     * @throws std::invalid_argument if a step is unset */
    void Start(Time at);

    /** Values per step and rank in the timeline: ready, start, end. */
    static constexpr std::size_t TIMES = 3;
    /** out[(step * ranks + rank) * TIMES + k]: ready, start and end in ps (-1: never). */
    void GetTimeline(int64_t* out, std::size_t n) const;

  protected:
    void DoDispose() override;

  private:
    enum class Kind
    {
        UNSET,
        COMPUTE,
        COLLECTIVE,
    };

    struct Step
    {
        Kind kind = Kind::UNSET;
        std::vector<int64_t> durations;   //!< compute: ps, one for all ranks or one per rank
        Ptr<CollectiveTeam> team;         //!< collective
        std::vector<uint32_t> dependents; //!< the steps that wait for this one
        uint32_t deps = 0;                //!< the steps it waits for
        uint32_t readyRanks = 0;          //!< collective: ranks ready so far
    };

    Step& At(uint32_t step);
    void StartAll();                          //!< every step without dependencies is ready
    void Ready(uint32_t step, uint32_t rank); //!< its dependencies have ended on the rank
    void Begin(uint32_t step);                //!< a collective starts on every rank
    void End(uint32_t step, uint32_t rank);
    void Compute(uint32_t step, uint32_t rank); //!< a compute step starts on a free unit
    int64_t& Time3(uint32_t step, uint32_t rank, std::size_t k);

    std::vector<uint32_t> m_hosts;
    std::vector<Step> m_steps;
    std::vector<uint32_t> m_waiting;    //!< per step and rank: dependencies not ended yet
    std::vector<int64_t> m_times;       //!< per step and rank: ready, start, end (-1: never)
    std::vector<EventSource> m_sources; //!< per rank: its compute steps' ends
    std::vector<uint32_t> m_busy;       //!< per rank: compute units in use
    std::vector<std::deque<uint32_t>>
        m_queued;     //!< per rank: ready compute steps waiting for a unit
    uint32_t m_id;    //!< "Id": its event sources' unit
    uint32_t m_units; //!< "ComputeUnits"
};

} // namespace mcsim
} // namespace ns3
