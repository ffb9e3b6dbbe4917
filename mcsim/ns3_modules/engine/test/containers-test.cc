// SPDX-License-Identifier: GPL-2.0-only
//
// The "mcsim-engine" suite's cases for the hot path's containers (engine-test-suite.cc adds them):
// Fifo against std::deque, PackedCounters against a vector of bounded counters, FlaggedTrace's bit
// against its sinks.

#include "containers-test.h"

#include "ns3/callback.h"
#include "ns3/mcsim/fifo.h"
#include "ns3/mcsim/flagged-trace.h"
#include "ns3/mcsim/packed-counters.h"
#include "ns3/test.h"

#include <cstdint>
#include <deque>
#include <iterator>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

namespace ns3
{
namespace mcsim
{
namespace
{

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

/** Sinks of a FlaggedTrace. */
void
Count(int* calls, uint32_t v)
{
    *calls += static_cast<int>(v);
}

/**
 * A FlaggedTrace's bit is set exactly while it has a sink, with or without context, through two
 * sinks and their removal in either order; the other bits of the word are never touched, and a
 * fired trace reaches its sinks.
 */
class FlaggedTraceTestCase : public TestCase
{
  public:
    FlaggedTraceTestCase()
        : TestCase("FlaggedTrace keeps its bit equal to having a sink")
    {
    }

  private:
    void DoRun() override
    {
        uint8_t flags = 0x81;
        FlaggedTrace<uint32_t> trace(&flags, 4);
        int a = 0;
        int b = 0;
        const auto sinkA = MakeBoundCallback(&Count, &a);
        const auto sinkB = MakeBoundCallback(&Count, &b);
        NS_TEST_ASSERT_MSG_EQ(flags, 0x81, "no sink: the bit is clear, the others kept");
        trace.ConnectWithoutContext(sinkA);
        NS_TEST_ASSERT_MSG_EQ(flags, 0x85, "one sink: set");
        trace.ConnectWithoutContext(sinkB);
        trace(3);
        NS_TEST_ASSERT_MSG_EQ(a + b, 6, "both sinks called");
        trace.DisconnectWithoutContext(sinkA);
        NS_TEST_ASSERT_MSG_EQ(flags, 0x85, "one sink left: still set");
        trace.DisconnectWithoutContext(sinkB);
        NS_TEST_ASSERT_MSG_EQ(flags, 0x81, "none left: clear");
        int c = 0;
        const auto sinkC = MakeBoundCallback(&Count, &c);
        trace.ConnectWithoutContext(sinkC);
        NS_TEST_ASSERT_MSG_EQ(flags, 0x85, "connected again: set");
        trace.DisconnectWithoutContext(sinkC);
        NS_TEST_ASSERT_MSG_EQ(flags, 0x81, "disconnected again: clear");
    }
};

} // namespace

TestCase*
MakeFlaggedTraceTestCase()
{
    return new FlaggedTraceTestCase;
}

TestCase*
MakeFifoTestCase()
{
    return new FifoTestCase;
}

TestCase*
MakePackedCountersTestCase()
{
    return new PackedCountersTestCase;
}

} // namespace mcsim
} // namespace ns3
