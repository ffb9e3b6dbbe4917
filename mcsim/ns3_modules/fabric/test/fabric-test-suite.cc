// SPDX-License-Identifier: GPL-2.0-only
//
// ns-3 test suite "mcsim-fabric": closed-form checks of the link model, and of PfcPort alone
// (pfc-port-test.cc). Run from Python with
// mcsim.runtime.run_cxx_test_suite("mcsim-fabric") (tests/models/fabric/test_fabric_suite.py).

#include "pfc-port-test.h"
#include "star-fabric.h"

#include "ns3/callback.h"
#include "ns3/mcsim/fabric-header.h"
#include "ns3/mcsim/fabric.h"
#include "ns3/mcsim/port.h"
#include "ns3/simulator.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"

#include <map>
#include <utility>
#include <vector>

namespace ns3
{
namespace mcsim
{
namespace
{

/** FDR InfiniBand: 4 x 14.0625 Gbaud = 56.25 Gbit/s, 64b/66b; 4096 B payload + 30 B headers. */
class PortTxTimeTestCase : public TestCase
{
  public:
    PortTxTimeTestCase()
        : TestCase("Port serialization time is exact, rounded up, and includes headers")
    {
    }

  private:
    void DoRun() override
    {
        Ptr<Port> port = CreateObject<Port>();
        port->SetAttribute("DataRate", DataRateValue(DataRate("56.25Gbps")));
        port->SetAttribute("EncodingDataBits", UintegerValue(64));
        port->SetAttribute("EncodingLineBits", UintegerValue(66));
        port->SetAttribute("HeaderBytes", UintegerValue(30));
        // 4126 B * 8 * 66 / (64 * 56.25e9) s = 605,146.67 ps -> rounded up to 605,147 ps
        NS_TEST_ASSERT_MSG_EQ(port->GetTxTime(4096).GetPicoSeconds(), 605147, "FDR 4 KiB");
        NS_TEST_ASSERT_MSG_EQ(port->GetDataRateBps(), 54545454545ULL, "FDR data rate");
        port->SetAttribute("DataRate", DataRateValue(DataRate("1600Gbps")));
        port->SetAttribute("EncodingDataBits", UintegerValue(1));
        port->SetAttribute("EncodingLineBits", UintegerValue(1));
        port->SetAttribute("HeaderBytes", UintegerValue(0));
        // 4096 B at 1.6 Tbit/s = 20.48 ns exactly
        NS_TEST_ASSERT_MSG_EQ(port->GetTxTime(4096).GetPicoSeconds(), 20480, "1.6T 4 KiB");
    }
};

/** Two hosts on one link: the stream arrives whole at packets * tx time + delay. */
class StreamTestCase : public TestCase
{
  public:
    StreamTestCase()
        : TestCase("A host-to-host stream arrives at packets * tx time + delay")
    {
    }

  private:
    void DoRun() override
    {
        const uint64_t total = 1 << 20;
        const uint32_t mtu = 4096;
        Ptr<Fabric> fabric = CreateObject<Fabric>();
        fabric->SetPortFactory(PortsWithHeaderBytes(10));
        const uint32_t links[4] = {0, 0, 1, 0};
        const uint64_t rate[1] = {400000000000ULL};
        const uint32_t encoding[2] = {1, 1};
        const int64_t delay[1] = {500000};
        fabric->Build(2, nullptr, 0, links, rate, encoding, delay, 1);
        const uint32_t host[1] = {0}, dst[1] = {1}, mtus[1] = {mtu}, flow[1] = {0};
        const uint64_t bytes[1] = {total};
        const int64_t start[1] = {1000000};
        fabric->AddSources(host, dst, bytes, mtus, flow, start, 1);
        Simulator::Run();

        const uint64_t packets = total / mtu;
        std::vector<uint64_t> hosts(2 * Host::NUM_COUNTERS);
        fabric->GetHostCounters(hosts.data(), hosts.size());
        const uint64_t* rx = hosts.data() + Host::NUM_COUNTERS; // host 1
        NS_TEST_ASSERT_MSG_EQ(rx[0], packets, "every packet arrives");
        NS_TEST_ASSERT_MSG_EQ(rx[1], total + packets * FabricHeader::SERIALIZED_BYTES, "bytes");
        // (4096 + 16 + 10) B * 8 / 400 Gbit/s = 82.44 ns per packet, exact
        const uint64_t txPs = 82440;
        NS_TEST_ASSERT_MSG_EQ(rx[3], 1000000 + packets * txPs + 500000, "last arrival");
        Simulator::Destroy();
        fabric->Dispose();
    }
};

/**
 * 4-to-1 incast through one switch with a lossless ingress buffer of two packets: credits throttle
 * the senders, nothing is dropped, and the receiver's link is busy for all the bytes.
 */
class CreditIncastTestCase : public TestCase
{
  public:
    CreditIncastTestCase()
        : TestCase("Lossless incast with tiny buffers drops nothing and conserves packets")
    {
    }

  private:
    void DoRun() override
    {
        const uint32_t nHosts = 5;
        Ptr<Fabric> fabric = CreateObject<Fabric>();
        fabric->SetPortFactory(PortsWithHeaderBytes(0));
        fabric->SetAttribute("SwitchBufferBytes", UintegerValue(2 * (4096 + 16)));
        BuildStarFabric(fabric, nHosts);
        const uint32_t host[4] = {1, 2, 3, 4}, dst[4] = {0, 0, 0, 0},
                       mtu[4] = {4096, 4096, 4096, 4096};
        const uint32_t flow[4] = {0, 0, 0, 0};
        const uint64_t bytes[4] = {1 << 18, 1 << 18, 1 << 18, 1 << 18};
        const int64_t start[4] = {0, 0, 0, 0};
        fabric->AddSources(host, dst, bytes, mtu, flow, start, 4);
        Simulator::Run();

        std::vector<uint64_t> ports_(fabric->GetNPorts() * Port::NUM_COUNTERS);
        fabric->GetPortCounters(ports_.data(), ports_.size());
        uint64_t drops = 0, stalls = 0;
        for (uint32_t i = 0; i < fabric->GetNPorts(); ++i)
        {
            drops += ports_[i * Port::NUM_COUNTERS + 3];
            stalls += ports_[i * Port::NUM_COUNTERS + 7];
        }
        NS_TEST_ASSERT_MSG_EQ(drops, 0, "lossless never drops");
        NS_TEST_ASSERT_MSG_GT(stalls, 0, "the senders really waited for credits");
        std::vector<uint64_t> hosts(nHosts * Host::NUM_COUNTERS);
        fabric->GetHostCounters(hosts.data(), hosts.size());
        NS_TEST_ASSERT_MSG_EQ(hosts[0], 4 * 64, "every packet reaches the receiver");
        // the switch's port toward host 0 is never idle once the first packet is in
        const uint32_t toReceiver = fabric->GetPortIndex(nHosts, 0);
        const uint64_t busy = ports_[toReceiver * Port::NUM_COUNTERS + 6];
        NS_TEST_ASSERT_MSG_EQ(busy, 4 * 64 * 328960ULL, "(4096 + 16) B at 100 Gbit/s each");
        Simulator::Destroy();
        fabric->Dispose();
    }
};

/**
 * 4-to-1 lossless incast with a two-packet ingress buffer and 5 % loss on every link direction:
 * each lost packet's credit comes back, so the senders never stall forever, every packet not lost
 * arrives, and at the end every port holds all its credits again.
 */
class LossCreditTestCase : public TestCase
{
  public:
    LossCreditTestCase()
        : TestCase("Lossless incast under random loss conserves credits and packets")
    {
    }

  private:
    void DoRun() override
    {
        const uint32_t nHosts = 5;
        const uint64_t buffer = 2 * (4096 + 16);
        Ptr<Fabric> fabric = CreateObject<Fabric>();
        fabric->SetPortFactory(PortsWithHeaderBytes(0));
        fabric->SetAttribute("SwitchBufferBytes", UintegerValue(buffer));
        fabric->SetAttribute("HostBufferBytes", UintegerValue(buffer));
        fabric->SetAttribute("Seed", UintegerValue(7));
        BuildStarFabric(fabric, nHosts);
        const std::vector<double> loss(fabric->GetNPorts(), 0.05);
        fabric->SetLossProbabilities(loss.data(), loss.size());
        const uint32_t host[4] = {1, 2, 3, 4}, dst[4] = {0, 0, 0, 0};
        const uint32_t mtu[4] = {4096, 4096, 4096, 4096};
        const uint32_t flow[4] = {0, 0, 0, 0};
        const uint64_t bytes[4] = {1 << 18, 1 << 18, 1 << 18, 1 << 18};
        const int64_t start[4] = {0, 0, 0, 0};
        fabric->AddSources(host, dst, bytes, mtu, flow, start, 4);
        Simulator::Run();

        std::vector<uint64_t> sources(4 * 3);
        fabric->GetSourceCounters(sources.data(), sources.size());
        for (uint32_t s = 0; s < 4; ++s)
        {
            NS_TEST_ASSERT_MSG_EQ(sources[3 * s], 64, "every source sent all its packets");
        }
        std::vector<uint64_t> c(fabric->GetNPorts() * Port::NUM_COUNTERS);
        fabric->GetPortCounters(c.data(), c.size());
        uint64_t lost = 0, tail = 0;
        for (uint32_t g = 0; g < fabric->GetNPorts(); ++g)
        {
            tail += c[g * Port::NUM_COUNTERS + 3];
            lost += c[g * Port::NUM_COUNTERS + 8];
            NS_TEST_ASSERT_MSG_EQ(fabric->GetPort(g)->GetCreditsHeld(),
                                  buffer,
                                  "port " << g << " got all its credits back");
        }
        NS_TEST_ASSERT_MSG_EQ(tail, 0, "lossless never tail-drops");
        NS_TEST_ASSERT_MSG_GT(lost, 0, "packets were really lost");
        std::vector<uint64_t> hosts(nHosts * Host::NUM_COUNTERS);
        fabric->GetHostCounters(hosts.data(), hosts.size());
        NS_TEST_ASSERT_MSG_EQ(hosts[0] + lost, 4 * 64, "every packet not lost arrives");
        Simulator::Destroy();
        fabric->Dispose();
    }
};

/**
 * host 0 -> switch 2 -> switch 3 -> host 1 (three hops), N packets: the ports' trace sources fire
 * N * 3 times "Tx" and "Rx" with the right (node, port) and fields; with two chosen drops on the
 * middle link, "Drop" fires twice (CHOSEN) and the dropped packets take no later hop.
 */
class PortTraceTestCase : public TestCase
{
  public:
    PortTraceTestCase()
        : TestCase("Port trace sources fire once per packet and hop, drops with their cause")
    {
    }

  private:
    static constexpr uint64_t N = 20; //!< packets of the flow
    static constexpr uint32_t HOPS = 3;

    void Tx(Ptr<const Packet> packet, const FabricHeader::Fields& f, uint32_t node, uint32_t port)
    {
        m_tx[{node, port}]++;
        m_badFields += f.src != 0 || f.dst != 1;
    }

    void Rx(Ptr<const Packet> packet, const FabricHeader::Fields& f, uint32_t node, uint32_t port)
    {
        m_rx++;
    }

    void Drop(Ptr<const Packet> packet,
              const FabricHeader::Fields& f,
              uint32_t node,
              uint32_t port,
              DropCause cause)
    {
        m_drops++;
        m_badDrops += node != 2 || port != 1 || cause != DropCause::CHOSEN;
    }

    /** Run the flow, with these chosen drops on switch 2's port 1. */
    void RunFlow(const std::vector<uint64_t>& chosen)
    {
        m_tx.clear();
        m_rx = m_drops = m_badFields = m_badDrops = 0;
        Ptr<Fabric> fabric = CreateObject<Fabric>();
        fabric->SetPortFactory(PortsWithHeaderBytes(0));
        const uint32_t switchPorts[2] = {2, 2};
        const uint32_t links[12] = {0, 0, 2, 0, 2, 1, 3, 0, 3, 1, 1, 0};
        const uint64_t rate[3] = {100000000000ULL, 100000000000ULL, 100000000000ULL};
        const uint32_t encoding[6] = {1, 1, 1, 1, 1, 1};
        const int64_t delay[3] = {100000, 100000, 100000};
        fabric->Build(2, switchPorts, 2, links, rate, encoding, delay, 3);
        // per destination switch: switch 2 reaches switch 3's host by port 1, switch 3 switch 2's
        // by port 0 (their own hosts go to their host ports)
        const uint32_t offsets2[3] = {0, 0, 1}, offsets3[3] = {0, 1, 1};
        const uint32_t ports2[1] = {1}, ports3[1] = {0};
        fabric->SetUnicastTable(2, offsets2, 3, ports2, 1);
        fabric->SetUnicastTable(3, offsets3, 3, ports3, 1);
        fabric->SetChosenDrops(2, 1, chosen.data(), chosen.size());
        for (uint32_t g = 0; g < fabric->GetNPorts(); ++g)
        {
            Ptr<Port> p = fabric->GetPort(g);
            p->TraceConnectWithoutContext("Tx", MakeCallback(&PortTraceTestCase::Tx, this));
            p->TraceConnectWithoutContext("Rx", MakeCallback(&PortTraceTestCase::Rx, this));
            p->TraceConnectWithoutContext("Drop", MakeCallback(&PortTraceTestCase::Drop, this));
        }
        const uint32_t host[1] = {0}, dst[1] = {1}, mtu[1] = {4096}, flow[1] = {0};
        const uint64_t bytes[1] = {N * 4096};
        const int64_t start[1] = {0};
        fabric->AddSources(host, dst, bytes, mtu, flow, start, 1);
        Simulator::Run();
        Simulator::Destroy();
        fabric->Dispose();
    }

    uint64_t TxAt(uint32_t node, uint32_t port)
    {
        return m_tx[{node, port}];
    }

    void DoRun() override
    {
        RunFlow({});
        uint64_t tx = 0;
        for (const auto& [where, n] : m_tx)
        {
            tx += n;
        }
        NS_TEST_ASSERT_MSG_EQ(tx, N * HOPS, "one Tx per packet and hop");
        NS_TEST_ASSERT_MSG_EQ(m_rx, N * HOPS, "one Rx per packet and hop");
        NS_TEST_ASSERT_MSG_EQ(m_drops, 0, "nothing dropped");
        NS_TEST_ASSERT_MSG_EQ(TxAt(0, 0), N, "host 0's port sends the flow");
        NS_TEST_ASSERT_MSG_EQ(TxAt(2, 1), N, "switch 2 forwards it on port 1");
        NS_TEST_ASSERT_MSG_EQ(TxAt(3, 1), N, "switch 3 forwards it on port 1");
        NS_TEST_ASSERT_MSG_EQ(m_badFields, 0, "every Tx carries the flow's fields");

        RunFlow({0, 5});
        NS_TEST_ASSERT_MSG_EQ(m_drops, 2, "the two chosen packets are dropped");
        NS_TEST_ASSERT_MSG_EQ(m_badDrops, 0, "at switch 2's port 1, cause CHOSEN");
        NS_TEST_ASSERT_MSG_EQ(TxAt(2, 1), N, "a lost packet was still sent");
        NS_TEST_ASSERT_MSG_EQ(TxAt(3, 1), N - 2, "a lost packet takes no later hop");
        NS_TEST_ASSERT_MSG_EQ(m_rx, N + 2 * (N - 2), "a lost packet is not received");
    }

    std::map<std::pair<uint32_t, uint32_t>, uint64_t> m_tx; //!< (node, port) -> Tx events
    uint64_t m_rx = 0;
    uint64_t m_drops = 0;
    uint64_t m_badFields = 0; //!< Tx events with other fields than the flow's
    uint64_t m_badDrops = 0;  //!< Drop events elsewhere or with another cause
};

class FabricTestSuite : public TestSuite
{
  public:
    FabricTestSuite()
        : TestSuite("mcsim-fabric", Type::UNIT)
    {
        AddTestCase(new PortTxTimeTestCase, Duration::QUICK);
        AddTestCase(new StreamTestCase, Duration::QUICK);
        AddTestCase(new CreditIncastTestCase, Duration::QUICK);
        AddTestCase(new LossCreditTestCase, Duration::QUICK);
        AddTestCase(new PortTraceTestCase, Duration::QUICK);
        AddTestCase(MakePfcThresholdsTestCase(), Duration::QUICK);
        AddTestCase(MakePfcXoffXonTestCase(), Duration::QUICK);
        AddTestCase(MakePfcRefreshTestCase(), Duration::QUICK);
    }
};

FabricTestSuite g_fabricTestSuite; //!< registers the suite with ns-3's test runner

} // namespace
} // namespace mcsim
} // namespace ns3
