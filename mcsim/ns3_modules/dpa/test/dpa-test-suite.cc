// SPDX-License-Identifier: GPL-2.0-only
//
// ns-3 test suite "mcsim-dpa": closed-form checks of the DPA completion processor. Run from
// Python with mcsim.runtime.run_cxx_test_suite("mcsim-dpa") (tests/models/dpa/test_dpa.py).

#include "ns3/data-rate.h"
#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/mcsim/completion-source.h"
#include "ns3/mcsim/dpa.h"
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

Ptr<Dpa>
MakeDpa(uint32_t threads, ThreadPlacement placement = ThreadPlacement::SPREAD)
{
    ObjectFactory f("ns3::mcsim::Dpa");
    f.Set("Threads", UintegerValue(threads));
    f.Set("Placement", EnumValue(placement));
    return f.Create<Dpa>();
}

/** QP q goes to thread q mod Threads; Spread puts thread t on core t mod 16, Pack on t / 16. */
class DpaMappingTestCase : public TestCase
{
  public:
    DpaMappingTestCase()
        : TestCase("Endpoint-to-thread mapping and thread placement")
    {
    }

  private:
    void DoRun() override
    {
        Ptr<Dpa> spread = MakeDpa(40);
        NS_TEST_ASSERT_MSG_EQ(spread->GetThreadOf(41), 1, "41 mod 40");
        NS_TEST_ASSERT_MSG_EQ(spread->GetThreadOf(39), 39, "39 mod 40");
        NS_TEST_ASSERT_MSG_EQ(spread->GetCoreOf(17), 1, "spread: 17 mod 16");
        Ptr<Dpa> pack = MakeDpa(40, ThreadPlacement::PACK);
        NS_TEST_ASSERT_MSG_EQ(pack->GetCoreOf(17), 1, "pack: 17 / 16");
        NS_TEST_ASSERT_MSG_EQ(pack->GetCoreOf(15), 0, "pack: 15 / 16");
        NS_TEST_ASSERT_MSG_EQ(spread->GetCoreOf(15), 15, "spread: 15 mod 16");
    }
};

/** Service times: cycles / clock, f(2) = 1 / (1 + u^2), contention 1 + a (A - 1). */
class DpaServiceTimeTestCase : public TestCase
{
  public:
    DpaServiceTimeTestCase()
        : TestCase("Service time: cycles over the clock, core sharing and contention")
    {
    }

  private:
    void DoRun() override
    {
        // the sharing of the SDR-RDMA profile (mcsim/config/dpa.py), where it is strong
        const double u = 0.45;
        const double contention = 0.012;
        ObjectFactory f("ns3::mcsim::Dpa");
        f.Set("Threads", UintegerValue(16));
        f.Set("IssueShare", DoubleValue(u));
        f.Set("CoreContention", DoubleValue(contention));
        Ptr<Dpa> dpa = f.Create<Dpa>();
        // 577 cycles / 1.8 GHz = 320,555.6 ps; staging 2308 cycles = 1,282,222.2 ps (rounded up)
        NS_TEST_ASSERT_MSG_EQ(dpa->GetServiceTime(false, 1, 1).GetPicoSeconds(),
                              320556,
                              "zero copy");
        NS_TEST_ASSERT_MSG_EQ(dpa->GetServiceTime(true, 1, 1).GetPicoSeconds(), 1282223, "staging");
        NS_TEST_ASSERT_MSG_EQ_TOL(dpa->GetSharingFactor(1), 1.0, 1e-12, "f(1)");
        NS_TEST_ASSERT_MSG_EQ_TOL(dpa->GetSharingFactor(2), 1.0 / (1.0 + u * u), 1e-12, "f(2)");
        // n threads on a core never deliver more than 1/u lone threads' worth
        NS_TEST_ASSERT_MSG_LT(16 * dpa->GetSharingFactor(16), 1.0 / u, "issue bound");
        const double expected = 577e12 / 1.8e9 * (1 + contention * 15) / dpa->GetSharingFactor(2);
        NS_TEST_ASSERT_MSG_EQ_TOL(dpa->GetServiceTime(false, 2, 16).GetPicoSeconds(),
                                  expected,
                                  1.0,
                                  "2 on a core, 16 busy cores");
    }
};

/** One saturated thread finishes K completions at K * s; a slow loopback paces staged ones. */
class DpaSaturationTestCase : public TestCase
{
  public:
    DpaSaturationTestCase()
        : TestCase("A saturated thread and a saturated loopback follow their closed forms")
    {
    }

  private:
    void DoRun() override
    {
        ObjectFactory f("ns3::mcsim::Dpa");
        f.Set("Threads", UintegerValue(1));
        Ptr<CompletionSource> src = CreateObject<CompletionSource>();
        src->Setup(f);
        src->Start(100, 7, 4096, false, Time(0));
        Simulator::Run();
        std::vector<uint64_t> done(src->GetProcessed());
        src->GetProcessedPs(done.data(), done.size());
        NS_TEST_ASSERT_MSG_EQ(done.size(), 100, "all processed");
        NS_TEST_ASSERT_MSG_EQ(done.back(), 100 * 320556ULL, "K * s");
        src->Dispose();
        Simulator::Destroy();

        // 4 threads of staging work (1.28 us each) against a 10 Gbit/s loopback (3.28 us per
        // 4 KiB): the loopback paces the completions after the first
        f.Set("Threads", UintegerValue(4));
        f.Set("LoopbackRate", DataRateValue(DataRate("10Gbps")));
        src = CreateObject<CompletionSource>();
        src->Setup(f);
        src->Start(50, 4, 4096, true, Time(0));
        Simulator::Run();
        done.assign(src->GetProcessed(), 0);
        src->GetProcessedPs(done.data(), done.size());
        NS_TEST_ASSERT_MSG_EQ(done.size(), 50, "all processed");
        const uint64_t copyPs = 4096ULL * 8 * 100; // 10 Gbit/s: 100 ps per bit
        NS_TEST_ASSERT_MSG_EQ(done[49] - done[0], 49 * copyPs, "loopback-bound");
        src->Dispose();
        Simulator::Destroy();
    }
};

class DpaTestSuite : public TestSuite
{
  public:
    DpaTestSuite()
        : TestSuite("mcsim-dpa", Type::UNIT)
    {
        AddTestCase(new DpaMappingTestCase, Duration::QUICK);
        AddTestCase(new DpaServiceTimeTestCase, Duration::QUICK);
        AddTestCase(new DpaSaturationTestCase, Duration::QUICK);
    }
};

DpaTestSuite g_dpaTestSuite; //!< registers the suite

} // namespace
} // namespace mcsim
} // namespace ns3
