// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "drop-cause.h"

#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/random-variable-stream.h"

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * @brief The faults of one direction of a link (set up before the run): random loss, chosen
 * packets, down intervals. Decides, at each arrival, whether and why the packet is lost.
 *
 * With LossProbability > 0 it draws one uniform per arrival whatever the other causes decide, so
 * the random losses do not depend on them.
 */
class LinkFaults
{
  public:
    LinkFaults();

    /**
     * Probability that a packet is lost on the wire; p > 0 creates the uniform random variable:
     * give it a stream with AssignStreams afterwards.
     * @throws std::invalid_argument unless 0 <= p < 1
     */
    void SetLossProbability(double p);
    double GetLossProbability() const;
    /**
     * Give the loss random variable (if any) the stream `stream`.
     * @return streams used: 1 if there is a loss random variable, else 0
     * @throws std::invalid_argument for a negative stream
     */
    int64_t AssignStreams(int64_t stream);
    /** Lose the packets with these 0-based commit indexes (any order, duplicates ignored). */
    void SetChosenDrops(const uint64_t* indexes, std::size_t n);
    /**
     * Down during [down, up) ps for each of the n rows of downUpPs (any order; overlapping
     * intervals merge).
     * @throws std::invalid_argument for down < 0 or up <= down
     */
    void SetDownIntervals(const int64_t* downUpPs, std::size_t n);

    /** Any fault is set. */
    bool Any() const;

    /**
     * Whether (NONE: not lost) and why (LINK_DOWN, CHOSEN, RANDOM, checked in this order) the
     * index-th packet committed on the link, arriving at now, is lost.
     * Called once per arrival, in arrival order (times and indexes ascending).
     */
    DropCause Decide(uint64_t index, Time now);

    /** Drop the random variable (DoDispose). */
    void Dispose();

  private:
    double m_lossProbability;                  //!< "LossProbability"
    Ptr<UniformRandomVariable> m_lossRng;      //!< only when m_lossProbability > 0
    std::vector<uint64_t> m_chosen;            //!< packet indexes to lose, sorted, unique
    std::size_t m_chosenNext;                  //!< first entry of m_chosen not yet passed
    std::vector<std::pair<Time, Time>> m_down; //!< [down, up) intervals, sorted, disjoint
    std::size_t m_downNext;                    //!< first interval not yet over
};

} // namespace mcsim
} // namespace ns3
