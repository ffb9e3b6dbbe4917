// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "deferred-work.h"
#include "event-order.h"
#include "watcher.h"

#include "ns3/event-impl.h"
#include "ns3/nstime.h"
#include "ns3/scheduler.h"
#include "ns3/simulator-impl.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cstdint>
#include <list>
#include <thread>

namespace ns3
{
namespace mcsim
{

class WheelScheduler;
struct QueuedEvent;

/**
 * @brief The simulator of every mcsim run: ns3::DefaultSimulatorImpl's semantics, single-threaded
 * and with a direct path for the per-packet models.
 *
 * The model: engine/doc/engine.md, "EventLoop".
 */
class EventLoop final : public SimulatorImpl
{
  public:
    static TypeId GetTypeId();
    EventLoop();
    ~EventLoop() override;

    void Destroy() override;
    bool IsFinished() const override;
    void Stop() override;
    EventId Stop(const Time& delay) override;
    EventId Schedule(const Time& delay, EventImpl* event) override;
    void ScheduleWithContext(uint32_t context, const Time& delay, EventImpl* event) override;
    EventId ScheduleNow(EventImpl* event) override;
    EventId ScheduleDestroy(EventImpl* event) override;
    void Remove(const EventId& id) override;
    void Cancel(const EventId& id) override;
    bool IsExpired(const EventId& id) const override;
    void Run() override;
    Time Now() const override;
    Time GetDelayLeft(const EventId& id) const override;
    Time GetMaximumSimulationTime() const override;
    void SetScheduler(ObjectFactory schedulerFactory) override;
    uint32_t GetSystemId() const override;
    uint32_t GetContext() const override;
    uint64_t GetEventCount() const override;

    /** The simulator's EventLoop (the last one given a scheduler and not destroyed since), or
     * nullptr if the simulator is another implementation or none exists yet. */
    static EventLoop* Current()
    {
        return s_current;
    }

    /**
     * The simulated clock's limit in time steps (ps; mcsim.units.MAX_SIMULATED_PS): ns-3's Time is
     * a signed 64-bit integer, and a run stops before any event past 2^62 ps (53.4 days), so that
     * a time on the clock plus any one delay (mcsim bounds each by the limit too) never overflows.
     */
    static constexpr uint64_t CLOCK_LIMIT_STEPS = uint64_t{1} << 62;

    /** The time stamp of the first event scheduled past CLOCK_LIMIT_STEPS (the run stopped before
     * it), or 0 if none was. */
    uint64_t ClockLimitEvent() const
    {
        return m_pastLimitTs;
    }

    /** The source of the run's planned events (EventClass::CONTROL: starts of collectives and
     * operations, route updates), which run in the order they were planned. */
    EventSource& Plan()
    {
        return m_plan;
    }

    /** Run w's items (DeferredWork) before the events of node that come after them; w calls this
     * when it defers an item while it has none left (listing it again is harmless). */
    void Defer(DeferredWork* w, uint32_t node)
    {
        m_deferred.Add(w, node);
    }

    /** w goes away: its items are never run (the simulation is being disposed). */
    void Forget(DeferredWork* w)
    {
        m_deferred.Remove(w);
    }

    /** Run the deferred items of node placed before the event now running (or any run before it
     * at this time stamp): a packet handed to the node by another node's event calls this before
     * it reads the node's state. */
    void CatchUpNode(uint32_t node)
    {
        if (m_deferred.Has(node))
        {
            const uint64_t now = m_currentTs;
            CatchingUp guard(this);
            m_deferred.CatchUpNode(node, now, m_maxOrder);
            m_currentTs = now;
        }
    }

    /** Whether (ts, order) comes after every event run so far: only such work may be deferred
     * (an event posted for the current time stamp with a lower key than one already run would
     * run next, in key order among the queued, which deferred work cannot do). */
    bool Ahead(uint64_t ts, uint64_t order) const
    {
        return PlacedBefore(m_currentTs, m_maxOrder, ts, order);
    }

    /** A deferred item runs now: Now() is its time stamp (ts) while it runs (DeferredWork). */
    void AtDeferred(uint64_t ts)
    {
        m_currentTs = ts;
        m_lastDeferredTs = std::max(m_lastDeferredTs, ts);
    }

    /** The current time stamp (Now() in time steps). */
    uint64_t NowSteps() const
    {
        return m_currentTs;
    }

    /**
     * Call w->Look(ts) at ts = firstTs and then at each time stamp it returns, once every event
     * up to ts has run and before any later one (engine.md, "Watchers"); and up to the clock's
     * time when asked (LookUntilNow). One watcher at a time.
     * @throws std::invalid_argument if another watcher is set
     */
    void Watch(Watcher* w, uint64_t firstTs);

    /** w goes away: never call it again (no-op if it is not the one watching). */
    void Unwatch(Watcher* w);

    /** Give the watcher its looks at every time stamp up to Now() (the run is over, or stopped). */
    void LookUntilNow()
    {
        LookBefore(m_currentTs + 1);
    }

    /** Schedule(delay, event) without an EventId; takes a reference to event. */
    void Post(const Time& delay, EventImpl* event)
    {
        event->Ref();
        Insert(m_currentTs + static_cast<uint64_t>(delay.GetTimeStep()), m_currentContext, event);
    }

    /** Post(delay, event) as source's next event: in the canonical order, not by uid. */
    void Post(const Time& delay, EventImpl* event, EventSource& source)
    {
        event->Ref();
        InsertKeyed(m_currentTs + static_cast<uint64_t>(delay.GetTimeStep()),
                    event,
                    source.Key(),
                    source.NextSeq());
    }

  protected:
    void DoDispose() override;

  private:
    /** The watcher's looks at every time stamp before ts. */
    void LookBefore(uint64_t ts)
    {
        while (m_lookTs < ts)
        {
            m_lookTs = m_watcher->Look(m_lookTs);
        }
    }

    /** Queue event at time stamp ts with the next uid (past the clock's limit: stop the run). */
    void Insert(uint64_t ts, uint32_t context, EventImpl* event);
    /** Queue event at ts with a source's order key and sequence number (no uid). */
    void InsertKeyed(uint64_t ts, EventImpl* event, uint64_t order, uint32_t seq);
    /** Queue ev (past the clock's limit: stop the run); both inserts end here. */
    void Queue(const QueuedEvent& ev);
    /** An event was scheduled at ts > CLOCK_LIMIT_STEPS: stop the run after the current event. */
    void PastClockLimit(uint64_t ts);
    void ProcessOneEvent();
    /** Unref and drop every queued event (Destroy, DoDispose). */
    void DropQueued();

    /** Deferred items run: no event may be posted (an item that would post is not deferrable). */
    struct CatchingUp
    {
        explicit CatchingUp(EventLoop* loop)
            : m_loop(loop)
        {
            m_loop->m_catchingUp = true;
        }

        ~CatchingUp()
        {
            m_loop->m_catchingUp = false;
        }

        CatchingUp(const CatchingUp&) = delete;
        CatchingUp& operator=(const CatchingUp&) = delete;
        EventLoop* m_loop;
    };

    /** Run the deferred items due before next (its node's; every node's before the plan's
     * events and events without a source). */
    void CatchUpBefore(const QueuedEvent& next);
    /** The queue is empty, the run is over: run every deferred item left (Now() ends at the
     * last one's time stamp, as if it had been an event). */
    void FinishDeferred();

    /** m_events->IsEmpty(), without the virtual call when it is the wheel. */
    bool QueueEmpty() const;

    static EventLoop* s_current; //!< the loop the direct path uses

    Ptr<Scheduler> m_events;
    WheelScheduler* m_wheel; //!< m_events if it is a WheelScheduler (called directly), else null
    bool m_stop;
    uint32_t m_uid;                     //!< the next event's uid
    uint32_t m_currentUid;              //!< the uid of the event running (0: it has a source)
    uint64_t m_currentTs;               //!< its time stamp
    uint64_t m_maxOrder;                //!< the greatest order key run at this time stamp
    uint32_t m_currentContext;          //!< its context
    uint64_t m_unscheduledEvents;       //!< queued, not yet run
    uint64_t m_eventCount;              //!< run
    uint64_t m_pastLimitTs;             //!< see ClockLimitEvent()
    std::list<EventId> m_destroyEvents; //!< run by Destroy(), in order
    std::thread::id m_mainThread;       //!< the thread that made it, then the one that ran it
    EventSource m_plan;                 //!< see Plan()
    DeferredWorks m_deferred;           //!< works with deferred items left
    uint64_t m_lastDeferredTs;          //!< the latest time stamp a deferred item ran at
    bool m_catchingUp;                  //!< deferred items are running: posting is a bug
    Watcher* m_watcher;                 //!< see Watch() (null: none) ...
    uint64_t m_lookTs;                  //!< ... and its next look (Watcher::NO_LOOK: none)
};

/** Simulator::Now() (Now()'s path when the simulator is not an EventLoop; out of line). */
Time SimulatorNow();

/** Simulator::Now(), directly from the EventLoop when it is the simulator. */
[[gnu::always_inline]] inline Time
Now()
{
    const EventLoop* loop = EventLoop::Current();
    return loop != nullptr ? TimeStep(loop->NowSteps()) : SimulatorNow();
}

/** Simulator::Schedule(delay, event) for an event that is never cancelled (see EventLoop). */
inline void
Post(const Time& delay, const Ptr<EventImpl>& event)
{
    EventLoop* loop = EventLoop::Current();
    if (loop != nullptr)
    {
        loop->Post(delay, PeekPointer(event));
    }
    else
    {
        Simulator::Schedule(delay, event);
    }
}

/**
 * Post(delay, event) as source's next event: it runs in the canonical same-time order (class,
 * source key, source sequence; engine/doc/engine.md). Under another simulator than the
 * EventLoop it is Simulator::Schedule (and the order that simulator's).
 */
inline void
Post(const Time& delay, const Ptr<EventImpl>& event, EventSource& source)
{
    EventLoop* loop = EventLoop::Current();
    if (loop != nullptr)
    {
        loop->Post(delay, PeekPointer(event), source);
    }
    else
    {
        source.NextSeq();
        Simulator::Schedule(delay, event);
    }
}

/**
 * Simulator::Schedule(delay, event) for a planned event of the run (EventClass::CONTROL, see
 * EventLoop::Plan()): setup code that starts things at given times.
 */
inline void
PostPlanned(const Time& delay, EventImpl* event)
{
    EventLoop* loop = EventLoop::Current();
    const Ptr<EventImpl> owned(event, false);
    if (loop != nullptr)
    {
        Post(delay, owned, loop->Plan());
    }
    else
    {
        Simulator::Schedule(delay, owned);
    }
}

} // namespace mcsim
} // namespace ns3
