// SPDX-License-Identifier: GPL-2.0-only
#include "deferred-work-test.h"

#include "event-order-test.h"

#include "ns3/mcsim/deferred-work.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/event-order.h"
#include "ns3/mcsim/reusable-event.h"
#include "ns3/object-factory.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

namespace ns3
{
namespace mcsim
{
namespace
{

constexpr uint32_t NODES = 6;

/**
 * A node's work, as a HostCpu's: items in FIFO order, each adding its label to the node's state
 * and logging (label, Now()) in the node's log when it runs; run by events of its own, or
 * deferred (then later in the run, but in the same order and at the same Now() for its node).
 */
class ToyWork : public DeferredWork
{
  public:
    ToyWork(uint32_t node, uint64_t* state, std::vector<uint64_t>* log, bool deferred)
        : m_node(node),
          m_state(state),
          m_log(log),
          m_deferred(deferred),
          m_event(Create<ReusableEvent<ToyWork, &ToyWork::RunDue>>(this))
    {
        m_source.Place(node, unit::CPU);
    }

    /** An item at ts (no earlier than the last one: FIFO). */
    void Add(uint64_t ts, uint64_t label)
    {
        ts = std::max(ts, m_last);
        m_last = ts;
        // deferred only if its place is ahead of every event run (else it has its event)
        const bool deferred = m_deferred && EventLoop::Current()->Ahead(ts, m_source.Key());
        m_items.push_back({ts, label, deferred});
        if (deferred)
        {
            EventLoop::Current()->Defer(this, m_node);
        }
        else
        {
            mcsim::Post(TimeStep(static_cast<int64_t>(ts) - Simulator::Now().GetTimeStep()),
                        m_event,
                        m_source);
        }
    }

    bool CatchUp(uint64_t ts, uint64_t order) override
    {
        while (!m_items.empty() && m_items.front().deferred &&
               PlacedBefore(m_items.front().ts, m_source.Key(), ts, order))
        {
            EventLoop::Current()->AtDeferred(m_items.front().ts);
            RunFront();
        }
        return !m_items.empty();
    }

    bool postWhileRunning = false; //!< a bug: an item that posts

  private:
    struct Item
    {
        uint64_t ts;
        uint64_t label;
        bool deferred;
    };

    /** An item's event: every item due by now, in order (deferred ones before it share its key). */
    void RunDue()
    {
        while (!m_items.empty() &&
               m_items.front().ts <= static_cast<uint64_t>(Simulator::Now().GetTimeStep()))
        {
            RunFront();
        }
    }

    void RunFront()
    {
        const Item it = m_items.front();
        m_items.pop_front();
        *m_state += it.label;
        m_log->push_back(it.label);
        m_log->push_back(static_cast<uint64_t>(Simulator::Now().GetTimeStep()));
        if (postWhileRunning)
        {
            mcsim::Post(TimeStep(1), m_event, m_source);
        }
    }

    uint32_t m_node;
    uint64_t* m_state;
    std::vector<uint64_t>* m_log;
    bool m_deferred;
    Ptr<EventImpl> m_event;
    EventSource m_source{EventClass::COMPLETION};
    std::deque<Item> m_items;
    uint64_t m_last = 0;
};

/**
 * A random program: events of random sources (classes, nodes, units; the run's plan) read a
 * node's state, or every node's, add items to a node's work (the node's own, or another's after
 * EventLoop::CatchUpNode, as a packet handed over), and post more events with many ties. Run
 * with the items as events and deferred: the logs must be the same.
 */
class Program
{
  public:
    Program(uint64_t seed, bool deferred)
        : m_rng(seed),
          m_deferred(deferred)
    {
        Simulator::Destroy();
        Simulator::SetImplementation(CreateObject<EventLoop>());
        Simulator::SetScheduler(ObjectFactory("ns3::mcsim::WheelScheduler"));
        m_state.assign(NODES, 0);
        m_itemLogs.resize(NODES);
        for (uint32_t n = 0; n < NODES; ++n)
        {
            m_works.push_back(std::make_unique<ToyWork>(n, &m_state[n], &m_itemLogs[n], deferred));
        }
        std::set<uint64_t> keys; // one source per key, as the canonical order requires
        for (uint32_t i = 0; m_sources.size() < 24; ++i)
        {
            const auto c = static_cast<EventClass>(m_rng() % 5);
            const auto node = static_cast<uint32_t>(m_rng() % NODES);
            const uint32_t u = c == EventClass::CONTROL ? unit::PLAN : i % 8;
            if (keys.insert(EventOrderKey(c, node, u)).second)
            {
                m_sources.emplace_back(c);
                m_sources.back().Place(node, u);
            }
        }
    }

    std::vector<uint64_t> Run()
    {
        for (uint64_t i = 0; i < 100; ++i)
        {
            Post((m_rng() % 8) * 1000);
        }
        Simulator::Run();
        log.push_back(static_cast<uint64_t>(Simulator::Now().GetTimeStep())); // the clock's end
        eventEntries = log.size();
        Simulator::Destroy();
        for (const std::vector<uint64_t>& items : m_itemLogs)
        {
            log.push_back(items.size());
            log.insert(log.end(), items.begin(), items.end());
        }
        return log;
    }

    std::vector<uint64_t> log;
    uint64_t items = 0;
    std::size_t eventEntries = 0; //!< the log's entries before the items' logs

  private:
    void Post(uint64_t delay)
    {
        if (m_posted++ > 20000)
        {
            return;
        }
        const uint64_t label = m_posted;
        if (m_rng() % 10 == 0) // without a source: runs after every sourced event at its time
        {
            Simulator::Schedule(PicoSeconds(delay), [this, label]() { Act(label, NODES); });
            return;
        }
        EventSource& s = m_sources[m_rng() % m_sources.size()];
        const uint32_t node = UnitOf(s.Key()) == unit::PLAN ? NODES : NodeOf(s.Key());
        mcsim::Post(PicoSeconds(delay),
                    Ptr<EventImpl>(MakeEvent([this, label, node]() { Act(label, node); }), false),
                    s);
    }

    /** Event `label` of node (NODES: the plan's, or no source: it sees every node). */
    void Act(uint64_t label, uint32_t node)
    {
        log.push_back(label);
        const uint64_t now = static_cast<uint64_t>(Simulator::Now().GetTimeStep());
        for (uint32_t n = 0; n < NODES; ++n)
        {
            log.push_back(node == NODES || n == node ? m_state[n] : 0);
        }
        const uint32_t other = static_cast<uint32_t>(m_rng() % NODES);
        if (node != NODES && m_rng() % 3 == 0)
        {
            // a packet handed to `other`: it catches up, then its state is read and changed
            if (m_deferred)
            {
                EventLoop::Current()->CatchUpNode(other);
            }
            log.push_back(m_state[other]);
            m_works[other]->Add(now + (m_rng() % 4) * 500, label);
            items++;
        }
        if (node != NODES && m_rng() % 2 == 0)
        {
            m_works[node]->Add(now + (m_rng() % 4) * 500, label + 1000000);
            items++;
        }
        for (uint64_t i = 1 + m_rng() % 3; i > 0; --i)
        {
            Post((m_rng() % 4) * 500);
        }
    }

    std::mt19937_64 m_rng;
    bool m_deferred;
    std::vector<uint64_t> m_state;
    std::vector<std::vector<uint64_t>> m_itemLogs; //!< per node, its items' (label, Now())
    std::vector<std::unique_ptr<ToyWork>> m_works;
    std::vector<EventSource> m_sources;
    uint64_t m_posted = 0;
};

class DeferredWorkTestCase : public TestCase
{
  public:
    DeferredWorkTestCase()
        : TestCase("Deferred work gives the results of an event per item; posting from it throws")
    {
    }

  private:
    void DoRun() override
    {
        for (uint64_t seed = 1; seed <= 30; ++seed)
        {
            Program evented(seed, false);
            const std::vector<uint64_t> expected = evented.Run();
            Program deferred(seed, true);
            const std::vector<uint64_t> got = deferred.Run();
            NS_TEST_ASSERT_MSG_GT(evented.items, 5000, "many items, seed " << seed);
            NS_TEST_ASSERT_MSG_EQ(got.size(), expected.size(), "log length, seed " << seed);
            const std::size_t first = FirstDifference(got, expected);
            NS_TEST_ASSERT_MSG_EQ(first,
                                  got.size(),
                                  "the same log, seed " << seed << ", first difference at entry "
                                                        << first << " of " << got.size()
                                                        << " (events log " << deferred.eventEntries
                                                        << ")");
        }
        // an item that posts: the loop says so and stops
        Simulator::Destroy();
        Simulator::SetImplementation(CreateObject<EventLoop>());
        Simulator::SetScheduler(ObjectFactory("ns3::mcsim::WheelScheduler"));
        uint64_t state = 0;
        std::vector<uint64_t> log;
        ToyWork work(0, &state, &log, true);
        work.postWhileRunning = true;
        work.Add(100, 1);
        bool threw = false;
        try
        {
            Simulator::Run();
        }
        catch (const std::logic_error&)
        {
            threw = true;
        }
        NS_TEST_ASSERT_MSG_EQ(threw, true, "posting from deferred work throws");
        Simulator::Destroy();
    }
};

} // namespace

TestCase*
MakeDeferredWorkTestCase()
{
    return new DeferredWorkTestCase;
}

} // namespace mcsim
} // namespace ns3
