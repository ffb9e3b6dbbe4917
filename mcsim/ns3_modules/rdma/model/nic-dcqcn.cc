// SPDX-License-Identifier: GPL-2.0-only
// DCQCN at a NIC (rdma.md, "DCQCN"): the notification point (a CNP for CE-marked packets, at most
// one per QP per N), the reaction points (a Dcqcn per RC QP that got a CNP) and the pacing of
// their QPs to their rates.
#include "nic.h"

#include "ns3/log.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/line-time.h"

namespace ns3
{
namespace mcsim
{

NS_LOG_COMPONENT_DEFINE("McsimDcqcn");

const CcCounters&
Nic::GetCcCounters() const
{
    return m_ccCounters;
}

void
Nic::NotifyCongestion(uint32_t qpn, const TransportHeader& h)
{
    QueuePair* qp = PeekPointer(m_qps[qpn]);
    uint32_t host = 0;
    uint32_t peerQpn = 0;
    if (!qp->GetPeer(host, peerQpn))
    {
        return; // a datagram: no reaction point to tell
    }
    m_ccCounters.ceRx++;
    const Time now = mcsim::Now();
    if (!qp->lastCnp.IsNegative() && now - qp->lastCnp < m_dcqcnCnpInterval)
    {
        return;
    }
    qp->lastCnp = now;
    m_cnps.push_back({h.srcHost, peerQpn, h.flow});
    if (m_idle)
    {
        m_idle = false;
        mcsim::Post(Time(0), m_sendEvent, m_sendSource);
    }
}

void
Nic::ReactToCnp(const TransportHeader& h)
{
    m_ccCounters.cnpRx++;
    if (h.dstQpn >= m_qps.size())
    {
        return;
    }
    QueuePair* qp = PeekPointer(m_qps[h.dstQpn]);
    if (!qp->cc)
    {
        m_dcqcn = DcqcnParams{m_dcqcnG,
                              m_dcqcnAlphaTimer,
                              m_dcqcnRateTimer,
                              m_dcqcnByteCounter,
                              m_dcqcnF,
                              m_dcqcnRai,
                              m_dcqcnRhai,
                              m_dcqcnMinRate,
                              m_dcqcnCnpInterval,
                              m_dcqcnRateReducePeriod};
        qp->cc = std::make_unique<Dcqcn>(&m_dcqcn,
                                         m_host->GetPort()->GetDataRateBps(),
                                         &qp->TimerSource());
    }
    qp->cc->OnCnp();
}

bool
Nic::SendCnp()
{
    if (m_cnps.empty())
    {
        return false;
    }
    const auto [host, qpn, flow] = m_cnps.front();
    m_cnps.pop_front();
    TransportHeader h;
    h.dst = host;
    h.flow = flow;
    h.opcode = Opcode::CNP;
    h.dstQpn = static_cast<uint16_t>(qpn);
    const OutgoingPacket out = MakePacket(h, 0);
    m_counters.txPackets++;
    m_ccCounters.cnpTx++;
    const Time departure = m_host->Send(out.packet, out.fields, this);
    if (!departure.IsNegative())
    {
        Wake(departure);
    }
    return true;
}

void
Nic::Pace(QueuePair* qp, uint32_t wireBytes, uint32_t payloadBytes)
{
    if (qp->hpcc && qp->hpcc->Limited())
    {
        qp->nextSend = mcsim::Now() + LineTime(wireBytes, qp->hpcc->GetRateBps(), 1, 1);
        return;
    }
    if (!qp->cc)
    {
        return;
    }
    qp->cc->OnSent(payloadBytes);
    if (qp->cc->Limited())
    {
        qp->nextSend = mcsim::Now() + LineTime(wireBytes, qp->cc->GetRateBps(), 1, 1);
    }
}

void
Nic::PacedWakeAt(Time at)
{
    const Time now = mcsim::Now();
    if (m_pacedWake.Ask(at, now))
    {
        mcsim::Post(at - now, m_pacedEvent, m_sendSource);
    }
}

void
Nic::PacedWake()
{
    m_pacedWake.Ran(mcsim::Now());
    if (m_idle) // else the picks going on will come to the paced QPs
    {
        m_idle = false;
        TrySend();
    }
}

} // namespace mcsim
} // namespace ns3
