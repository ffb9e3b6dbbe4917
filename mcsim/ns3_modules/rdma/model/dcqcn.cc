// SPDX-License-Identifier: GPL-2.0-only
#include "dcqcn.h"

#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/reusable-event.h"

#include <algorithm>

namespace ns3
{
namespace mcsim
{

Dcqcn::Dcqcn(const DcqcnParams* params, uint64_t lineBps, EventSource* source)
    : m_params(params),
      m_line(lineBps),
      m_rc(lineBps),
      m_rt(lineBps),
      m_alphaEvent(Create<ReusableEvent<Dcqcn, &Dcqcn::AlphaTimer>>(this)),
      m_rateEvent(Create<ReusableEvent<Dcqcn, &Dcqcn::RateTimer>>(this)),
      m_cutEvent(Create<ReusableEvent<Dcqcn, &Dcqcn::HeldCut>>(this)),
      m_source(source)
{
}

void
Dcqcn::Dispose()
{
    m_alphaEvent = nullptr;
    m_rateEvent = nullptr;
    m_cutEvent = nullptr;
}

void
Dcqcn::OnCnp()
{
    const Time now = mcsim::Now();
    m_cnpSinceAlpha = true;
    if (!m_cutAt.IsNegative() && now < m_cutAt + m_params->reducePeriod)
    {
        // one cut per reduce period (firmware rate_reduce_monitor_period): this CNP's comes at its
        // end, with any other CNP's of the period
        if (!m_cutHeld)
        {
            m_cutHeld = true;
            mcsim::Post(m_cutAt + m_params->reducePeriod - now, m_cutEvent, *m_source);
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
    m_rt = m_rc;
    m_rc = std::max(m_params->minBps,
                    static_cast<uint64_t>(static_cast<double>(m_rc) * (1.0 - m_alpha / 2)));
    m_alpha = (1 - m_params->g) * m_alpha + m_params->g;
    m_timeStage = 0;
    m_byteStage = 0;
    m_bytes = 0;
    // the rate timer starts again; the alpha timer runs while the rate is limited
    m_rateAt = now + m_params->rateTimer;
    mcsim::Post(m_params->rateTimer, m_rateEvent, *m_source);
    if (m_alphaAt < now)
    {
        m_alphaAt = now + m_params->alphaTimer;
        mcsim::Post(m_params->alphaTimer, m_alphaEvent, *m_source);
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
        m_alpha = (1 - m_params->g) * m_alpha;
    }
    m_cnpSinceAlpha = false;
    if (Limited())
    {
        m_alphaAt = now + m_params->alphaTimer;
        mcsim::Post(m_params->alphaTimer, m_alphaEvent, *m_source);
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
        m_rateAt = now + m_params->rateTimer;
        mcsim::Post(m_params->rateTimer, m_rateEvent, *m_source);
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
    if (m_bytes >= m_params->byteCounter)
    {
        m_bytes -= m_params->byteCounter;
        m_byteStage++;
        Increase();
    }
}

void
Dcqcn::Increase()
{
    const uint32_t f = m_params->fastRecovery;
    const uint32_t most = std::max(m_timeStage, m_byteStage);
    const uint32_t least = std::min(m_timeStage, m_byteStage);
    if (most >= f && least >= f)
    {
        m_rt += static_cast<uint64_t>(least - f + 1) * m_params->haiBps; // hyper increase
    }
    else if (most >= f)
    {
        m_rt += m_params->aiBps; // additive increase
    }
    // fast recovery (and every step): halfway to the target
    m_rt = std::min(m_rt, m_line);
    m_rc = std::min(m_line, (m_rt + m_rc + 1) / 2);
}

} // namespace mcsim
} // namespace ns3
