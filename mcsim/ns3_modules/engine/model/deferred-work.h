// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include <cstdint>
#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * @brief Work a model does without an event of its own (engine/doc/engine.md, "Deferred work").
 *
 * Each item has its place in the canonical order, (time stamp, its owner's order key), as the
 * event it replaces would have. An item may only change state of its node that is read or changed
 * by events of that node (their order key's node), by a packet handed to that node (which calls
 * EventLoop::CatchUpNode first), by the run's plan or by events without a source; and it posts no
 * event. The loop then runs the items due before each such event first: every reader sees the
 * state the items' own events would have left, and the results are those of one event per item.
 */
class DeferredWork
{
  public:
    virtual ~DeferredWork() = default;

    /** Do the items placed before (ts, order), in their order (EventLoop::AtDeferred(ts) before
     * each); return true if some are left. */
    virtual bool CatchUp(uint64_t ts, uint64_t order) = 0;

  private:
    friend class DeferredWorks;
    DeferredWork* m_nextAtNode = nullptr; //!< the next work listed at the same node
    uint32_t m_node = 0;                  //!< where it is listed
    bool m_listed = false;
};

/** @brief The works with items left, by node: what the EventLoop runs before an event. */
class DeferredWorks
{
  public:
    /** w has items at node (from now until its CatchUp returns false); listing twice is one. */
    void Add(DeferredWork* w, uint32_t node);
    /** w goes away: never call it again. */
    void Remove(DeferredWork* w);

    bool Any() const
    {
        return m_listed != 0;
    }

    /** Whether some work with items left is listed at node. */
    bool Has(uint32_t node) const
    {
        return node < m_at.size() && m_at[node] != nullptr;
    }

    /** Run the items of node's works placed before (ts, order) (only if Has(node)). */
    void CatchUpNode(uint32_t node, uint64_t ts, uint64_t order);

    /** Run the items of every node placed before (ts, order). */
    void CatchUpAll(uint64_t ts, uint64_t order);

    /** Forget every work (the simulation is destroyed). */
    void Clear();

  private:
    std::vector<DeferredWork*> m_at; //!< per node: the first work listed there (a chain)
    uint32_t m_listed = 0;           //!< works listed
};

} // namespace mcsim
} // namespace ns3
