// SPDX-License-Identifier: GPL-2.0-only
// DCQCN at a NIC (rdma.md, "DCQCN"): the notification point (a CNP for CE-marked packets, at most
// one per QP per N), the reaction points (a Dcqcn per RC QP that got a CNP) and the pacing of
// their QPs to their rates.
#include "nic.h"

#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/line-time.h"
#include "ns3/uinteger.h"

namespace ns3
{
namespace mcsim
{

NS_LOG_COMPONENT_DEFINE("McsimDcqcn");

TypeId
Nic::AddDcqcnAttributes(TypeId tid)
{
    return tid
        .AddAttribute("DcqcnG",
                      "DCQCN's g, alpha's gain (firmware dce_tcp_g): 1/256 (DCQCN, SIGCOMM'15).",
                      DoubleValue(1.0 / 256),
                      MakeDoubleAccessor(&Nic::m_dcqcnG),
                      MakeDoubleChecker<double>(0.0, 1.0))
        .AddAttribute("DcqcnAlphaTimer",
                      "DCQCN's K, alpha's update period (dce_tcp_rtt): 55 us (SIGCOMM'15).",
                      TimeValue(MicroSeconds(55)),
                      MakeTimeAccessor(&Nic::m_dcqcnAlphaTimer),
                      MakeTimeChecker(PicoSeconds(1)))
        .AddAttribute("DcqcnRateTimer",
                      "DCQCN's T, the rate increase timer (rpg_time_reset): 55 us (SIGCOMM'15).",
                      TimeValue(MicroSeconds(55)),
                      MakeTimeAccessor(&Nic::m_dcqcnRateTimer),
                      MakeTimeChecker(PicoSeconds(1)))
        .AddAttribute("DcqcnByteCounter",
                      "DCQCN's B, bytes sent per rate increase step (rpg_byte_reset): 10 MB "
                      "(SIGCOMM'15).",
                      UintegerValue(10000000),
                      MakeUintegerAccessor(&Nic::m_dcqcnByteCounter),
                      MakeUintegerChecker<uint64_t>(1))
        .AddAttribute("DcqcnF",
                      "DCQCN's F, steps of fast recovery (rpg_threshold): 5 (SIGCOMM'15).",
                      UintegerValue(5),
                      MakeUintegerAccessor(&Nic::m_dcqcnF),
                      MakeUintegerChecker<uint32_t>())
        .AddAttribute("DcqcnRai",
                      "DCQCN's R_AI, the additive increase in bit/s (rpg_ai_rate): 40 Mbit/s "
                      "(SIGCOMM'15).",
                      UintegerValue(40000000),
                      MakeUintegerAccessor(&Nic::m_dcqcnRai),
                      MakeUintegerChecker<uint64_t>())
        .AddAttribute("DcqcnRhai",
                      "DCQCN's R_HAI, the hyper increase in bit/s (rpg_hai_rate): 200 Mbit/s "
                      "(the DCQCN authors' simulator, ns3-rdma).",
                      UintegerValue(200000000),
                      MakeUintegerAccessor(&Nic::m_dcqcnRhai),
                      MakeUintegerChecker<uint64_t>())
        .AddAttribute("DcqcnMinRate",
                      "DCQCN's lowest rate in bit/s (rpg_min_rate): 100 Mbit/s (ns3-rdma).",
                      UintegerValue(100000000),
                      MakeUintegerAccessor(&Nic::m_dcqcnMinRate),
                      MakeUintegerChecker<uint64_t>(1))
        .AddAttribute("DcqcnCnpInterval",
                      "DCQCN's N: at most one CNP per QP per N (min_time_between_cnps): 50 us "
                      "(SIGCOMM'15).",
                      TimeValue(MicroSeconds(50)),
                      MakeTimeAccessor(&Nic::m_dcqcnCnpInterval),
                      MakeTimeChecker(Time(0)))
        .AddAttribute("DcqcnRateReducePeriod",
                      "DCQCN: at most one rate cut per QP per this period; a CNP within it "
                      "cuts at its end (firmware rate_reduce_monitor_period: 4 us, NVIDIA "
                      "DOCA). 0: every CNP cuts at once, the paper's reaction point.",
                      TimeValue(Time(0)),
                      MakeTimeAccessor(&Nic::m_dcqcnRateReducePeriod),
                      MakeTimeChecker(Time(0)));
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
