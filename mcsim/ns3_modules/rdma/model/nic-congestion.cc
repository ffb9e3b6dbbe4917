// SPDX-License-Identifier: GPL-2.0-only
// Congestion control at a NIC (rdma.md, "Congestion control"): a CongestionControl per QP, from
// the NIC's factory; the CNPs for CE-marked packets (its CC's OnCe: DCQCN's notification point)
// and their reaction (OnCnp), the INT of its data packets (OnAck: HPCC), and the pacing of its QPs
// to their rates.
#include "nic.h"

#include "ns3/log.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/line-time.h"

#include <stdexcept>

namespace ns3
{
namespace mcsim
{

NS_LOG_COMPONENT_DEFINE("McsimNicCongestion");

void
Nic::SetCongestionControl(const ObjectFactory& factory)
{
    if (m_host)
    {
        throw std::logic_error("Nic::SetCongestionControl: after Attach");
    }
    m_ccFactory = factory;
}

void
Nic::CheckCongestionControl()
{
    if (!m_ccFactory.IsTypeIdSet())
    {
        return;
    }
    const Ptr<CongestionControl> cc = m_ccFactory.Create<CongestionControl>();
    cc->Check();
    m_ccCnps = cc->UsesCnps();
    m_ccInt = cc->UsesInt();
    cc->Dispose();
}

void
Nic::StartCongestionControl(QueuePair* qp)
{
    if (!m_host || !m_ccFactory.IsTypeIdSet())
    {
        return;
    }
    qp->cc = m_ccFactory.Create<CongestionControl>();
    qp->cc->Start(m_host->GetPort()->GetDataRateBps(), &qp->TimerSource());
}

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
    if (!PeekPointer(qp->cc)->OnCe())
    {
        return;
    }
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
    PeekPointer(PeekPointer(m_qps[h.dstQpn])->cc)->OnCnp();
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
    CongestionControl* cc = PeekPointer(qp->cc);
    if (cc == nullptr)
    {
        return; // none: the line rate
    }
    cc->OnSent(payloadBytes);
    if (cc->Limited())
    {
        qp->nextSend = mcsim::Now() + LineTime(wireBytes, cc->GetRateBps(), 1, 1);
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

uint32_t
Nic::TakeInt(QueuePair* qp)
{
    return m_ccInt ? m_intStore->Take() : 0;
}

void
Nic::ReleaseInt(uint32_t handle)
{
    m_intStore->Release(handle);
}

void
Nic::IntAck(QueuePair* qp, uint32_t handle, uint32_t ackedEnd, uint32_t nextPsn)
{
    if (CongestionControl* cc = PeekPointer(qp->cc))
    {
        cc->OnAck(m_intStore->Get(handle), ackedEnd, nextPsn);
    }
    m_intStore->Release(handle);
}

} // namespace mcsim
} // namespace ns3
