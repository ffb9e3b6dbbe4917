// SPDX-License-Identifier: GPL-2.0-only
// HPCC's sender (rdma.md, "HPCC"): the window and rate of one RC QP from the INT its ACKs bring.
#include "hpcc.h"

#include <algorithm>

namespace ns3
{
namespace mcsim
{

namespace
{
constexpr double PS_PER_S = 1e12;
} // namespace

Hpcc::Hpcc(const HpccParams* params, uint64_t lineBps)
    : m_params(params),
      m_line(lineBps),
      m_rateBps(lineBps)
{
    const double t = static_cast<double>(params->baseRtt.GetPicoSeconds()) / PS_PER_S;
    m_wInit = static_cast<double>(lineBps) * t / 8;
    m_wAi = static_cast<double>(params->aiBps) * t / 8;
    m_wc = m_wInit;
    m_w = m_wInit;
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
    const double t = static_cast<double>(m_params->baseRtt.GetPicoSeconds());
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
    if (m_u >= m_params->eta || m_stage >= m_params->maxStage)
    {
        w = m_wc / (m_u / m_params->eta) + m_wAi; // multiplicative: toward eta
        stage = 0;
    }
    else
    {
        w = m_wc + m_wAi; // additive
        stage = m_stage + 1;
    }
    w = std::clamp(w, std::max(m_wAi, 1.0), m_wInit);
    m_w = w;
    if (commit)
    {
        m_wc = w;
        m_stage = stage;
    }
    // the pacing rate W / T, as at most the line rate
    m_rateBps = std::min<uint64_t>(m_line, static_cast<uint64_t>(w / m_wInit * m_line));
}

} // namespace mcsim
} // namespace ns3
