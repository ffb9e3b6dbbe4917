// SPDX-License-Identifier: GPL-2.0-only
// DCQCN for one QP (rdma.md, "DCQCN"): its attributes, the CNP interval, the reaction point.
#include "dcqcn.h"

#include "ns3/double.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/reusable-event.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(Dcqcn);

TypeId
Dcqcn::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::mcsim::Dcqcn")
            .SetParent<CongestionControl>()
            .SetGroupName("Mcsim")
            .AddConstructor<Dcqcn>()
            .AddAttribute(
                "DcqcnG",
                "DCQCN's g, alpha's gain (firmware dce_tcp_g): 1/256 (DCQCN, SIGCOMM'15).",
                DoubleValue(1.0 / 256),
                MakeDoubleAccessor(&Dcqcn::m_g),
                MakeDoubleChecker<double>(0.0, 1.0))
            .AddAttribute("DcqcnAlphaTimer",
                          "DCQCN's K, alpha's update period (dce_tcp_rtt): 55 us (SIGCOMM'15).",
                          TimeValue(MicroSeconds(55)),
                          MakeTimeAccessor(&Dcqcn::m_alphaTimer),
                          MakeTimeChecker(PicoSeconds(1)))
            .AddAttribute(
                "DcqcnRateTimer",
                "DCQCN's T, the rate increase timer (rpg_time_reset): 55 us (SIGCOMM'15).",
                TimeValue(MicroSeconds(55)),
                MakeTimeAccessor(&Dcqcn::m_rateTimer),
                MakeTimeChecker(PicoSeconds(1)))
            .AddAttribute("DcqcnByteCounter",
                          "DCQCN's B, bytes sent per rate increase step (rpg_byte_reset): 10 MB "
                          "(SIGCOMM'15).",
                          UintegerValue(10000000),
                          MakeUintegerAccessor(&Dcqcn::m_byteCounter),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("DcqcnF",
                          "DCQCN's F, steps of fast recovery (rpg_threshold): 5 (SIGCOMM'15).",
                          UintegerValue(5),
                          MakeUintegerAccessor(&Dcqcn::m_fastRecovery),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("DcqcnRai",
                          "DCQCN's R_AI, the additive increase in bit/s (rpg_ai_rate): 40 Mbit/s "
                          "(SIGCOMM'15).",
                          UintegerValue(40000000),
                          MakeUintegerAccessor(&Dcqcn::m_aiBps),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("DcqcnRhai",
                          "DCQCN's R_HAI, the hyper increase in bit/s (rpg_hai_rate): 200 Mbit/s "
                          "(the DCQCN authors' simulator, ns3-rdma).",
                          UintegerValue(200000000),
                          MakeUintegerAccessor(&Dcqcn::m_haiBps),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("DcqcnMinRate",
                          "DCQCN's lowest rate in bit/s (rpg_min_rate): 100 Mbit/s (ns3-rdma).",
                          UintegerValue(100000000),
                          MakeUintegerAccessor(&Dcqcn::m_minBps),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("DcqcnCnpInterval",
                          "DCQCN's N: at most one CNP per QP per N (min_time_between_cnps): 50 us "
                          "(SIGCOMM'15).",
                          TimeValue(MicroSeconds(50)),
                          MakeTimeAccessor(&Dcqcn::m_cnpInterval),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("DcqcnRateReducePeriod",
                          "DCQCN: at most one rate cut per QP per this period; a CNP within it "
                          "cuts at its end (firmware rate_reduce_monitor_period: 4 us, NVIDIA "
                          "DOCA). 0: every CNP cuts at once, the paper's reaction point.",
                          TimeValue(Time(0)),
                          MakeTimeAccessor(&Dcqcn::m_reducePeriod),
                          MakeTimeChecker(Time(0)));
    return tid;
}

Dcqcn::Dcqcn()
    : m_alphaEvent(Create<ReusableEvent<Dcqcn, &Dcqcn::AlphaTimer>>(this)),
      m_rateEvent(Create<ReusableEvent<Dcqcn, &Dcqcn::RateTimer>>(this)),
      m_cutEvent(Create<ReusableEvent<Dcqcn, &Dcqcn::HeldCut>>(this))
{
}

void
Dcqcn::DoStart()
{
    m_rt = m_lineBps;
}

void
Dcqcn::DoDispose()
{
    m_alphaEvent = nullptr;
    m_rateEvent = nullptr;
    m_cutEvent = nullptr;
    CongestionControl::DoDispose();
}

bool
Dcqcn::OnCe()
{
    const Time now = mcsim::Now();
    if (!m_lastCnp.IsNegative() && now - m_lastCnp < m_cnpInterval)
    {
        return false;
    }
    m_lastCnp = now;
    return true;
}

void
Dcqcn::OnCnp()
{
    const Time now = mcsim::Now();
    m_cnpSinceAlpha = true;
    if (!m_cutAt.IsNegative() && now < m_cutAt + m_reducePeriod)
    {
        // one cut per reduce period (firmware rate_reduce_monitor_period): this CNP's comes at its
        // end, with any other CNP's of the period
        if (!m_cutHeld)
        {
            m_cutHeld = true;
            mcsim::Post(m_cutAt + m_reducePeriod - now, m_cutEvent, *m_source);
        }
        return;
    }
    Cut(now);
}

void
Dcqcn::HeldCut()
{
    m_cutHeld = false;
    Cut(mcsim::Now());
}

void
Dcqcn::Cut(Time now)
{
    // Rt = Rc, Rc = Rc (1 - alpha / 2), alpha = (1 - g) alpha + g
    m_cutAt = now;
    m_rt = m_rateBps;
    m_rateBps =
        std::max(m_minBps,
                 static_cast<uint64_t>(static_cast<double>(m_rateBps) * (1.0 - m_alpha / 2)));
    m_alpha = (1 - m_g) * m_alpha + m_g;
    m_timeStage = 0;
    m_byteStage = 0;
    m_bytes = 0;
    // the rate timer starts again; the alpha timer runs while the rate is limited
    m_rateAt = now + m_rateTimer;
    mcsim::Post(m_rateTimer, m_rateEvent, *m_source);
    if (m_alphaAt < now)
    {
        m_alphaAt = now + m_alphaTimer;
        mcsim::Post(m_alphaTimer, m_alphaEvent, *m_source);
    }
}

void
Dcqcn::AlphaTimer()
{
    const Time now = mcsim::Now();
    if (now != m_alphaAt)
    {
        return; // stale
    }
    if (!m_cnpSinceAlpha)
    {
        m_alpha = (1 - m_g) * m_alpha;
    }
    m_cnpSinceAlpha = false;
    if (Limited())
    {
        m_alphaAt = now + m_alphaTimer;
        mcsim::Post(m_alphaTimer, m_alphaEvent, *m_source);
    }
    else
    {
        m_alphaAt = Time(-1);
    }
}

void
Dcqcn::RateTimer()
{
    const Time now = mcsim::Now();
    if (now != m_rateAt)
    {
        return; // stale: a CNP restarted it
    }
    m_timeStage++;
    Increase();
    if (Limited())
    {
        m_rateAt = now + m_rateTimer;
        mcsim::Post(m_rateTimer, m_rateEvent, *m_source);
    }
    else
    {
        m_rateAt = Time(-1);
    }
}

void
Dcqcn::OnSent(uint32_t bytes)
{
    if (!Limited())
    {
        return;
    }
    m_bytes += bytes;
    if (m_bytes >= m_byteCounter)
    {
        m_bytes -= m_byteCounter;
        m_byteStage++;
        Increase();
    }
}

void
Dcqcn::Increase()
{
    const uint32_t f = m_fastRecovery;
    const uint32_t most = std::max(m_timeStage, m_byteStage);
    const uint32_t least = std::min(m_timeStage, m_byteStage);
    if (most >= f && least >= f)
    {
        m_rt += static_cast<uint64_t>(least - f + 1) * m_haiBps; // hyper increase
    }
    else if (most >= f)
    {
        m_rt += m_aiBps; // additive increase
    }
    // fast recovery (and every step): halfway to the target
    m_rt = std::min(m_rt, m_lineBps);
    m_rateBps = std::min(m_lineBps, (m_rt + m_rateBps + 1) / 2);
}

} // namespace mcsim
} // namespace ns3
