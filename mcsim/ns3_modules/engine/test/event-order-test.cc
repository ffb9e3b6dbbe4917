// SPDX-License-Identifier: GPL-2.0-only
#include "event-order-test.h"

#include "ns3/make-event.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/event-order.h"
#include "ns3/mcsim/protocol-timer.h"
#include "ns3/mcsim/watcher.h"
#include "ns3/object-factory.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

namespace ns3
{
namespace mcsim
{
namespace
{

/** An event of the program: where it was posted and by whom. */
struct Planned
{
    uint64_t ts;
    uint32_t source; //!< index into the program's sources
    uint64_t label;
};

/**
 * A random program of events with sources: each event logs its label and posts 0-3 more, from
 * random sources (random classes, nodes and units), at delays with many ties, some of them at
 * the current time stamp. Run on the EventLoop, or on a reference: a std::set ordered by the
 * rule (time stamp, class, node, unit, the source's post count).
 */
class SourcedProgram
{
  public:
    SourcedProgram(uint64_t seed, uint64_t shuffle)
        : m_rng(seed),
          m_shuffle(shuffle)
    {
        std::set<uint64_t> keys;
        while (m_sources.size() < 40)
        {
            const auto c = static_cast<EventClass>(m_rng() % 5);
            const auto node = static_cast<uint32_t>(m_rng() % 6);
            const auto unit = static_cast<uint32_t>(m_rng() % 4) * unit::QP;
            if (keys.insert(EventOrderKey(c, node, unit)).second)
            {
                m_sources.emplace_back(c);
                m_sources.back().Place(node, unit);
            }
        }
        m_refSeq.assign(m_sources.size(), 0);
        for (uint64_t i = 0; i < 200; ++i)
        {
            m_initial.push_back({(m_rng() % 8) * 1000,
                                 static_cast<uint32_t>(m_rng() % m_sources.size()),
                                 m_next++});
        }
    }

    /** Run on the EventLoop (with a watcher looking from time 0, if given); the initial events
     * are posted in an order set by `shuffle`. */
    std::vector<uint64_t> RunOnLoop(Watcher* watcher = nullptr)
    {
        Simulator::Destroy();
        Simulator::SetImplementation(CreateObject<EventLoop>());
        Simulator::SetScheduler(ObjectFactory("ns3::mcsim::WheelScheduler"));
        if (watcher != nullptr)
        {
            EventLoop::Current()->Watch(watcher, 0);
        }
        m_onLoop = true;
        // the sources take turns at random (`shuffle`), each posting its events in their order
        // (a source's post count is its own order, the rule's last key)
        std::vector<std::vector<Planned>> bySource(m_sources.size());
        for (auto it = m_initial.rbegin(); it != m_initial.rend(); ++it)
        {
            bySource[it->source].push_back(*it); // last first: each posts from its back
        }
        std::mt19937_64 turns(m_shuffle);
        for (uint64_t left = m_initial.size(); left > 0; --left)
        {
            uint64_t s = turns() % bySource.size();
            while (bySource[s].empty())
            {
                s = (s + 1) % bySource.size();
            }
            Post(bySource[s].back());
            bySource[s].pop_back();
        }
        Simulator::Run();
        EventLoop::Current()->LookUntilNow();
        endTs = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
        events = Simulator::GetEventCount();
        Simulator::Destroy();
        return m_log;
    }

    /** The log so far: (time stamp, label) per event run. */
    const std::vector<uint64_t>& Log() const
    {
        return m_log;
    }

    /** Run on the reference queue. */
    std::vector<uint64_t> RunOnReference()
    {
        m_onLoop = false;
        for (const Planned& p : m_initial)
        {
            Post(p);
        }
        while (!m_reference.empty())
        {
            const auto [ts, key, seq, label, source] = *m_reference.begin();
            m_reference.erase(m_reference.begin());
            m_refNow = ts;
            Step(label);
        }
        return m_log;
    }

    uint64_t ties = 0;   //!< events at the time stamp of the one before
    uint64_t late = 0;   //!< events posted at the current time stamp with a smaller key
    uint64_t endTs = 0;  //!< RunOnLoop: the clock when the run ended
    uint64_t events = 0; //!< RunOnLoop: events run

  private:
    static constexpr uint64_t LIMIT = 50000;

    uint64_t Now() const
    {
        return m_onLoop ? static_cast<uint64_t>(Simulator::Now().GetPicoSeconds()) : m_refNow;
    }

    void Post(const Planned& p)
    {
        EventSource& s = m_sources[p.source];
        if (m_onLoop)
        {
            mcsim::Post(PicoSeconds(p.ts - Now()),
                        Ptr<EventImpl>(MakeEvent(&SourcedProgram::Step, this, p.label), false),
                        s);
        }
        else
        {
            m_reference.insert({p.ts, s.Key(), m_refSeq[p.source]++, p.label, p.source});
        }
    }

    void Step(uint64_t label)
    {
        const uint64_t now = Now();
        ties += !m_log.empty() && now == m_lastTs ? 1 : 0;
        m_lastTs = now;
        m_log.push_back(now);
        m_log.push_back(label);
        if (++m_steps > LIMIT)
        {
            return;
        }
        const uint64_t children = m_rng() % 4;
        for (uint64_t c = 0; c < children; ++c)
        {
            const uint64_t r = m_rng() % 8;
            const uint64_t delay = r < 2 ? 0 : r < 5 ? 1000 * (m_rng() % 3) : m_rng() % 5000;
            const auto source = static_cast<uint32_t>(m_rng() % m_sources.size());
            late += delay == 0 && source % 2 == 0 ? 1 : 0;
            Post({now + delay, source, m_next++});
        }
    }

    std::mt19937_64 m_rng;
    uint64_t m_shuffle;
    std::vector<EventSource> m_sources;
    std::vector<uint32_t> m_refSeq;
    std::vector<Planned> m_initial;
    std::set<std::tuple<uint64_t, uint64_t, uint32_t, uint64_t, uint32_t>> m_reference;
    std::vector<uint64_t> m_log;
    uint64_t m_refNow = 0;
    uint64_t m_next = 0;
    uint64_t m_steps = 0;
    uint64_t m_lastTs = 0;
    bool m_onLoop = true;
};

class CanonicalOrderTestCase : public TestCase
{
  public:
    CanonicalOrderTestCase()
        : TestCase("EventLoop runs events with sources in the canonical order, however posted")
    {
    }

  private:
    void DoRun() override
    {
        for (uint64_t seed : {1, 2, 3})
        {
            SourcedProgram ref(seed, 0);
            const std::vector<uint64_t> expected = ref.RunOnReference();
            for (uint64_t shuffle : {1, 2})
            {
                SourcedProgram ours(seed, shuffle);
                const std::vector<uint64_t> got = ours.RunOnLoop();
                NS_TEST_ASSERT_MSG_EQ(got.size(), expected.size(), "log length, seed " << seed);
                const std::size_t first = FirstDifference(got, expected);
                NS_TEST_ASSERT_MSG_EQ(first,
                                      got.size(),
                                      "the rule's order, seed " << seed << " shuffle " << shuffle
                                                                << ", first difference at entry "
                                                                << first);
                NS_TEST_ASSERT_MSG_GT(ours.ties, 10000, "many events tie with the one before");
                NS_TEST_ASSERT_MSG_GT(ours.late, 1000, "many posts at the current time stamp");
            }
        }
    }
};

/** Records each look: its time stamp and how many entries the program's log had then. */
class LookRecorder : public Watcher
{
  public:
    LookRecorder(const SourcedProgram* program, uint64_t interval)
        : m_program(program),
          m_interval(interval)
    {
    }

    uint64_t Look(uint64_t ts) override
    {
        looks.emplace_back(ts, m_program->Log().size());
        return ts + m_interval;
    }

    std::vector<std::pair<uint64_t, std::size_t>> looks;

  private:
    const SourcedProgram* m_program;
    uint64_t m_interval;
};

class WatchTestCase : public TestCase
{
  public:
    WatchTestCase()
        : TestCase("A Watcher looks between the events at its time stamps, and changes nothing")
    {
    }

  private:
    void DoRun() override
    {
        for (uint64_t seed : {1, 2})
        {
            SourcedProgram plain(seed, 1);
            const std::vector<uint64_t> expected = plain.RunOnLoop();
            SourcedProgram watched(seed, 1);
            LookRecorder recorder(&watched, 777);
            const std::vector<uint64_t> got = watched.RunOnLoop(&recorder);
            // the same events, in the same order, ending at the same time: no event of its own
            NS_TEST_ASSERT_MSG_EQ(FirstDifference(got, expected), got.size(), "same log");
            NS_TEST_ASSERT_MSG_EQ(got.size(), expected.size(), "same log length");
            NS_TEST_ASSERT_MSG_EQ(watched.events, plain.events, "no event added");
            NS_TEST_ASSERT_MSG_EQ(watched.endTs, plain.endTs, "the run ends when it did");
            // a look at 0, 777, 1554, ... up to the end; each after every event up to its time
            // stamp and before every later one
            const auto& looks = recorder.looks;
            NS_TEST_ASSERT_MSG_EQ(looks.size(), plain.endTs / 777 + 1, "one look per interval");
            for (std::size_t i = 0; i < looks.size(); ++i)
            {
                const auto [ts, logged] = looks[i];
                const bool afterEarlier = logged == 0 || got[logged - 2] <= ts;
                const bool beforeLater = logged == got.size() || got[logged] > ts;
                NS_TEST_ASSERT_MSG_EQ(ts, 777 * i, "look " << i << "'s time stamp");
                NS_TEST_ASSERT_MSG_EQ(afterEarlier,
                                      true,
                                      "look " << i << " comes after the events up to it");
                NS_TEST_ASSERT_MSG_EQ(beforeLater,
                                      true,
                                      "look " << i << " comes before the later events");
            }
        }
    }
};

/** Counts its timer's expiries. */
class TimerOwner
{
  public:
    TimerOwner()
        : source(EventClass::TIMER),
          timer(this, &source)
    {
    }

    void Expire()
    {
        expiries.push_back(static_cast<uint64_t>(Simulator::Now().GetPicoSeconds()));
    }

    EventSource source;
    ProtocolTimer<TimerOwner, &TimerOwner::Expire> timer;
    std::vector<uint64_t> expiries;
};

class ProtocolTimerTestCase : public TestCase
{
  public:
    ProtocolTimerTestCase()
        : TestCase("ProtocolTimer: Schedule, Cancel, IsPending, and an owner gone before expiry")
    {
    }

  private:
    void DoRun() override
    {
        Simulator::Destroy();
        Simulator::SetImplementation(CreateObject<EventLoop>());
        Simulator::SetScheduler(ObjectFactory("ns3::mcsim::WheelScheduler"));
        TimerOwner a;
        a.timer.Schedule(PicoSeconds(100));
        NS_TEST_ASSERT_MSG_EQ(a.timer.IsPending(), true, "pending once scheduled");
        a.timer.Schedule(PicoSeconds(300)); // the 100 ps expiry is superseded
        Simulator::Schedule(PicoSeconds(200), [this, &a]() {
            NS_TEST_EXPECT_MSG_EQ(a.timer.IsPending(), true, "still pending at 200 ps");
            a.timer.Cancel();
            a.timer.Schedule(PicoSeconds(50)); // 250 ps; the 300 ps one does nothing
        });
        auto* gone = new TimerOwner;
        gone->timer.Schedule(PicoSeconds(400));
        Simulator::Schedule(PicoSeconds(10), [gone]() { delete gone; }); // its expiry stays queued
        TimerOwner c;
        c.timer.Schedule(PicoSeconds(500));
        Simulator::Schedule(PicoSeconds(20), [&c]() { c.timer.Cancel(); });
        Simulator::Run();
        NS_TEST_ASSERT_MSG_EQ(a.expiries.size(), 1, "one expiry of a");
        NS_TEST_ASSERT_MSG_EQ(a.expiries.front(), 250, "at its last schedule");
        NS_TEST_ASSERT_MSG_EQ(a.timer.IsPending(), false, "not pending after it fired");
        NS_TEST_ASSERT_MSG_EQ(c.expiries.size(), 0, "a cancelled timer does not fire");
        NS_TEST_ASSERT_MSG_EQ(Simulator::GetEventCount(), 8, "every expiry ran, cancelled or not");
        Simulator::Destroy();
    }
};

} // namespace

TestCase*
MakeCanonicalOrderTestCase()
{
    return new CanonicalOrderTestCase;
}

TestCase*
MakeWatchTestCase()
{
    return new WatchTestCase;
}

TestCase*
MakeProtocolTimerTestCase()
{
    return new ProtocolTimerTestCase;
}

} // namespace mcsim
} // namespace ns3
