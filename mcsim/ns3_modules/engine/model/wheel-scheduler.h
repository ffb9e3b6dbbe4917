// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "event-heap.h"

#include "ns3/scheduler.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * @brief An event scheduler on a timing wheel: the default of every mcsim run.
 *
 * The model: engine/doc/engine.md, "WheelScheduler".
 */
class WheelScheduler : public Scheduler
{
  public:
    static TypeId GetTypeId();
    WheelScheduler();
    ~WheelScheduler() override;

    /** ns-3's Scheduler: an event without a source (order key SCHEDULED_ORDER_KEY). */
    void Insert(const Event& ev) override;
    bool IsEmpty() const override;
    Event PeekNext() const override;
    Event RemoveNext() override;
    /** @throws std::invalid_argument if ev (an event without a source) is not queued */
    void Remove(const Event& ev) override;

    /** Queue an event in the canonical order (the EventLoop's path). */
    void InsertQueued(const QueuedEvent& ev);
    /** Remove the next event in the canonical order (not empty). */
    QueuedEvent RemoveNextQueued();

    static constexpr uint32_t SLOT_BITS = 10;  //!< a slot spans 2^10 ps
    static constexpr uint32_t WHEEL_BITS = 14; //!< 2^14 slots

    /**
     * Run control (see RunControl): from now on, call Simulator::Stop() once the wall clock passes
     * `deadline` (looked at every RunControl::CHECK_EVERY events); nullopt: never. Clears
     * Stopped().
     */
    static void StopAt(std::optional<std::chrono::steady_clock::time_point> deadline);
    /** True if the deadline stopped the simulation since the last StopAt. */
    static bool Stopped();

  private:
    static void LookAtTheClock();
    static constexpr uint64_t SLOTS = uint64_t{1} << WHEEL_BITS;
    static constexpr uint64_t MASK = SLOTS - 1;
    static constexpr int32_t NONE = -1;
    static constexpr std::size_t INSERTION_SORT_MAX = 32; //!< larger slots use std::sort

    static uint64_t SlotOf(const QueuedEvent& ev)
    {
        return ev.ts >> SLOT_BITS;
    }

    struct Node
    {
        QueuedEvent ev;
        int32_t next;
    };

    /** Make the earliest event available: in m_current (returns true) or at the heap's top. */
    bool Select();
    /** Move the events of absolute slot `slot` into m_current (empty), sorted, earliest first. */
    void Load(uint64_t slot);
    /** The next busy slot at or after absolute slot `from` (< from + SLOTS), or false. */
    bool NextBusy(uint64_t from, uint64_t& slot) const;
    void MarkBusy(uint64_t index);
    void MarkIdle(uint64_t index);

    std::vector<int32_t> m_head;        //!< per slot: first node of its unsorted list, or NONE
    std::vector<Node> m_nodes;          //!< node pool
    int32_t m_free;                     //!< first free node, or NONE
    std::vector<uint64_t> m_busy;       //!< one bit per slot: its list is not empty
    std::vector<uint64_t> m_summary;    //!< one bit per word of m_busy: it is not zero
    std::vector<QueuedEvent> m_current; //!< the events of slot m_cursor, sorted, earliest first ...
    std::size_t m_next;                 //!< ... from this one on (those before it have run)
    uint64_t m_cursor; //!< absolute slot of the last event run (the window's start)
    EventHeap m_far;   //!< events beyond the window
    uint64_t m_count;  //!< events queued
};

} // namespace mcsim
} // namespace ns3
