// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "collective-team.h"

#include "ns3/mcsim/event-order.h"
#include "ns3/mcsim/rdma-stack.h"
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
 * @brief A job: its ranks run one graph of steps, every rank every step. A step is compute of a
 * duration, a collective (a CollectiveTeam on the job's hosts, set up and not started) or a
 * transfer. A rank's step is ready once the steps it depends on have ended on the rank (a
 * dependency holds on every rank or on one: a graph per rank, whose steps of one rank's own are
 * compute of 0 or transfers with nothing on the other ranks, passing at once there). A compute step
 * starts when ready and a compute unit of its rank is free (ComputeUnits per rank, 0: no limit;
 * ready steps wait in the order they became ready), and ends its duration later. A collective step
 * starts on every rank at once, when its last rank is ready (a rank waits for the others to enter
 * it), and ends on a rank when the rank has its output. A transfer step moves messages between
 * ranks: a message leaves its sender's step and arrives in its receiver's step (the same one or
 * another), one RC RDMA WRITE with immediate (its number) from the start of the sender's region to
 * the start of the receiver's, posted once its sender is ready for its step (eager: the receiver's
 * buffer and receive are posted in advance, as NCCL's are); the step ends on a rank once it is
 * ready, its messages out are acknowledged and its messages in have arrived (at once on a rank with
 * none left). Several jobs on one RdmaStack share its NICs and links. The timeline (per step and
 * rank: ready, start, end) is read in bulk after the run.
 */
class Job : public Object, public QpOwner
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
    /** Step `step` is a transfer: its messages are those AddMessages names it in. */
    void SetTransfer(uint32_t step);
    /**
     * Messages, n of them: message i leaves step from[2i] on rank from[2i+1] for step to[2i] on
     * rank to[2i+1] (both transfer steps), bytes[i] bytes; one RC QP pair per pair of ranks
     * (created here, on `stack`); call once.
     * @throws std::invalid_argument for a rank or step out of range, a message to its own rank,
     * 0 bytes or more than the stack's region
     */
    void AddMessages(Ptr<RdmaStack> stack,
                     const uint32_t* from,
                     const uint32_t* to,
                     const uint64_t* bytes,
                     std::size_t n);
    /** Every rank (AddDependency's rank). */
    static constexpr uint32_t ALL_RANKS = UINT32_MAX;
    /** On rank `rank` (ALL_RANKS: on every rank), step `step` waits for step `on` to end.
     * @throws std::invalid_argument for a step or a rank out of range */
    void AddDependency(uint32_t step, uint32_t on, uint32_t rank = ALL_RANKS);
    /** Start the job at an absolute time: the steps without dependencies are ready then.
     * @throws std::invalid_argument if a step is unset */
    void Start(Time at);

    /** Values per step and rank in the timeline: ready, start, end. */
    static constexpr std::size_t TIMES = 3;
    /** out[(step * ranks + rank) * TIMES + k]: ready, start and end in ps (-1: never). */
    void GetTimeline(int64_t* out, std::size_t n) const;
    /** A message's state bits: acknowledged at its sender, arrived at its receiver. */
    static constexpr uint8_t ACKED = 1;
    static constexpr uint8_t ARRIVED = 2;
    /** out[i]: message i's state bits (ACKED, ARRIVED; 0: neither), in AddMessages' order; read
     * after the run (n: the messages given). */
    void GetMessageStates(uint8_t* out, std::size_t n) const;

    void OnSendComplete(uint32_t host, uint32_t qpn, uint64_t wrId) override;
    void OnReceive(uint32_t host, const Completion& c) override;

  protected:
    void DoDispose() override;

  private:
    enum class Kind
    {
        UNSET,
        COMPUTE,
        COLLECTIVE,
        TRANSFER,
    };

    struct Message
    {
        uint32_t from;    //!< its sender's (step, rank): step * ranks + rank
        uint32_t to;      //!< its receiver's
        uint64_t bytes;   //!< payload
        Ptr<RcQp> qp;     //!< the sender's QP to the receiver
        uint8_t done = 0; //!< ACKED, ARRIVED: what has happened to it (read after the run)
    };

    struct Step
    {
        Kind kind = Kind::UNSET;
        std::vector<int64_t> durations; //!< compute: ps, one for all ranks or one per rank
        Ptr<CollectiveTeam> team;       //!< collective
        //! the steps that wait for this one, each on a rank or ALL_RANKS
        std::vector<std::pair<uint32_t, uint32_t>> dependents;
        uint32_t deps = 0;              //!< the steps it waits for on every rank
        std::vector<uint32_t> rankDeps; //!< and one more on each rank listed
        uint32_t readyRanks = 0;        //!< collective: ranks ready so far
    };

    Step& At(uint32_t step);
    void StartAll();                          //!< every step without dependencies is ready
    void Ready(uint32_t step, uint32_t rank); //!< its dependencies have ended on the rank
    void Begin(uint32_t step);                //!< a collective starts on every rank
    void End(uint32_t step, uint32_t rank);
    void Compute(uint32_t step, uint32_t rank); //!< a compute step starts on a free unit
    int64_t& Time3(uint32_t step, uint32_t rank, std::size_t k);
    void Transfer(uint32_t step, uint32_t rank); //!< ready: post its messages out
    void Arrived(uint32_t side);                 //!< one of a (step, rank)'s messages is done
    void Indices();                              //!< the (step, rank) -> messages index

    std::vector<uint32_t> m_hosts;
    std::vector<Step> m_steps;
    std::vector<uint32_t> m_waiting;    //!< per step and rank: dependencies not ended yet
    std::vector<int64_t> m_times;       //!< per step and rank: ready, start, end (-1: never)
    std::vector<EventSource> m_sources; //!< per rank: its compute steps' ends
    std::vector<uint32_t> m_busy;       //!< per rank: compute units in use
    std::vector<std::deque<uint32_t>>
        m_queued; //!< per rank: ready compute steps waiting for a unit
    std::vector<Message> m_messages;
    std::vector<uint32_t> m_sideStart; //!< per (step, rank) + 1: where its messages start
    std::vector<uint32_t>
        m_sideList;                  //!< the messages of each (step, rank), sender's and receiver's
    std::vector<uint32_t> m_pending; //!< per (step, rank): its messages not done yet
    uint32_t m_id;                   //!< "Id": its event sources' unit
    uint32_t m_units;                //!< "ComputeUnits"
};

} // namespace mcsim
} // namespace ns3
