// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/mcsim/completion-processor.h"
#include "ns3/mcsim/rc-qp.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * @brief Software barriers over RC, as the SC'24 artifact runs them before every collective
 * (an all-reduce of nothing): dissemination, ceil(log2 P) rounds each.
 *
 * The model: collectives/doc/collectives.md, "RcBarrier".
 */
class RcBarrier
{
  public:
    /** Rounds of one barrier among P ranks: ceil(log2 P) (0 for one rank). */
    static uint32_t Rounds(uint32_t ranks);

    /**
     * Run `barriers` barriers on these QPs (Rounds(P) each way), then call done. Posts the
     * receives the barriers need.
     */
    void Setup(uint32_t barriers,
               std::vector<Ptr<RcQp>> out,
               std::vector<Ptr<RcQp>> in,
               std::function<void()> done);
    /** Begin the first barrier now (done at once if there is none). */
    void Start();
    /** A send completion: true if it was one of the barrier's. */
    bool OnSendComplete(uint32_t qpn, uint64_t wrId);
    /** A receive completion: true if it was one of the barrier's. */
    bool OnReceive(const Completion& c);
    /** Barrier steps (rounds of all barriers) finished so far. */
    uint32_t GetSteps() const;
    void Dispose();

    static constexpr uint64_t WR_TAG = 0xBA44ULL << 48; //!< wrId of a barrier SEND: tag | step

  private:
    void Post();    //!< SEND this step's message
    void Advance(); //!< finish steps whose SEND completed and whose message is here

    std::vector<Ptr<RcQp>> m_out;
    std::vector<Ptr<RcQp>> m_in;
    std::function<void()> m_done;
    uint32_t m_total = 0;           //!< barriers x rounds
    uint32_t m_step = 0;            //!< the step in progress
    bool m_started = false;         //!< Start was called
    bool m_acked = false;           //!< the current step's SEND completed
    std::vector<uint8_t> m_arrived; //!< step -> its partner's message is here
};

} // namespace mcsim
} // namespace ns3
