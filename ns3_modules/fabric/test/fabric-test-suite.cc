// SPDX-License-Identifier: GPL-2.0-only
//
// ns-3 test suite "mcsim-fabric": closed-form checks of the link model. Run from Python with
// mcsim.runtime.run_cxx_test_suite("mcsim-fabric") (tests/test_cxx_suites.py).

#include "ns3/mcsim/port.h"
#include "ns3/mcsim/traffic-sink.h"
#include "ns3/mcsim/traffic-source.h"

#include "ns3/simulator.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"

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

/** A source streams S bytes; the sink gets every byte, and the last bit lands at n*tx + delay. */
class StreamTestCase : public TestCase
{
  public:
    StreamTestCase()
        : TestCase("A stream arrives whole at packets * tx time + delay")
    {
    }

  private:
    void DoRun() override
    {
        const uint64_t total = 1 << 20;
        const uint32_t mtu = 4096;
        Ptr<Port> port = CreateObject<Port>();
        port->SetAttribute("DataRate", DataRateValue(DataRate("400Gbps")));
        port->SetAttribute("HeaderBytes", UintegerValue(58));
        port->SetAttribute("Delay", TimeValue(NanoSeconds(500)));
        Ptr<TrafficSink> sink = CreateObject<TrafficSink>();
        port->Connect(sink->AsReceiver(), 0);
        Ptr<TrafficSource> source = CreateObject<TrafficSource>();
        source->SetAttribute("TotalBytes", UintegerValue(total));
        source->SetAttribute("PacketBytes", UintegerValue(mtu));
        source->SetPort(port);
        source->Start(MicroSeconds(1));
        Simulator::Run();

        const uint64_t packets = total / mtu;
        NS_TEST_ASSERT_MSG_EQ(sink->GetReceivedBytes(), total, "every byte arrives");
        NS_TEST_ASSERT_MSG_EQ(sink->GetReceivedPackets(), packets, "every packet arrives");
        NS_TEST_ASSERT_MSG_EQ(port->GetTxWireBytes(), total + packets * 58, "wire bytes");
        const Time expected = MicroSeconds(1) + port->GetTxTime(mtu) * packets + NanoSeconds(500);
        NS_TEST_ASSERT_MSG_EQ(sink->GetLastArrival(), expected, "last arrival");
        NS_TEST_ASSERT_MSG_EQ(sink->GetFirstArrival(),
                              MicroSeconds(1) + port->GetTxTime(mtu) + NanoSeconds(500),
                              "first arrival");
        NS_TEST_ASSERT_MSG_EQ(port->GetBusyTime(), port->GetTxTime(mtu) * packets, "busy time");
        Simulator::Destroy();
    }
};

class FabricTestSuite : public TestSuite
{
  public:
    FabricTestSuite()
        : TestSuite("mcsim-fabric", Type::UNIT)
    {
        AddTestCase(new PortTxTimeTestCase, Duration::QUICK);
        AddTestCase(new StreamTestCase, Duration::QUICK);
    }
};

FabricTestSuite g_fabricTestSuite; //!< registers the suite with ns-3's test runner

} // namespace
} // namespace mcsim
} // namespace ns3
