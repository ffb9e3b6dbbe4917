// SPDX-License-Identifier: GPL-2.0-only
//
// ns-3 test suite "mcsim-congestion": the congestion controls (rdma.md, "Congestion control") on
// their own, no NIC and no fabric: a Dcqcn or an Hpcc told of CE marks, CNPs and ACKs by hand,
// its rate and window against closed forms. Run from Python with
// mcsim.runtime.run_cxx_test_suite("mcsim-congestion") (tests/models/rdma/test_congestion.py).

#include "ns3/double.h"
#include "ns3/mcsim/dcqcn.h"
#include "ns3/mcsim/hpcc.h"
#include "ns3/nstime.h"
#include "ns3/simulator.h"
#include "ns3/test.h"
#include "ns3/uinteger.h"

namespace ns3
{
namespace mcsim
{
namespace
{

constexpr uint64_t LINE_BPS = 100000000000ULL; //!< 100 Gbit/s
constexpr int64_t US = 1000000;                //!< ps per us

/** A congestion control of the kind's defaults is off until told: the line rate, no window. */
class IdleTestCase : public TestCase
{
  public:
    IdleTestCase()
        : TestCase("a congestion control starts at the line rate with no window")
    {
    }

  private:
    void DoRun() override
    {
        EventSource source(EventClass::TIMER);
        Ptr<CongestionControl> dcqcn = CreateObject<Dcqcn>();
        dcqcn->Start(LINE_BPS, &source);
        NS_TEST_ASSERT_MSG_EQ(dcqcn->Limited(), false, "not limited");
        NS_TEST_ASSERT_MSG_EQ(dcqcn->GetRateBps(), LINE_BPS, "the line rate");
        NS_TEST_ASSERT_MSG_EQ(dcqcn->GetWindowBytes(), CongestionControl::NO_WINDOW, "no window");
        NS_TEST_ASSERT_MSG_EQ(dcqcn->UsesCnps() && !dcqcn->UsesInt(), true, "DCQCN: CNPs");
        dcqcn->OnSent(1 << 30); // sending at the line rate changes nothing
        NS_TEST_ASSERT_MSG_EQ(dcqcn->GetRateBps(), LINE_BPS, "still the line rate");
        dcqcn->Dispose();
        Ptr<CongestionControl> hpcc = CreateObject<Hpcc>();
        hpcc->SetAttribute("HpccBaseRtt", TimeValue(PicoSeconds(10 * US)));
        hpcc->Start(LINE_BPS, &source);
        NS_TEST_ASSERT_MSG_EQ(hpcc->UsesInt() && !hpcc->UsesCnps(), true, "HPCC: INT");
        // W_init = B x T: 100 Gbit/s x 10 us = 125000 bytes
        NS_TEST_ASSERT_MSG_EQ(hpcc->GetWindowBytes(), 125000, "W_init = B T");
        NS_TEST_ASSERT_MSG_EQ(hpcc->Limited(), false, "at the line rate");
    }
};

/**
 * DCQCN's reaction point (Zhu et al., SIGCOMM 2015): a CNP cuts Rc to Rc (1 - alpha / 2) with
 * alpha = 1 at the first; alpha decays to (1 - g) alpha after an alpha period without CNPs; the
 * next CNP cuts by (1 - alpha / 2) with that alpha. The notification point: one CNP per N.
 */
class DcqcnTestCase : public TestCase
{
  public:
    DcqcnTestCase()
        : TestCase("DCQCN: a CNP cuts Rc to Rc (1 - alpha over 2), alpha decays, one CNP per N")
    {
    }

  private:
    void DoRun() override
    {
        const double g = 1.0 / 16;
        const int64_t k = 55 * US; // the alpha timer (the paper's K)
        EventSource source(EventClass::TIMER);
        Ptr<Dcqcn> cc = CreateObject<Dcqcn>();
        cc->SetAttribute("DcqcnG", DoubleValue(g));
        cc->SetAttribute("DcqcnAlphaTimer", TimeValue(PicoSeconds(k)));
        cc->SetAttribute("DcqcnRateTimer", TimeValue(Seconds(1))); // no increase within the test
        cc->Start(LINE_BPS, &source);
        // (from 1 us: a time 0 reads as "none yet", as the model's other times do)
        const int64_t t0 = US;
        bool first = false;
        bool second = true;
        bool ceAtN = false;
        uint64_t cut1 = 0;
        uint64_t atN = 0;
        Simulator::Schedule(PicoSeconds(t0), [&] {
            // the receiver's side: a CNP for the first CE mark, none for the next within N (50 us)
            first = cc->OnCe();
            second = cc->OnCe();
            cc->OnCnp();
            cut1 = cc->GetRateBps();
        });
        Simulator::Schedule(PicoSeconds(t0 + 50 * US), [&] { ceAtN = cc->OnCe(); });
        // alpha stays 1 at K (a CNP came in that period), decays to 1 - g at 2K; a CNP just after
        Simulator::Schedule(PicoSeconds(t0 + 2 * k + 1), [&] {
            atN = cc->GetRateBps();
            cc->OnCnp();
        });
        Simulator::Stop(PicoSeconds(t0 + 2 * k + 2));
        Simulator::Run();
        NS_TEST_ASSERT_MSG_EQ(first, true, "the first CE mark: a CNP");
        NS_TEST_ASSERT_MSG_EQ(second, false, "within N: none");
        NS_TEST_ASSERT_MSG_EQ(cut1, LINE_BPS / 2, "alpha 1: Rc (1 - 1 / 2)");
        NS_TEST_ASSERT_MSG_EQ(ceAtN, true, "N later: a CNP again");
        NS_TEST_ASSERT_MSG_EQ(atN, LINE_BPS / 2, "no increase: the rate timer is 1 s");
        const auto cut =
            static_cast<uint64_t>(static_cast<double>(LINE_BPS / 2) * (1 - (1 - g) / 2));
        NS_TEST_ASSERT_MSG_EQ(cut, 26562500000ULL, "50 Gbit/s x 17/32");
        NS_TEST_ASSERT_MSG_EQ(cc->GetRateBps(), cut, "alpha (1 - g): Rc (1 - alpha / 2)");
        for (int i = 0; i < 20; ++i)
        {
            cc->OnCnp();
        }
        NS_TEST_ASSERT_MSG_EQ(cc->GetRateBps(), 100000000ULL, "never below DcqcnMinRate");
        cc->Dispose();
        Simulator::Destroy();
    }
};

/** One hop's INT record: at tsPs, txBytes sent so far, a queue of qlenBytes, at LINE_BPS. */
IntStore::Stack
Hop(int64_t tsPs, uint64_t txBytes, uint64_t qlenBytes)
{
    IntStore::Stack s;
    s.hops = 1;
    s.hop[0] = IntHop{tsPs, txBytes, qlenBytes, LINE_BPS};
    return s;
}

/**
 * HPCC's sender (Li et al., SIGCOMM 2019, Algorithm 1): a hop at u = 1 >= eta makes W = W_init
 * eta + W_AI (multiplicative) and the rate W / T; then at u = 0.5 < eta, W = Wc + W_AI (additive).
 */
class HpccTestCase : public TestCase
{
  public:
    HpccTestCase()
        : TestCase("HPCC: W = Wc (eta over U) + W_AI at U >= eta, Wc + W_AI below, rate W over T")
    {
    }

  private:
    void DoRun() override
    {
        const int64_t t = 10 * US;
        EventSource source(EventClass::TIMER);
        Ptr<Hpcc> cc = CreateObject<Hpcc>();
        cc->SetAttribute("HpccBaseRtt", TimeValue(PicoSeconds(t)));
        cc->Start(LINE_BPS, &source);
        const double wInit = 125000;              // B T / 8
        const double wAi = LINE_BPS / 2500e5 / 8; // R_AI = B / 2500, x T: 50 bytes
        NS_TEST_ASSERT_MSG_EQ(wAi, 50.0, "W_AI");
        cc->OnAck(Hop(0, 0, 0), 1, 10); // the first records: nothing to compare with
        NS_TEST_ASSERT_MSG_EQ(cc->GetWindowBytes(), 125000, "unchanged");
        // one T later the hop sent B T bytes with no queue: u = 1, U = 1 (tau = T)
        cc->OnAck(Hop(t, 125000, 0), 11, 20);
        const double w1 = wInit * 0.95 + wAi;
        NS_TEST_ASSERT_MSG_EQ_TOL(double(cc->GetWindowBytes()), w1, 1.0, "W_init eta + W_AI");
        NS_TEST_ASSERT_MSG_EQ_TOL(double(cc->GetRateBps()), w1 / wInit * LINE_BPS, 1e4, "W / T");
        NS_TEST_ASSERT_MSG_EQ(cc->Limited(), true, "below the line rate");
        // the next T at half the rate: u = 0.5 < eta, the first additive step
        cc->OnAck(Hop(2 * t, 125000 + 62500, 0), 21, 30);
        NS_TEST_ASSERT_MSG_EQ_TOL(cc->GetU(), 0.5, 1e-12, "U = u (tau = T)");
        NS_TEST_ASSERT_MSG_EQ_TOL(double(cc->GetWindowBytes()), w1 + wAi, 1.0, "Wc + W_AI");
        cc->Dispose();
    }
};

/** A congestion control of an HPCC without a base RTT is refused when a NIC checks it. */
class HpccCheckTestCase : public TestCase
{
  public:
    HpccCheckTestCase()
        : TestCase("HPCC without a base RTT is refused")
    {
    }

  private:
    void DoRun() override
    {
        bool threw = false;
        try
        {
            CreateObject<Hpcc>()->Check();
        }
        catch (const std::invalid_argument&)
        {
            threw = true;
        }
        NS_TEST_ASSERT_MSG_EQ(threw, true, "HpccBaseRtt 0: std::invalid_argument");
    }
};

class CongestionControlTestSuite : public TestSuite
{
  public:
    CongestionControlTestSuite()
        : TestSuite("mcsim-congestion", Type::UNIT)
    {
        AddTestCase(new IdleTestCase, Duration::QUICK);
        AddTestCase(new DcqcnTestCase, Duration::QUICK);
        AddTestCase(new HpccTestCase, Duration::QUICK);
        AddTestCase(new HpccCheckTestCase, Duration::QUICK);
    }
};

CongestionControlTestSuite g_congestionControlTestSuite; //!< registers the suite with ns-3's runner

} // namespace
} // namespace mcsim
} // namespace ns3
