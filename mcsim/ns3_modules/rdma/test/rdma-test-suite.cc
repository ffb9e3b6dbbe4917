// SPDX-License-Identifier: GPL-2.0-only
//
// ns-3 test suite "mcsim-rdma": closed-form checks of RC transport between two hosts. Run from
// Python with mcsim.runtime.run_cxx_test_suite("mcsim-rdma") (tests/models/rdma/test_rdma.py).

#include "ns3/mcsim/fabric.h"
#include "ns3/mcsim/rc-qp.h"
#include "ns3/mcsim/rdma-stack.h"
#include "ns3/mcsim/verbs-workload.h"
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

constexpr uint32_t MTU = 4096;
constexpr uint64_t PS_PER_BYTE = 20; //!< 400 Gbit/s, no line encoding: 20 ps per byte, exact
constexpr int64_t DELAY_PS = 100000; //!< propagation delay of the link
constexpr uint64_t IB_BASE = 26;     //!< LRH 8 + BTH 12 + ICRC 4 + VCRC 2
constexpr uint64_t RETH = 16;        //!< on a WRITE's first packet and on a READ request
constexpr uint64_t AETH = 4;         //!< on an ACK and on a READ's first and last responses
constexpr uint64_t REGION_BYTES = 8 << 20;
constexpr int64_t SEND_LATENCY_PS = 250000;    //!< the NICs' post-to-wire latency
constexpr int64_t RECEIVE_LATENCY_PS = 400000; //!< and their wire-to-completion latency

/** The column of an RC QP counter in a row of GetRcQpCounters. */
uint32_t
RcColumn(const char* name)
{
    return CounterTable::IndexOf(RcQp::Counters::NAMES, name);
}

/**
 * Two hosts on one 400 Gbit/s InfiniBand link, a NIC with a host CPU on each, and one RC
 * operation from host 0 to host 1 (the responder ACKs every packet); runs it and keeps the
 * results.
 */
struct TwoHostRun
{
    uint64_t donePs = 0;             //!< the requester's work request completed
    std::vector<uint64_t> requester; //!< RcQp::Counters of host 0's QP
    std::vector<uint64_t> responder; //!< RcQp::Counters of host 1's QP

    TwoHostRun(VerbsWorkload::RcVerb verb, uint64_t bytes)
    {
        Ptr<Fabric> fabric = CreateObject<Fabric>();
        ObjectFactory ports("ns3::mcsim::Port");
        ports.Set("HeaderBytes", UintegerValue(0)); // the NIC sends the real headers
        fabric->SetPortFactory(ports);
        const uint32_t links[4] = {0, 0, 1, 0};
        const uint64_t rate[1] = {400000000000ULL};
        const uint32_t encoding[2] = {1, 1};
        const int64_t delay[1] = {DELAY_PS};
        fabric->Build(2, nullptr, 0, links, rate, encoding, delay, 1);
        ObjectFactory rc("ns3::mcsim::RcQp");
        rc.Set("AckInterval", UintegerValue(1));
        ObjectFactory nic("ns3::mcsim::Nic");
        nic.Set("SendLatency", TimeValue(PicoSeconds(SEND_LATENCY_PS)));
        nic.Set("ReceiveLatency", TimeValue(PicoSeconds(RECEIVE_LATENCY_PS)));
        Ptr<RdmaStack> stack = CreateObject<RdmaStack>();
        stack->SetAttribute("RegionBytes", UintegerValue(REGION_BYTES));
        stack->Setup(fabric,
                     nic,
                     ObjectFactory("ns3::mcsim::HostCpu"),
                     rc,
                     ObjectFactory("ns3::mcsim::UdQp"));
        Ptr<VerbsWorkload> work = CreateObject<VerbsWorkload>();
        work->Setup(stack);
        const uint32_t verbs[1] = {verb}, src[1] = {0}, dst[1] = {1};
        const uint64_t size[1] = {bytes};
        const int64_t start[1] = {0};
        work->AddRcOps(verbs, src, dst, size, start, 1);
        Simulator::Run();
        uint64_t times[4];
        work->GetRcOpTimes(times, 4);
        donePs = times[0];
        std::vector<uint64_t> counters(2 * RcQp::NUM_COUNTERS);
        work->GetRcQpCounters(counters.data(), counters.size());
        requester.assign(counters.begin(), counters.begin() + RcQp::NUM_COUNTERS);
        responder.assign(counters.begin() + RcQp::NUM_COUNTERS, counters.end());
        Simulator::Destroy();
        work->Dispose();
        stack->Dispose();
        fabric->Dispose();
    }
};

/** An RC WRITE streams at line rate: done = its wire bytes' serialisation + delay + the ACK. */
class RcWriteTestCase : public TestCase
{
  public:
    RcWriteTestCase()
        : TestCase("RC WRITE finishes at serialisation + propagation + the last ACK, exactly")
    {
    }

  private:
    void DoRun() override
    {
        const uint64_t bytes = (1 << 20) + 1000; // 257 packets, the last one short
        const uint64_t packets = (bytes + MTU - 1) / MTU;
        TwoHostRun r(VerbsWorkload::WRITE, bytes);
        const uint64_t wireBytes = bytes + packets * IB_BASE + RETH;
        const uint64_t ackPs = (IB_BASE + AETH) * PS_PER_BYTE;
        // the first byte leaves SendLatency after the post; an ACK is the NIC's own, and a send
        // completion does not wait for ReceiveLatency
        NS_TEST_ASSERT_MSG_EQ(r.donePs,
                              SEND_LATENCY_PS + wireBytes * PS_PER_BYTE + DELAY_PS + ackPs +
                                  DELAY_PS,
                              "the last ACK is back at the bound");
        NS_TEST_ASSERT_MSG_EQ(r.requester[RcColumn("tx_packets")],
                              packets,
                              "ceil(N / MTU) packets");
        NS_TEST_ASSERT_MSG_EQ(r.requester[RcColumn("tx_payload")], bytes, "payload sent");
        NS_TEST_ASSERT_MSG_EQ(r.responder[RcColumn("acks_sent")], packets, "one ACK per packet");
        NS_TEST_ASSERT_MSG_EQ(r.responder[RcColumn("rx_payload")], bytes, "payload accepted");
        NS_TEST_ASSERT_MSG_EQ(r.requester[RcColumn("retransmits")], 0, "nothing lost");
        NS_TEST_ASSERT_MSG_EQ(r.requester[RcColumn("completed")], 1, "one work request");
    }
};

/** An RC READ: the request out, then the responses at line rate (first and last with an AETH). */
class RcReadTestCase : public TestCase
{
  public:
    RcReadTestCase()
        : TestCase("RC READ finishes at request + responses' serialisation + two delays, exactly")
    {
    }

  private:
    void DoRun() override
    {
        const uint64_t bytes = 64 * MTU + 100; // 65 responses
        const uint64_t packets = (bytes + MTU - 1) / MTU;
        TwoHostRun r(VerbsWorkload::READ, bytes);
        const uint64_t requestPs = (IB_BASE + RETH) * PS_PER_BYTE + DELAY_PS;
        const uint64_t responseBytes = bytes + packets * IB_BASE + 2 * AETH;
        NS_TEST_ASSERT_MSG_EQ(r.donePs,
                              SEND_LATENCY_PS + requestPs + responseBytes * PS_PER_BYTE + DELAY_PS,
                              "the last response arrives at the bound");
        NS_TEST_ASSERT_MSG_EQ(r.requester[RcColumn("tx_packets")], 1, "one READ request");
        NS_TEST_ASSERT_MSG_EQ(r.responder[RcColumn("tx_packets")], packets, "ceil(N / MTU)");
        NS_TEST_ASSERT_MSG_EQ(r.responder[RcColumn("tx_payload")], bytes, "response bytes sent");
        NS_TEST_ASSERT_MSG_EQ(r.requester[RcColumn("rx_payload")], bytes, "response bytes read");
        NS_TEST_ASSERT_MSG_EQ(r.requester[RcColumn("completed")], 1, "one work request");
    }
};

class RdmaTestSuite : public TestSuite
{
  public:
    RdmaTestSuite()
        : TestSuite("mcsim-rdma", Type::UNIT)
    {
        AddTestCase(new RcWriteTestCase, Duration::QUICK);
        AddTestCase(new RcReadTestCase, Duration::QUICK);
    }
};

RdmaTestSuite g_rdmaTestSuite; //!< registers the suite with ns-3's test runner

} // namespace
} // namespace mcsim
} // namespace ns3
