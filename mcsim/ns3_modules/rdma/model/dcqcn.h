// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/event-impl.h"
#include "ns3/mcsim/event-order.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * DCQCN's parameters (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM
 * 2015; rdma.md, "DCQCN"), each the NIC's attribute named as the paper names it, with NVIDIA's
 * firmware name in its help.
 */
struct DcqcnParams
{
    double g = 1.0 / 256;            //!< "DcqcnG": alpha's gain (dce_tcp_g)
    Time alphaTimer;                 //!< "DcqcnAlphaTimer": K (dce_tcp_rtt)
    Time rateTimer;                  //!< "DcqcnRateTimer": T (rpg_time_reset)
    uint64_t byteCounter = 10000000; //!< "DcqcnByteCounter": B, bytes (rpg_byte_reset)
    uint32_t fastRecovery = 5;       //!< "DcqcnF": F, steps of fast recovery (rpg_threshold)
    uint64_t aiBps = 40000000;       //!< "DcqcnRai": R_AI (rpg_ai_rate)
    uint64_t haiBps = 200000000;     //!< "DcqcnRhai": R_HAI (rpg_hai_rate)
    uint64_t minBps = 100000000;     //!< "DcqcnMinRate": the lowest rate (rpg_min_rate)
    Time cnpInterval;                //!< "DcqcnCnpInterval": N, at most one CNP per QP per N
    Time reducePeriod; //!< "DcqcnRateReducePeriod": one cut per period (0: one per CNP)
};

/**
 * @brief DCQCN's reaction point for one QP: its current rate Rc (the NIC paces the QP to it), its
 * target rate Rt and alpha; a CNP cuts the rate (at most once per reduce period: one within it
 * cuts at its end), the alpha timer decays alpha, the rate timer and the byte counter raise the
 * rate back (fast recovery, then additive, then hyper increase). At the line rate it is idle: no
 * timer runs.
 */
class Dcqcn
{
  public:
    /** @param source the QP's timer source (its events' order) */
    Dcqcn(const DcqcnParams* params, uint64_t lineBps, EventSource* source);

    bool Limited() const
    {
        return m_rc < m_line;
    }

    uint64_t GetRateBps() const
    {
        return m_rc;
    }

    void OnCnp();                //!< a CNP for the QP arrived
    void OnSent(uint32_t bytes); //!< the QP sent this many payload bytes
    void Dispose();              //!< drop its events (the QP goes)

  private:
    /** Rt = Rc, Rc = Rc (1 - alpha / 2), alpha up; the increase starts over. */
    void Cut(Time now);
    /** The end of a reduce period in which a CNP came after the cut. */
    void HeldCut();
    void AlphaTimer();
    void RateTimer();
    /** One step of increase: timer or byte counter stage grew. */
    void Increase();

    const DcqcnParams* m_params;
    uint64_t m_line;
    uint64_t m_rc;        //!< current rate
    uint64_t m_rt;        //!< target rate
    double m_alpha = 1.0; //!< the paper's alpha (1 at the first CNP)
    bool m_cnpSinceAlpha = false;
    uint32_t m_timeStage = 0;
    uint32_t m_byteStage = 0;
    uint64_t m_bytes = 0;      //!< bytes sent since the byte counter's last step
    Time m_alphaAt = Time(-1); //!< when the alpha timer in force runs (-1: none)
    Time m_rateAt = Time(-1);  //!< when the rate timer in force runs (-1: none)
    Time m_cutAt = Time(-1);   //!< the last cut (-1: none)
    bool m_cutHeld = false;    //!< a CNP came within the reduce period: the cut at its end
    Ptr<EventImpl> m_alphaEvent;
    Ptr<EventImpl> m_rateEvent;
    Ptr<EventImpl> m_cutEvent; //!< HeldCut
    EventSource* m_source;
};

} // namespace mcsim
} // namespace ns3
