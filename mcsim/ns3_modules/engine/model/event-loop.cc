// SPDX-License-Identifier: GPL-2.0-only
#include "event-loop.h"

#include "invariant.h"
#include "wheel-scheduler.h"

#include "ns3/abort.h"

#include <stdexcept>
#include <string>
#include <thread>

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(EventLoop);

EventLoop* EventLoop::s_current = nullptr;

Time
SimulatorNow()
{
    return Simulator::Now();
}

TypeId
EventLoop::GetTypeId()
{
    static TypeId tid = TypeId("ns3::mcsim::EventLoop")
                            .SetParent<SimulatorImpl>()
                            .SetGroupName("Mcsim")
                            .AddConstructor<EventLoop>();
    return tid;
}

EventLoop::EventLoop()
    : m_wheel(nullptr),
      m_stop(false),
      m_uid(EventId::UID::VALID),
      m_currentUid(EventId::UID::INVALID),
      m_currentTs(0),
      m_maxOrder(0),
      m_currentContext(Simulator::NO_CONTEXT),
      m_unscheduledEvents(0),
      m_eventCount(0),
      m_pastLimitTs(0),
      m_mainThread(std::this_thread::get_id()),
      m_plan(EventClass::CONTROL),
      m_lastDeferredTs(0),
      m_catchingUp(false),
      m_watcher(nullptr),
      m_lookTs(Watcher::NO_LOOK)
{
    m_plan.Place(0, unit::PLAN);
}

EventLoop::~EventLoop()
{
    if (s_current == this)
    {
        s_current = nullptr;
    }
}

void
EventLoop::DoDispose()
{
    if (s_current == this)
    {
        s_current = nullptr;
    }
    if (m_events)
    {
        DropQueued();
    }
    m_deferred.Clear();
    m_watcher = nullptr;
    m_lookTs = Watcher::NO_LOOK;
    m_events = nullptr;
    m_wheel = nullptr;
    SimulatorImpl::DoDispose();
}

void
EventLoop::Destroy()
{
    while (!m_destroyEvents.empty())
    {
        Ptr<EventImpl> ev = m_destroyEvents.front().PeekEventImpl();
        m_destroyEvents.pop_front();
        if (!ev->IsCancelled())
        {
            ev->Invoke();
        }
    }
    DropQueued();
    m_deferred.Clear();
    m_watcher = nullptr;
    m_lookTs = Watcher::NO_LOOK;
    if (s_current == this) // Simulator::Destroy(): no longer the simulator
    {
        s_current = nullptr;
    }
}

void
EventLoop::DropQueued()
{
    while (!m_events->IsEmpty())
    {
        m_events->RemoveNext().impl->Unref();
    }
}

void
EventLoop::SetScheduler(ObjectFactory schedulerFactory)
{
    Ptr<Scheduler> scheduler = schedulerFactory.Create<Scheduler>();
    auto* wheel = dynamic_cast<WheelScheduler*>(PeekPointer(scheduler));
    while (m_events && !m_events->IsEmpty())
    {
        // from wheel to wheel events keep their order keys; else they keep their uids only
        if (m_wheel != nullptr && wheel != nullptr)
        {
            wheel->InsertQueued(m_wheel->RemoveNextQueued());
        }
        else
        {
            scheduler->Insert(m_events->RemoveNext());
        }
    }
    m_events = scheduler;
    m_wheel = wheel;
    // the Simulator calls this on the implementation it has just made (an EventLoop made by an
    // ObjectFactory elsewhere is not the simulator, and must not take the direct path)
    s_current = this;
}

uint32_t
EventLoop::GetSystemId() const
{
    return 0;
}

void
EventLoop::PastClockLimit(uint64_t ts)
{
    if (m_pastLimitTs == 0)
    {
        m_pastLimitTs = ts;
    }
    m_stop = true;
}

void
EventLoop::Insert(uint64_t ts, uint32_t context, EventImpl* event)
{
    Queue({event, ts, SCHEDULED_ORDER_KEY, m_uid, context});
    m_uid++;
}

void
EventLoop::InsertKeyed(uint64_t ts, EventImpl* event, uint64_t order, uint32_t seq)
{
    if (m_wheel == nullptr) [[unlikely]]
    {
        // another scheduler orders by uid only: the order of posting (not the canonical one)
        Insert(ts, m_currentContext, event);
        return;
    }
    Queue({event, ts, order, seq, m_currentContext});
}

void
EventLoop::Queue(const QueuedEvent& ev)
{
    if (m_catchingUp) [[unlikely]]
    {
        throw std::logic_error("mcsim::EventLoop: a deferred item posted an event (the model "
                               "deferred work that is not deferrable; engine.md, Deferred work)");
    }
    if (ev.ts > CLOCK_LIMIT_STEPS) [[unlikely]]
    {
        PastClockLimit(ev.ts); // queued all the same: the loop stops before it, never runs again
    }
    m_unscheduledEvents++;
    if (m_wheel != nullptr)
    {
        m_wheel->WheelScheduler::InsertQueued(ev);
    }
    else
    {
        m_events->Insert(ev.ToEvent());
    }
}

bool
EventLoop::QueueEmpty() const
{
    return m_wheel != nullptr ? m_wheel->WheelScheduler::IsEmpty() : m_events->IsEmpty();
}

void
EventLoop::ProcessOneEvent()
{
    const QueuedEvent next = m_wheel != nullptr ? m_wheel->WheelScheduler::RemoveNextQueued()
                                                : QueuedEvent::Of(m_events->RemoveNext());
    MCSIM_ASSERT(next.ts >= m_currentTs, "EventLoop: an event before the clock");
    if (next.ts > m_lookTs) [[unlikely]]
    {
        LookBefore(next.ts); // every event up to the looks has run, none after them
    }
    m_unscheduledEvents--;
    m_eventCount++;
    // an event posted for the current time stamp may have a lower key than one already run
    m_maxOrder = next.ts != m_currentTs ? next.order : std::max(m_maxOrder, next.order);
    if (m_deferred.Any())
    {
        CatchUpBefore(next);
    }
    m_currentTs = next.ts;
    m_currentContext = next.context;
    // an event with a source runs before every one without at its time stamp (IsExpired)
    m_currentUid = next.Unsourced() ? next.uid : 0;
    next.impl->Invoke();
    next.impl->Unref();
}

void
EventLoop::CatchUpBefore(const QueuedEvent& next)
{
    // the items placed before any event run so far: each would have run before that one
    if (next.Unsourced() || UnitOf(next.order) == unit::PLAN)
    {
        CatchingUp guard(this);
        m_deferred.CatchUpAll(next.ts, m_maxOrder);
    }
    else if (const uint32_t node = NodeOf(next.order); m_deferred.Has(node))
    {
        CatchingUp guard(this);
        m_deferred.CatchUpNode(node, next.ts, m_maxOrder);
    }
}

void
EventLoop::FinishDeferred()
{
    const uint64_t last = m_currentTs;
    {
        CatchingUp guard(this);
        m_deferred.CatchUpAll(UINT64_MAX, UINT64_MAX);
    }
    m_currentTs = std::max(last, m_lastDeferredTs);
}

void
EventLoop::Watch(Watcher* w, uint64_t firstTs)
{
    if (m_watcher != nullptr && m_watcher != w)
    {
        throw std::invalid_argument("mcsim::EventLoop::Watch: another watcher is set (one at a "
                                    "time)");
    }
    if (firstTs < m_currentTs)
    {
        throw std::invalid_argument("mcsim::EventLoop::Watch: a first look at " +
                                    std::to_string(firstTs) + " ps is in the past (now " +
                                    std::to_string(m_currentTs) + " ps)");
    }
    m_watcher = w;
    m_lookTs = firstTs;
}

void
EventLoop::Unwatch(Watcher* w)
{
    if (m_watcher == w)
    {
        m_watcher = nullptr;
        m_lookTs = Watcher::NO_LOOK;
    }
}

bool
EventLoop::IsFinished() const
{
    return m_events->IsEmpty() || m_stop;
}

void
EventLoop::Run()
{
    m_mainThread = std::this_thread::get_id();
    m_stop = m_pastLimitTs != 0; // past the clock's limit, a run cannot go on
    while (!QueueEmpty() && !m_stop)
    {
        ProcessOneEvent();
    }
    if (!m_stop && m_deferred.Any())
    {
        FinishDeferred();
    }
    MCSIM_ASSERT(!m_events->IsEmpty() || m_unscheduledEvents == 0,
                 "EventLoop: events counted but none queued");
}

void
EventLoop::Stop()
{
    m_stop = true;
}

EventId
EventLoop::Stop(const Time& delay)
{
    return Simulator::Schedule(delay, &Simulator::Stop);
}

EventId
EventLoop::Schedule(const Time& delay, EventImpl* event)
{
    MCSIM_ASSERT(delay.IsPositive(), "EventLoop::Schedule(): negative delay");
    const uint32_t uid = m_uid;
    const uint64_t ts = m_currentTs + static_cast<uint64_t>(delay.GetTimeStep());
    Insert(ts, m_currentContext, event);
    return EventId(event, ts, m_currentContext, uid);
}

void
EventLoop::ScheduleWithContext(uint32_t context, const Time& delay, EventImpl* event)
{
    NS_ABORT_MSG_IF(std::this_thread::get_id() != m_mainThread,
                    "mcsim::EventLoop: ScheduleWithContext from another thread than Run()'s");
    Insert(m_currentTs + static_cast<uint64_t>(delay.GetTimeStep()), context, event);
}

EventId
EventLoop::ScheduleNow(EventImpl* event)
{
    return Schedule(Time(0), event);
}

EventId
EventLoop::ScheduleDestroy(EventImpl* event)
{
    EventId id(Ptr<EventImpl>(event, false), m_currentTs, 0xffffffff, EventId::UID::DESTROY);
    m_destroyEvents.push_back(id);
    m_uid++;
    return id;
}

Time
EventLoop::Now() const
{
    return TimeStep(m_currentTs);
}

Time
EventLoop::GetDelayLeft(const EventId& id) const
{
    if (IsExpired(id))
    {
        return TimeStep(0);
    }
    return TimeStep(id.GetTs() - m_currentTs);
}

void
EventLoop::Remove(const EventId& id)
{
    if (id.GetUid() == EventId::UID::DESTROY)
    {
        for (auto i = m_destroyEvents.begin(); i != m_destroyEvents.end(); ++i)
        {
            if (*i == id)
            {
                m_destroyEvents.erase(i);
                break;
            }
        }
        return;
    }
    if (IsExpired(id))
    {
        return;
    }
    Scheduler::Event event;
    event.impl = id.PeekEventImpl();
    event.key.m_ts = id.GetTs();
    event.key.m_context = id.GetContext();
    event.key.m_uid = id.GetUid();
    m_events->Remove(event); // (an event with an EventId has no source)
    event.impl->Cancel();
    event.impl->Unref(); // the queue's reference
    m_unscheduledEvents--;
}

void
EventLoop::Cancel(const EventId& id)
{
    if (!IsExpired(id))
    {
        id.PeekEventImpl()->Cancel();
    }
}

bool
EventLoop::IsExpired(const EventId& id) const
{
    if (id.GetUid() == EventId::UID::DESTROY)
    {
        if (id.PeekEventImpl() == nullptr || id.PeekEventImpl()->IsCancelled())
        {
            return true;
        }
        for (const EventId& pending : m_destroyEvents)
        {
            if (pending == id)
            {
                return false;
            }
        }
        return true;
    }
    return id.PeekEventImpl() == nullptr || id.GetTs() < m_currentTs ||
           (id.GetTs() == m_currentTs && id.GetUid() <= m_currentUid) ||
           id.PeekEventImpl()->IsCancelled();
}

Time
EventLoop::GetMaximumSimulationTime() const
{
    return TimeStep(0x7fffffffffffffffLL);
}

uint32_t
EventLoop::GetContext() const
{
    return m_currentContext;
}

uint64_t
EventLoop::GetEventCount() const
{
    return m_eventCount;
}

} // namespace mcsim
} // namespace ns3
