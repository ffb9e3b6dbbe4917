// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "collective-rank.h"

#include "ns3/mcsim/rdma-stack.h"
#include "ns3/object-factory.h"
#include "ns3/object.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * @brief The ranks of one collective on an RdmaStack: creates a rank application per host from a
 * factory (McastAllgather, RingAllgather, ...), wires their QPs (a ring of RC QP pairs, and a UD
 * QP per rank in the team's multicast group), starts them, and reads their stats in bulk. Two
 * teams on the same stack run two collectives at once (they share the NICs and links).
 */
class CollectiveTeam : public Object
{
  public:
    static TypeId GetTypeId();
    CollectiveTeam();
    ~CollectiveTeam() override;

    /**
     * Create the ranks: rank i runs on hosts[i]; rankFactory makes the rank applications, each
     * with BytesPerRank; a multicast rank with E endpoints uses groups FirstGroup ..
     * FirstGroup + E - 1.
     * @throws std::invalid_argument for fewer than 2 ranks, BytesPerRank 0, a repeated or unknown
     * host, or a factory that does not make a CollectiveRank
     */
    void Setup(Ptr<RdmaStack> stack,
               ObjectFactory rankFactory,
               const uint32_t* hosts,
               std::size_t n);
    /** Start every rank at an absolute time. */
    void Start(Time at);
    /** Start every rank once every rank of `first` has finished, and of every other team given so
     * (a collective in phases: a phase begins when the teams of the phase before have ended
     * everywhere). Instead of Start; once per earlier team. */
    void StartAfter(Ptr<CollectiveTeam> first);
    /** Start every rank now (a Job's collective step, when its last rank is ready). */
    void StartNow();
    /** Called with the rank's number when a rank finishes (a Job's step ends on that rank). */
    void SetRankListener(std::function<void(uint32_t)> listener);

    uint32_t GetNRanks() const;
    /** out[rank * CollectiveRank::NUM_STATS + k] = CollectiveRank::Stats. */
    void GetStats(uint64_t* out, std::size_t n) const;
    /** Every rank records its protocol events (CollectiveRank::RecordEvents); before Start. */
    void RecordEvents();
    /** Protocol events recorded by all ranks. */
    std::size_t GetEventCount() const;
    /** Values per event in GetEvents: rank, time in ps, kind, source, value, count. */
    static constexpr std::size_t EVENT_FIELDS = 6;
    /** out[i * EVENT_FIELDS + k]: the events, rank by rank, each rank's in the order they happened.
     */
    void GetEvents(int64_t* out, std::size_t n) const;

  protected:
    void DoDispose() override;

  private:
    /** The extra rings a rank asks for (GetRingDistances): rank r to rank r + d, one RC QP pair
     * each. */
    void ConnectRings(Ptr<RdmaStack> stack, const std::vector<uint32_t>& team);
    void StartAll();
    void RankFinished(uint32_t rank); //!< one of the ranks finished

    std::vector<Ptr<CollectiveRank>> m_ranks;
    uint64_t m_bytesPerRank;                  //!< "BytesPerRank"
    uint32_t m_firstGroup;                    //!< "FirstGroup"
    std::size_t m_finished;                   //!< ranks finished
    std::vector<Ptr<CollectiveTeam>> m_then;  //!< the teams that wait for every rank here to finish
    std::size_t m_waiting = 0;                //!< earlier teams (StartAfter) not finished yet
    std::function<void(uint32_t)> m_listener; //!< SetRankListener's
};

} // namespace mcsim
} // namespace ns3
