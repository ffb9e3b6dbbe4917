// SPDX-License-Identifier: GPL-2.0-only
#include "event-order-test.h"

#include "ns3/make-event.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/event-order.h"
#include "ns3/mcsim/protocol-timer.h"
#include "ns3/object-factory.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <tuple>
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

    /** Run on the EventLoop; the initial events are posted in an order set by `shuffle`. */
    std::vector<uint64_t> RunOnLoop()
    {
        Simulator::Destroy();
        Simulator::SetImplementation(CreateObject<EventLoop>());
        Simulator::SetScheduler(ObjectFactory("ns3::mcsim::WheelScheduler"));
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
        Simulator::Destroy();
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

    uint64_t ties = 0; //!< events at the time stamp of the one before
    uint64_t late = 0; //!< events posted at the current time stamp with a smaller key

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
MakeProtocolTimerTestCase()
{
    return new ProtocolTimerTestCase;
}

} // namespace mcsim
} // namespace ns3
