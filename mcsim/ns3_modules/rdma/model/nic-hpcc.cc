// SPDX-License-Identifier: GPL-2.0-only
// HPCC at a NIC (rdma.md, "HPCC"): INT handles for its RC QPs' data packets, and their senders'
// windows and rates from the records the ACKs bring back.
#include "nic.h"

#include "ns3/double.h"
#include "ns3/uinteger.h"

namespace ns3
{
namespace mcsim
{

namespace
{
/** R_AI when "HpccRai" is 0: the line rate / 2500 (the HPCC authors' simulator's runs: 10 Mbit/s
 * per 25 Gbit/s of link rate). */
constexpr uint64_t HPCC_RAI_DIVISOR = 2500;
} // namespace

TypeId
Nic::AddHpccAttributes(TypeId tid)
{
    return tid
        .AddAttribute("HpccEta",
                      "HPCC's eta, the target utilization: 0.95 (HPCC, SIGCOMM'19).",
                      DoubleValue(0.95),
                      MakeDoubleAccessor(&Nic::m_hpccEta),
                      MakeDoubleChecker<double>(0.0, 1.0))
        .AddAttribute("HpccMaxStage",
                      "HPCC's maxStage, additive increase steps before a multiplicative update: 5 "
                      "(HPCC, SIGCOMM'19).",
                      UintegerValue(5),
                      MakeUintegerAccessor(&Nic::m_hpccStages),
                      MakeUintegerChecker<uint32_t>())
        .AddAttribute("HpccRai",
                      "HPCC's additive increase W_AI as a rate in bit/s (W_AI = R_AI x T); 0: the "
                      "line rate / 2500 (the HPCC authors' simulator's runs).",
                      UintegerValue(0),
                      MakeUintegerAccessor(&Nic::m_hpccRai),
                      MakeUintegerChecker<uint64_t>())
        .AddAttribute("HpccBaseRtt",
                      "HPCC's T, the base RTT (W_init = line rate x T); 0: none (an error with "
                      "HPCC: the frontend computes it from the fabric).",
                      TimeValue(Time(0)),
                      MakeTimeAccessor(&Nic::m_hpccBaseRtt),
                      MakeTimeChecker(Time(0)));
}

uint32_t
Nic::TakeInt(QueuePair* qp)
{
    if (m_congestionControl != CongestionControl::HPCC)
    {
        return 0;
    }
    if (!qp->hpcc)
    {
        const uint64_t line = m_host->GetPort()->GetDataRateBps();
        m_hpcc = HpccParams{m_hpccEta,
                            m_hpccStages,
                            m_hpccRai != 0 ? m_hpccRai : line / HPCC_RAI_DIVISOR,
                            m_hpccBaseRtt};
        qp->hpcc = std::make_unique<Hpcc>(&m_hpcc, line);
    }
    return m_intStore->Take();
}

void
Nic::ReleaseInt(uint32_t handle)
{
    m_intStore->Release(handle);
}

void
Nic::HpccAck(QueuePair* qp, uint32_t handle, uint32_t ackedEnd, uint32_t nextPsn)
{
    if (qp->hpcc)
    {
        qp->hpcc->OnAck(m_intStore->Get(handle), ackedEnd, nextPsn);
    }
    m_intStore->Release(handle);
}

} // namespace mcsim
} // namespace ns3
