// SPDX-License-Identifier: GPL-2.0-only
// HPCC's sender (rdma.md, "HPCC"): the window and rate of one RC QP from the INT its ACKs bring.
#include "hpcc.h"

#include "ns3/double.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <stdexcept>

namespace ns3
{
namespace mcsim
{

namespace
{
constexpr double PS_PER_S = 1e12;
/** R_AI when "HpccRai" is 0: the line rate / 2500 (the HPCC authors' simulator's runs: 10 Mbit/s
 * per 25 Gbit/s of link rate). */
constexpr uint64_t HPCC_RAI_DIVISOR = 2500;
} // namespace

NS_OBJECT_ENSURE_REGISTERED(Hpcc);

TypeId
Hpcc::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::mcsim::Hpcc")
            .SetParent<CongestionControl>()
            .SetGroupName("Mcsim")
            .AddConstructor<Hpcc>()
            .AddAttribute("HpccEta",
                          "HPCC's eta, the target utilization: 0.95 (HPCC, SIGCOMM'19).",
                          DoubleValue(0.95),
                          MakeDoubleAccessor(&Hpcc::m_eta),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("HpccMaxStage",
                          "HPCC's maxStage, additive increase steps before a multiplicative "
                          "update: 5 (HPCC, SIGCOMM'19).",
                          UintegerValue(5),
                          MakeUintegerAccessor(&Hpcc::m_maxStage),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("HpccRai",
                          "HPCC's additive increase W_AI as a rate in bit/s (W_AI = R_AI x T); 0: "
                          "the line rate / 2500 (the HPCC authors' simulator's runs).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&Hpcc::m_rai),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("HpccBaseRtt",
                          "HPCC's T, the base RTT (W_init = line rate x T); 0: none (an error with "
                          "HPCC: the frontend computes it from the fabric).",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&Hpcc::m_baseRtt),
                          MakeTimeChecker(Time(0)));
    return tid;
}

void
Hpcc::Check() const
{
    if (!m_baseRtt.IsStrictlyPositive())
    {
        throw std::invalid_argument("Nic::Attach: HPCC needs its base RTT (HpccBaseRtt > 0)");
    }
}

void
Hpcc::DoStart()
{
    const uint64_t ai = m_rai != 0 ? m_rai : m_lineBps / HPCC_RAI_DIVISOR;
    const double t = static_cast<double>(m_baseRtt.GetPicoSeconds()) / PS_PER_S;
    m_wInit = static_cast<double>(m_lineBps) * t / 8;
    m_wAi = static_cast<double>(ai) * t / 8;
    m_wc = m_wInit;
    m_w = m_wInit;
    m_windowBytes = static_cast<uint64_t>(m_w);
}

void
Hpcc::OnAck(const IntStore::Stack& s, uint32_t ackedEnd, uint32_t nextPsn)
{
    if (!m_haveRecords || s.hops != m_last.hops)
    {
        // the first records (or a new path): nothing to compare with yet
        m_last = s;
        m_haveRecords = true;
        m_lastUpdateSeq = nextPsn;
        return;
    }
    const bool commit = ackedEnd > m_lastUpdateSeq; // a full RTT of feedback since the last one
    if (MeasureInflight(s))
    {
        ComputeWind(commit);
    }
    if (commit)
    {
        m_lastUpdateSeq = nextPsn;
    }
}

bool
Hpcc::MeasureInflight(const IntStore::Stack& s)
{
    const double t = static_cast<double>(m_baseRtt.GetPicoSeconds());
    double u = 0;
    double tau = 0;
    bool any = false;
    for (uint32_t i = 0; i < s.hops; ++i)
    {
        const IntHop& now = s.hop[i];
        const IntHop& was = m_last.hop[i];
        if (now.tsPs <= was.tsPs)
        {
            continue; // no packet of this QP passed the hop since
        }
        const auto dt = static_cast<double>(now.tsPs - was.tsPs);
        const double b = static_cast<double>(now.rateBps);
        const double txRate = static_cast<double>(now.txBytes - was.txBytes) * 8 * PS_PER_S / dt;
        const double q = static_cast<double>(std::min(now.qlenBytes, was.qlenBytes));
        const double ui = q * 8 * PS_PER_S / (b * t) + txRate / b;
        if (!any || ui > u)
        {
            u = ui;
            tau = dt;
        }
        any = true;
    }
    m_last = s;
    if (!any)
    {
        return false;
    }
    tau = std::min(tau, t);
    m_u = (1 - tau / t) * m_u + tau / t * u;
    return true;
}

void
Hpcc::ComputeWind(bool commit)
{
    double w;
    uint32_t stage;
    if (m_u >= m_eta || m_stage >= m_maxStage)
    {
        w = m_wc / (m_u / m_eta) + m_wAi; // multiplicative: toward eta
        stage = 0;
    }
    else
    {
        w = m_wc + m_wAi; // additive
        stage = m_stage + 1;
    }
    w = std::clamp(w, std::max(m_wAi, 1.0), m_wInit);
    m_w = w;
    m_windowBytes = static_cast<uint64_t>(w);
    if (commit)
    {
        m_wc = w;
        m_stage = stage;
    }
    // the pacing rate W / T, as at most the line rate
    m_rateBps = std::min<uint64_t>(m_lineBps, static_cast<uint64_t>(w / m_wInit * m_lineBps));
}

} // namespace mcsim
} // namespace ns3
