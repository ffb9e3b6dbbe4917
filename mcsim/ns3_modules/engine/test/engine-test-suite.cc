// SPDX-License-Identifier: GPL-2.0-only
//
// ns-3 test suite "mcsim-engine": the event scheduler against ns-3's own, and the hot path's FIFO.
// Run from Python with mcsim.runtime.run_cxx_test_suite("mcsim-engine") (tests/test_engine.py).

#include "ns3/mcsim/fifo.h"
#include "ns3/mcsim/packed-counters.h"
#include "ns3/mcsim/wheel-scheduler.h"
#include "ns3/object-factory.h"
#include "ns3/rng-seed-manager.h"
#include "ns3/test.h"

#include <cstdint>
#include <deque>
#include <iterator>
#include <memory>
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

/**
 * Fifo against std::deque over random pushes, pops and inserts that wrap around the ring and make
 * it grow while wrapped; a Fifo of shared_ptr releases what it pops.
 */
class FifoTestCase : public TestCase
{
  public:
    FifoTestCase()
        : TestCase("Fifo behaves as a deque")
    {
    }

  private:
    void DoRun() override
    {
        Fifo<uint64_t> fifo;
        std::deque<uint64_t> ref;
        std::mt19937_64 rng(7);
        for (uint64_t step = 0; step < 20000; ++step)
        {
            const uint64_t r = rng() % 10;
            if (r < 5 || ref.empty())
            {
                fifo.push_back(step);
                ref.push_back(step);
            }
            else if (r < 8)
            {
                NS_TEST_ASSERT_MSG_EQ(fifo.front(), ref.front(), "front");
                fifo.pop_front();
                ref.pop_front();
            }
            else
            {
                const std::size_t at = rng() % (ref.size() + 1);
                fifo.insert(at, step);
                ref.insert(ref.begin() + static_cast<std::ptrdiff_t>(at), step);
            }
            NS_TEST_ASSERT_MSG_EQ(fifo.size(), ref.size(), "size");
            if (step % 97 == 0)
            {
                for (std::size_t i = 0; i < ref.size(); ++i)
                {
                    NS_TEST_ASSERT_MSG_EQ(fifo[i], ref[i], "element " << i);
                }
            }
        }
        auto held = std::make_shared<int>(1);
        Fifo<std::shared_ptr<int>> owners;
        owners.push_back(held);
        NS_TEST_ASSERT_MSG_EQ(held.use_count(), 2, "queued");
        owners.pop_front();
        NS_TEST_ASSERT_MSG_EQ(held.use_count(), 1, "released when popped");
        fifo.clear();
        NS_TEST_ASSERT_MSG_EQ(fifo.empty(), true, "cleared");
        fifo.push_back(5);
        NS_TEST_ASSERT_MSG_EQ(fifo.front(), 5, "usable after clear");
    }
};

/**
 * PackedCounters against a plain vector: for every declared maximum (1 bit to 32 bits, and the
 * widths between), random increments and sets up to that maximum never disturb a neighbour, and
 * the width is the fewest power-of-2 bits that hold the maximum.
 */
class PackedCountersTestCase : public TestCase
{
  public:
    PackedCountersTestCase()
        : TestCase("PackedCounters behave as a vector of bounded counters")
    {
    }

  private:
    void DoRun() override
    {
        const uint64_t maxima[] = {0, 1, 2, 3, 4, 15, 16, 255, 256, 65535, 65536, UINT32_MAX};
        const uint32_t bits[] = {1, 1, 2, 2, 4, 4, 8, 8, 16, 16, 32, 32};
        std::mt19937_64 rng(11);
        for (std::size_t m = 0; m < std::size(maxima); ++m)
        {
            const std::size_t n = 1 + rng() % 300;
            PackedCounters packed;
            packed.Assign(n, maxima[m]);
            NS_TEST_ASSERT_MSG_EQ(packed.Bits(), bits[m], "width for maximum " << maxima[m]);
            NS_TEST_ASSERT_MSG_EQ(packed.Size(), n, "size");
            std::vector<uint64_t> ref(n, 0);
            for (uint32_t step = 0; step < 5000; ++step)
            {
                const std::size_t i = rng() % n;
                if (rng() % 4 == 0)
                {
                    const uint64_t v = maxima[m] == 0 ? 0 : rng() % (maxima[m] + 1);
                    packed.Set(i, static_cast<uint32_t>(v));
                    ref[i] = v;
                }
                else if (ref[i] < maxima[m])
                {
                    NS_TEST_ASSERT_MSG_EQ(packed.Increment(i), ref[i] + 1, "incremented " << i);
                    ref[i]++;
                }
                if (step % 101 == 0)
                {
                    for (std::size_t j = 0; j < n; ++j)
                    {
                        NS_TEST_ASSERT_MSG_EQ(packed.Get(j), ref[j], "counter " << j);
                    }
                }
            }
            packed.Set(n - 1, static_cast<uint32_t>(maxima[m]));
            NS_TEST_ASSERT_MSG_EQ(packed.Get(n - 1), maxima[m], "the maximum fits");
        }
        PackedCounters wide;
        bool threw = false;
        try
        {
            wide.Assign(1, 1ULL << 32);
        }
        catch (const std::invalid_argument&)
        {
            threw = true;
        }
        NS_TEST_ASSERT_MSG_EQ(threw, true, "a maximum of 2^32 is refused");
    }
};

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
        AddTestCase(new FifoTestCase, Duration::QUICK);
        AddTestCase(new PackedCountersTestCase, Duration::QUICK);
    }
};

EngineTestSuite g_engineTestSuite;

} // namespace
} // namespace mcsim
} // namespace ns3
