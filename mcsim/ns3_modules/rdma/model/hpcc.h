// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "congestion-control.h"

#include "ns3/mcsim/int-store.h"
#include "ns3/nstime.h"

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * @brief HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019; rdma.md,
 * "HPCC") for one RC QP's sender: a window W (bytes in flight) and its pacing rate W / T, set
 * from the INT records its ACKs bring back (the paper's Algorithm 1): per ACK the most utilized
 * hop's u = min(qlen, qlen') / (B T) + txRate / B, an EWMA U over its interval, then W = Wc /
 * (U / eta) + W_AI once U reaches eta or maxStage additive steps have passed, else W = Wc + W_AI;
 * Wc and the stage commit once per RTT (an ACK past the sequence sent at the last commit). No
 * timers: it changes only when an ACK comes. Its parameters are its attributes, named as the
 * paper names them.
 */
class Hpcc : public CongestionControl
{
  public:
    static TypeId GetTypeId();

    /** @throws std::invalid_argument without a base RTT (HpccBaseRtt 0) */
    void Check() const override;

    bool UsesInt() const override
    {
        return true;
    }

    void OnAck(const IntStore::Stack& s, uint32_t ackedEnd, uint32_t nextPsn) override;

    double GetU() const
    {
        return m_u;
    }

  private:
    void DoStart() override;
    /** The EWMA U with the records s (false: no hop has a new record). */
    bool MeasureInflight(const IntStore::Stack& s);
    /** The window from U; commit Wc and the stage if `commit`. */
    void ComputeWind(bool commit);

    double m_eta;        //!< "HpccEta": the target utilization
    uint32_t m_maxStage; //!< "HpccMaxStage": additive steps before a multiplicative update
    uint64_t m_rai;      //!< "HpccRai": W_AI as a rate (W_AI = R_AI x T; 0: the line rate / 2500)
    Time m_baseRtt;      //!< "HpccBaseRtt": T

    double m_wInit = 0; //!< line rate x T, bytes
    double m_wAi = 0;   //!< R_AI x T, bytes
    double m_wc = 0;    //!< the committed window
    double m_w = 0;     //!< the window in force (CongestionControl::m_windowBytes: its bytes)
    double m_u = 1.0;   //!< the EWMA of the most utilized hop's u
    uint32_t m_stage = 0;
    uint32_t m_lastUpdateSeq = 0;
    bool m_haveRecords = false;
    IntStore::Stack m_last; //!< the records the last ACK brought
};

} // namespace mcsim
} // namespace ns3
