// SPDX-License-Identifier: GPL-2.0-only
//
// ns-3 test suite "mcsim-collectives": closed-form checks of the collective ranks. Run from
// Python with mcsim.runtime.run_cxx_test_suite("mcsim-collectives")
// (tests/models/collectives/test_collectives.py).

#include "star-fabric.h"

#include "ns3/mcsim/collective-rank.h"
#include "ns3/mcsim/collective-team.h"
#include "ns3/mcsim/fabric.h"
#include "ns3/mcsim/nic.h"
#include "ns3/mcsim/rdma-stack.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"
#include "ns3/simulator.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"

#include <vector>

namespace ns3
{
namespace mcsim
{
namespace
{

constexpr int64_t NIC_LATENCY_PS = 300000; //!< each NIC's send and receive latency

/**
 * A ring Allgather of P ranks on a star (P hosts, one switch, 100 Gbit/s): every rank receives
 * the P - 1 other shards, (P - 1) * shard bytes, no sooner than their serialisation time and
 * within 2 % of it.
 */
class RingAllgatherTestCase : public TestCase
{
  public:
    RingAllgatherTestCase()
        : TestCase("Ring Allgather: each rank receives (P - 1) * shard bytes, in whole chunks")
    {
    }

  private:
    void DoRun() override
    {
        const uint32_t nHosts = 4;
        const uint64_t shard = 256 * 1024, chunk = 64 * 1024;
        Ptr<Fabric> fabric = CreateObject<Fabric>();
        fabric->SetPortFactory(PortsWithHeaderBytes(0)); // the NIC sends the real headers
        BuildStarFabric(fabric, nHosts);
        Ptr<RdmaStack> stack = CreateObject<RdmaStack>();
        ObjectFactory nic("ns3::mcsim::Nic");
        nic.Set("SendLatency", TimeValue(PicoSeconds(NIC_LATENCY_PS)));
        nic.Set("ReceiveLatency", TimeValue(PicoSeconds(NIC_LATENCY_PS)));
        stack->SetAttribute("RegionBytes", UintegerValue(shard * nHosts));
        stack->Setup(fabric,
                     nic,
                     ObjectFactory("ns3::mcsim::HostCpu"),
                     ObjectFactory("ns3::mcsim::RcQp"),
                     ObjectFactory("ns3::mcsim::UdQp"));
        ObjectFactory ring("ns3::mcsim::RingAllgather");
        ring.Set("ChunkBytes", UintegerValue(chunk));
        Ptr<CollectiveTeam> team = CreateObject<CollectiveTeam>();
        team->SetAttribute("BytesPerRank", UintegerValue(shard));
        const uint32_t hosts[nHosts] = {0, 1, 2, 3};
        team->Setup(stack, ring, hosts, nHosts);
        team->Start(Seconds(0));
        Simulator::Run();

        std::vector<uint64_t> stats(nHosts * CollectiveRank::NUM_STATS);
        team->GetStats(stats.data(), stats.size());
        const uint32_t nicRow = RdmaStack::HOST_COUNTERS;
        std::vector<uint64_t> nics(nHosts * nicRow);
        stack->GetHostCounters(nics.data(), nics.size());
        const uint32_t finish = CounterTable::IndexOf(CollectiveRank::Stats::NAMES, "finish_ps");
        const uint32_t chunks =
            CounterTable::IndexOf(CollectiveRank::Stats::NAMES, "chunks_received");
        const uint32_t rxPayload = CounterTable::IndexOf(Nic::Counters::NAMES, "rx_payload");
        // (P - 1) * shard bytes at 100 Gbit/s (80 ps per byte) is the least receive time
        const uint64_t boundPs = (nHosts - 1) * shard * 80;
        for (uint32_t r = 0; r < nHosts; ++r)
        {
            const uint64_t* s = stats.data() + r * CollectiveRank::NUM_STATS;
            NS_TEST_ASSERT_MSG_EQ(nics[r * nicRow + rxPayload],
                                  (nHosts - 1) * shard,
                                  "rank " << r << " receives (P - 1) * shard bytes");
            NS_TEST_ASSERT_MSG_EQ(s[chunks],
                                  (nHosts - 1) * shard / chunk,
                                  "rank " << r << " receives every other rank's chunks once");
            NS_TEST_ASSERT_MSG_NE(s[finish], CollectiveRank::NEVER, "rank " << r << " finishes");
            NS_TEST_ASSERT_MSG_GT_OR_EQ(s[finish], boundPs, "no faster than the line");
            // headers (26 B per 4 KiB packet: 0.6 %) and the path latency: within 2 %, plus both
            // NIC latencies once per step of the ring (P - 1 steps before the last chunk is in)
            NS_TEST_ASSERT_MSG_LT_OR_EQ(s[finish],
                                        boundPs * 102 / 100 + (nHosts - 1) * 2 * NIC_LATENCY_PS,
                                        "near the line");
        }
        Simulator::Destroy();
        team->Dispose();
        stack->Dispose();
        fabric->Dispose();
    }
};

/** CollectiveRank::ChunkCount: ceil(bytes / chunkBytes), the count every rank class cuts by. */
class ChunkCountTestCase : public TestCase
{
  public:
    ChunkCountTestCase()
        : TestCase("ChunkCount: whole chunks, only the last shorter, none for no bytes")
    {
    }

  private:
    void DoRun() override
    {
        NS_TEST_ASSERT_MSG_EQ(CollectiveRank::ChunkCount(0, 4096),
                              uint64_t{0},
                              "no bytes, no chunk");
        NS_TEST_ASSERT_MSG_EQ(CollectiveRank::ChunkCount(1, 4096),
                              uint64_t{1},
                              "one byte, one chunk");
        NS_TEST_ASSERT_MSG_EQ(CollectiveRank::ChunkCount(4096, 4096),
                              uint64_t{1},
                              "exactly one chunk");
        NS_TEST_ASSERT_MSG_EQ(CollectiveRank::ChunkCount(4097, 4096), uint64_t{2}, "one byte more");
        NS_TEST_ASSERT_MSG_EQ(CollectiveRank::ChunkCount(uint64_t{1} << 40, 1),
                              uint64_t{1} << 40,
                              "1-byte chunks: one per byte");
        NS_TEST_ASSERT_MSG_EQ(CollectiveRank::ChunkCount(3 * 65536 - 1, 65536),
                              uint64_t{3},
                              "rounded up");
    }
};

class CollectivesTestSuite : public TestSuite
{
  public:
    CollectivesTestSuite()
        : TestSuite("mcsim-collectives", Type::UNIT)
    {
        AddTestCase(new ChunkCountTestCase, Duration::QUICK);
        AddTestCase(new RingAllgatherTestCase, Duration::QUICK);
    }
};

CollectivesTestSuite g_collectivesTestSuite; //!< registers the suite with ns-3's test runner

} // namespace
} // namespace mcsim
} // namespace ns3
