// SPDX-License-Identifier: GPL-2.0-only
//
// ns-3 test suite "mcsim-engine": the event loop and scheduler against ns-3's own (this file), and
// the hot path's containers, Fifo and PackedCounters (containers-test.cc).
// Run from Python with mcsim.runtime.run_cxx_test_suite("mcsim-engine")
// (tests/models/engine/test_engine.py).

#include "containers-test.h"
#include "deferred-work-test.h"
#include "event-order-test.h"

#include "ns3/default-simulator-impl.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/wheel-scheduler.h"
#include "ns3/object-factory.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/simulator.h"
#include "ns3/test.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace ns3
{
namespace mcsim
{
namespace
{

Scheduler::Event
MakeEvent(uint64_t ts, uint32_t uid)
{
    Scheduler::Event ev;
    ev.impl = nullptr;
    ev.key.m_ts = ts;
    ev.key.m_uid = uid;
    ev.key.m_context = uid % 7;
    return ev;
}

/**
 * Random inserts, removals of the next event and of arbitrary pending events, and peeks, applied
 * to WheelScheduler and to ns3::PriorityQueueScheduler: both give the same sequence of events,
 * and every inserted event comes out once. Time stamps are a mix of ties (many in one 1 ns slot),
 * events inside the 16.8 us window and events far beyond it, so every path of the wheel runs:
 * slot lists, the sorted current slot, the far heap and the choice between the two.
 */
class WheelOrderTestCase : public TestCase
{
  public:
    WheelOrderTestCase()
        : TestCase("WheelScheduler pops in the same order as PriorityQueueScheduler")
    {
    }

  private:
    void DoRun() override
    {
        Ptr<Scheduler> ours = ObjectFactory("ns3::mcsim::WheelScheduler").Create<Scheduler>();
        Ptr<Scheduler> ref = ObjectFactory("ns3::PriorityQueueScheduler").Create<Scheduler>();
        std::mt19937_64 rng(12345);
        std::vector<Scheduler::Event> pending; // what should be queued, for removals
        uint64_t now = 0;
        uint32_t uid = 0;
        uint64_t popped = 0;
        const uint64_t ranges[] = {64, 1 << 20, 1ULL << 24, 1ULL << 32}; // ps ahead of now
        for (int step = 0; step < 300000; ++step)
        {
            const uint64_t r = rng() % 100;
            if (r < 5 && !ref->IsEmpty())
            {
                // peek: the wheel may load a slot ahead of now; later inserts may come before it
                NS_TEST_ASSERT_MSG_EQ(ours->PeekNext().key.m_uid,
                                      ref->PeekNext().key.m_uid,
                                      "same peek");
            }
            else if (r < 55 || ref->IsEmpty())
            {
                const uint64_t ahead = rng() % ranges[rng() % 4];
                const Scheduler::Event ev = MakeEvent(now + ahead, uid++);
                ours->Insert(ev);
                ref->Insert(ev);
                pending.push_back(ev);
            }
            else if (r < 95)
            {
                const Scheduler::Event a = ours->RemoveNext();
                const Scheduler::Event b = ref->RemoveNext();
                NS_TEST_ASSERT_MSG_EQ(a.key.m_uid, b.key.m_uid, "same next event at step " << step);
                NS_TEST_ASSERT_MSG_EQ(a.key.m_ts, b.key.m_ts, "same time stamp");
                NS_TEST_ASSERT_MSG_EQ(a.key.m_context, b.key.m_context, "context kept");
                now = a.key.m_ts;
                ++popped;
                std::erase_if(pending, [&](const Scheduler::Event& e) {
                    return e.key.m_uid == a.key.m_uid;
                });
            }
            else
            {
                const std::size_t i = rng() % pending.size();
                ours->Remove(pending[i]);
                ref->Remove(pending[i]);
                pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
            }
            NS_TEST_ASSERT_MSG_EQ(ours->IsEmpty(), ref->IsEmpty(), "both empty or both not");
        }
        while (!ref->IsEmpty())
        {
            NS_TEST_ASSERT_MSG_EQ(ours->RemoveNext().key.m_uid,
                                  ref->RemoveNext().key.m_uid,
                                  "drain");
            ++popped;
        }
        NS_TEST_ASSERT_MSG_EQ(ours->IsEmpty(), true, "drained");
        NS_TEST_ASSERT_MSG_GT(popped, 50000, "the test popped many events (40 % of the steps pop)");
    }
};

/**
 * Events with the given time stamps, inserted in this order (uids ascending), come out of
 * WheelScheduler in the same order as out of ns3::PriorityQueueScheduler.
 */
class WheelSlotTestCase : public TestCase
{
  public:
    WheelSlotTestCase(const std::string& name, std::vector<uint64_t> timestamps)
        : TestCase(name),
          m_timestamps(std::move(timestamps))
    {
    }

  private:
    void DoRun() override
    {
        Ptr<Scheduler> ours = ObjectFactory("ns3::mcsim::WheelScheduler").Create<Scheduler>();
        Ptr<Scheduler> ref = ObjectFactory("ns3::PriorityQueueScheduler").Create<Scheduler>();
        uint32_t uid = 0;
        for (uint64_t ts : m_timestamps)
        {
            const Scheduler::Event ev = MakeEvent(ts, uid++);
            ours->Insert(ev);
            ref->Insert(ev);
        }
        while (!ref->IsEmpty())
        {
            NS_TEST_ASSERT_MSG_EQ(ours->RemoveNext().key.m_uid,
                                  ref->RemoveNext().key.m_uid,
                                  "same order");
        }
        NS_TEST_ASSERT_MSG_EQ(ours->IsEmpty(), true, "drained");
    }

    std::vector<uint64_t> m_timestamps;
};

/** 1000 events in one slot in scrambled order, with ties (sorted with std::sort), 20 in the next.
 */
std::vector<uint64_t>
CrowdedSlot()
{
    std::vector<uint64_t> ts;
    for (uint64_t i = 0; i < 1020; ++i)
    {
        // slot 5 is 5120..6143 ps; slot 6 starts at 6144
        ts.push_back(i < 1000 ? 5120 + (i * 7919) % 1000 / 4 : 6144 + (i * 13) % 20);
    }
    return ts;
}

/** 300 events of one time stamp, then 100 later ones in the same slot: a slot already in order. */
std::vector<uint64_t>
SlotInOrder()
{
    std::vector<uint64_t> ts(300, 2048);
    for (uint64_t i = 0; i < 100; ++i)
    {
        ts.push_back(2049 + i);
    }
    return ts;
}

/** Removing an event that is not queued is a C++ exception, not an abort. */
class WheelRemoveMissingTestCase : public TestCase
{
  public:
    WheelRemoveMissingTestCase()
        : TestCase("WheelScheduler::Remove of an unknown event throws")
    {
    }

  private:
    void DoRun() override
    {
        Ptr<Scheduler> s = ObjectFactory("ns3::mcsim::WheelScheduler").Create<Scheduler>();
        s->Insert(MakeEvent(5, 1));
        bool threw = false;
        try
        {
            s->Remove(MakeEvent(5, 2));
        }
        catch (const std::invalid_argument&)
        {
            threw = true;
        }
        NS_TEST_ASSERT_MSG_EQ(threw, true, "unknown uid");
        NS_TEST_ASSERT_MSG_EQ(s->RemoveNext().key.m_uid, 1, "the queued event is intact");
    }
};

/**
 * A random program of events: each event logs its time, label and context, schedules 0-3 more
 * (Simulator::Schedule, ScheduleNow, ScheduleWithContext and mcsim::Post, at delays with many ties
 * and some beyond the wheel's window), and now and then cancels or removes a pending one, asks
 * IsExpired and GetDelayLeft of one, schedules a destroy event or stops the run (the driver runs
 * it again). Its log is the same under ns3::DefaultSimulatorImpl and under EventLoop, both with
 * the WheelScheduler, and under DefaultSimulatorImpl mcsim::Post falls back to the Simulator.
 */
class EventProgram
{
  public:
    explicit EventProgram(uint64_t seed)
        : m_rng(seed)
    {
    }

    /** Run the program on the simulator as it is set up now, then Simulator::Destroy(). */
    std::vector<uint64_t> Run()
    {
        for (uint64_t i = 0; i < 40; ++i)
        {
            m_pending.push_back(
                Simulator::Schedule(PicoSeconds(i / 4 * 1000), &EventProgram::Step, this, i));
        }
        Simulator::ScheduleDestroy(&EventProgram::Destroyed, this, uint64_t{999});
        for (;;)
        {
            Simulator::Run();
            if (!m_stopped)
            {
                break;
            }
            m_stopped = false;
            m_log.push_back(STOPPED);
        }
        m_log.push_back(Simulator::GetEventCount());
        Simulator::Destroy();
        return m_log;
    }

    uint64_t cancels = 0;       //!< Cancel()s of a pending event
    uint64_t removes = 0;       //!< Remove()s of a pending event
    uint64_t stops = 0;         //!< Simulator::Stop()s
    uint64_t ties = 0;          //!< events at the time stamp of the event before them
    uint64_t destroys = 0;      //!< destroy events run
    uint64_t nowMismatches = 0; //!< events where mcsim::Now() differed from Simulator::Now()

  private:
    static constexpr uint64_t STOPPED = ~uint64_t{0};
    static constexpr uint64_t LIMIT = 200000; //!< events that schedule more

    Time Delay()
    {
        switch (m_rng() % 6)
        {
        case 0:
            return Time(0);
        case 1:
        case 2:
            return PicoSeconds(1000 * (m_rng() % 4)); // ties
        case 3:
            return PicoSeconds(m_rng() % (1 << 20));
        case 4:
            return PicoSeconds(m_rng() % (uint64_t{1} << 26)); // beyond the wheel's window
        default:
            return PicoSeconds(m_rng() % 64);
        }
    }

    void Step(uint64_t label)
    {
        const auto now = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
        ties += !m_log.empty() && now == m_lastTs ? 1 : 0;
        m_lastTs = now;
        m_log.push_back(now);
        m_log.push_back(label);
        m_log.push_back(Simulator::GetContext());
        nowMismatches += mcsim::Now() != Simulator::Now() ? 1 : 0;
        if (++m_steps > LIMIT)
        {
            return;
        }
        const uint64_t children = m_rng() % 4;
        for (uint64_t c = 0; c < children; ++c)
        {
            const uint64_t next = m_next++;
            switch (m_rng() % 5)
            {
            case 0:
                mcsim::Post(Delay(),
                            Ptr<EventImpl>(ns3::MakeEvent(&EventProgram::Step, this, next), false));
                break;
            case 1:
                m_pending.push_back(Simulator::ScheduleNow(&EventProgram::Step, this, next));
                break;
            case 2:
                Simulator::ScheduleWithContext(static_cast<uint32_t>(next % 5),
                                               Delay(),
                                               &EventProgram::Step,
                                               this,
                                               next);
                break;
            default:
                m_pending.push_back(Simulator::Schedule(Delay(), &EventProgram::Step, this, next));
            }
        }
        const uint64_t r = m_rng() % 1000;
        if (m_pending.empty())
        {
            return;
        }
        EventId& id = m_pending[m_rng() % m_pending.size()];
        if (r < 40)
        {
            cancels += !id.IsExpired() ? 1 : 0;
            Simulator::Cancel(id);
        }
        else if (r < 80)
        {
            removes += !id.IsExpired() ? 1 : 0;
            Simulator::Remove(id);
        }
        else if (r < 200)
        {
            m_log.push_back(Simulator::IsExpired(id));
            m_log.push_back(static_cast<uint64_t>(Simulator::GetDelayLeft(id).GetPicoSeconds()));
        }
        else if (r < 205)
        {
            Simulator::ScheduleDestroy(&EventProgram::Destroyed, this, label);
        }
        else if (r < 207)
        {
            ++stops;
            m_stopped = true;
            Simulator::Stop();
        }
        if (m_pending.size() > 4096)
        {
            m_pending.erase(m_pending.begin(), m_pending.begin() + 2048);
        }
    }

    void Destroyed(uint64_t label)
    {
        ++destroys;
        m_log.push_back(label);
    }

    std::mt19937_64 m_rng;
    std::vector<uint64_t> m_log;
    std::vector<EventId> m_pending;
    uint64_t m_next = 1000;
    uint64_t m_steps = 0;
    uint64_t m_lastTs = 0;
    bool m_stopped = false;
};

class EventLoopOrderTestCase : public TestCase
{
  public:
    EventLoopOrderTestCase()
        : TestCase("EventLoop runs a random program as DefaultSimulatorImpl does")
    {
    }

  private:
    static std::vector<uint64_t> RunOn(Ptr<SimulatorImpl> impl, EventProgram& program)
    {
        Simulator::Destroy();
        Simulator::SetImplementation(impl);
        Simulator::SetScheduler(ObjectFactory("ns3::mcsim::WheelScheduler"));
        return program.Run();
    }

    void DoRun() override
    {
        for (uint64_t seed : {1, 2, 3})
        {
            EventProgram ref(seed);
            const std::vector<uint64_t> expected = RunOn(CreateObject<DefaultSimulatorImpl>(), ref);
            NS_TEST_ASSERT_MSG_EQ(EventLoop::Current(),
                                  nullptr,
                                  "no direct path under ns-3's simulator");
            EventProgram ours(seed);
            const std::vector<uint64_t> got = RunOn(CreateObject<EventLoop>(), ours);
            NS_TEST_ASSERT_MSG_EQ(EventLoop::Current(), nullptr, "no direct path after Destroy");
            NS_TEST_ASSERT_MSG_EQ(got.size(), expected.size(), "same log length, seed " << seed);
            const std::size_t first = FirstDifference(got, expected);
            NS_TEST_ASSERT_MSG_EQ(first,
                                  got.size(),
                                  "same log, seed " << seed << ", first difference at entry "
                                                    << first);
            // the program exercised what it should
            NS_TEST_ASSERT_MSG_GT(ours.ties, 10000, "many events tie with the one before");
            NS_TEST_ASSERT_MSG_GT(ours.cancels, 100, "cancels of pending events");
            NS_TEST_ASSERT_MSG_GT(ours.removes, 100, "removes of pending events");
            NS_TEST_ASSERT_MSG_GT(ours.stops, 2, "stops");
            NS_TEST_ASSERT_MSG_GT(ours.destroys, 100, "destroy events");
            NS_TEST_ASSERT_MSG_EQ(ours.ties, ref.ties, "same ties");
            NS_TEST_ASSERT_MSG_EQ(ours.nowMismatches + ref.nowMismatches,
                                  0,
                                  "mcsim::Now() is Now()");
        }
    }
};

/** An EventLoop that an ObjectFactory makes is not the simulator: the direct path ignores it. */
class EventLoopNotCurrentTestCase : public TestCase
{
  public:
    EventLoopNotCurrentTestCase()
        : TestCase("An EventLoop is the direct path's only once the Simulator uses it")
    {
    }

  private:
    void DoRun() override
    {
        Simulator::Destroy();
        Ptr<EventLoop> loop = CreateObject<EventLoop>();
        NS_TEST_ASSERT_MSG_EQ(EventLoop::Current(), nullptr, "made, not the simulator");
        Simulator::SetImplementation(loop);
        NS_TEST_ASSERT_MSG_EQ(EventLoop::Current(), PeekPointer(loop), "the simulator's");
        Ptr<EventLoop> other = CreateObject<EventLoop>();
        NS_TEST_ASSERT_MSG_EQ(EventLoop::Current(),
                              PeekPointer(loop),
                              "another one made meanwhile");
        Simulator::Destroy();
        NS_TEST_ASSERT_MSG_EQ(EventLoop::Current(), nullptr, "destroyed");
    }
};

class EngineTestSuite : public TestSuite
{
  public:
    EngineTestSuite()
        : TestSuite("mcsim-engine", Type::UNIT)
    {
        AddTestCase(new WheelOrderTestCase, Duration::QUICK);
        AddTestCase(
            new WheelSlotTestCase("WheelScheduler orders a slot of 1000 events", CrowdedSlot()),
            Duration::QUICK);
        AddTestCase(
            new WheelSlotTestCase("WheelScheduler runs a slot of equal time stamps in uid order",
                                  SlotInOrder()),
            Duration::QUICK);
        AddTestCase(new WheelRemoveMissingTestCase, Duration::QUICK);
        AddTestCase(MakeFifoTestCase(), Duration::QUICK);
        AddTestCase(MakePackedCountersTestCase(), Duration::QUICK);
        AddTestCase(MakeFlaggedTraceTestCase(), Duration::QUICK);
        AddTestCase(new EventLoopOrderTestCase, Duration::QUICK);
        AddTestCase(new EventLoopNotCurrentTestCase, Duration::QUICK);
        AddTestCase(MakeCanonicalOrderTestCase(), Duration::QUICK);
        AddTestCase(MakeWatchTestCase(), Duration::QUICK);
        AddTestCase(MakeProtocolTimerTestCase(), Duration::QUICK);
        AddTestCase(MakeDeferredWorkTestCase(), Duration::QUICK);
    }
};

EngineTestSuite g_engineTestSuite;

} // namespace
} // namespace mcsim
} // namespace ns3
