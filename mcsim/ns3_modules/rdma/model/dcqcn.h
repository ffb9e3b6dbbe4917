// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "congestion-control.h"

#include "ns3/event-impl.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * @brief DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015;
 * rdma.md, "DCQCN") for one QP: the notification point's CNP interval on the receiver's side, and
 * the reaction point on the sender's: its current rate Rc (the NIC paces the QP to it), its target
 * rate Rt and alpha; a CNP cuts the rate (at most once per reduce period: one within it cuts at
 * its end), the alpha timer decays alpha, the rate timer and the byte counter raise the rate back
 * (fast recovery, then additive, then hyper increase). At the line rate it is idle: no timer runs.
 *
 * Its parameters are its attributes, named as the paper names them, with NVIDIA's firmware name
 * in their help.
 */
class Dcqcn : public CongestionControl
{
  public:
    static TypeId GetTypeId();
    Dcqcn();

    bool UsesCnps() const override
    {
        return true;
    }

    bool OnCe() override;                 //!< at most one CNP per N
    void OnCnp() override;                //!< a CNP for the QP arrived
    void OnSent(uint32_t bytes) override; //!< the QP sent this many payload bytes

  protected:
    void DoDispose() override; //!< drop its events (the QP goes)

  private:
    /** Rt = Rc, Rc = Rc (1 - alpha / 2), alpha up; the increase starts over. */
    void Cut(Time now);
    /** The end of a reduce period in which a CNP came after the cut. */
    void HeldCut();
    void AlphaTimer();
    void RateTimer();
    /** One step of increase: timer or byte counter stage grew. */
    void Increase();

    void DoStart() override;

    double m_g;              //!< "DcqcnG": alpha's gain (dce_tcp_g)
    Time m_alphaTimer;       //!< "DcqcnAlphaTimer": K (dce_tcp_rtt)
    Time m_rateTimer;        //!< "DcqcnRateTimer": T (rpg_time_reset)
    uint64_t m_byteCounter;  //!< "DcqcnByteCounter": B, bytes (rpg_byte_reset)
    uint32_t m_fastRecovery; //!< "DcqcnF": F, steps of fast recovery (rpg_threshold)
    uint64_t m_aiBps;        //!< "DcqcnRai": R_AI (rpg_ai_rate)
    uint64_t m_haiBps;       //!< "DcqcnRhai": R_HAI (rpg_hai_rate)
    uint64_t m_minBps;       //!< "DcqcnMinRate": the lowest rate (rpg_min_rate)
    Time m_cnpInterval;      //!< "DcqcnCnpInterval": N, at most one CNP per QP per N
    Time m_reducePeriod;     //!< "DcqcnRateReducePeriod": one cut per period (0: one per CNP)

    // the rate in force Rc is CongestionControl::m_rateBps
    uint64_t m_rt = 0;    //!< target rate
    double m_alpha = 1.0; //!< the paper's alpha (1 at the first CNP)
    bool m_cnpSinceAlpha = false;
    uint32_t m_timeStage = 0;
    uint32_t m_byteStage = 0;
    uint64_t m_bytes = 0;      //!< bytes sent since the byte counter's last step
    Time m_alphaAt = Time(-1); //!< when the alpha timer in force runs (-1: none)
    Time m_rateAt = Time(-1);  //!< when the rate timer in force runs (-1: none)
    Time m_cutAt = Time(-1);   //!< the last cut (-1: none)
    bool m_cutHeld = false;    //!< a CNP came within the reduce period: the cut at its end
    Time m_lastCnp = Time(-1); //!< the receiver's side: the last CNP sent about its traffic
    Ptr<EventImpl> m_alphaEvent;
    Ptr<EventImpl> m_rateEvent;
    Ptr<EventImpl> m_cutEvent; //!< HeldCut
};

} // namespace mcsim
} // namespace ns3
