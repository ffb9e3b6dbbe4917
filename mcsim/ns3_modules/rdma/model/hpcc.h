// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/mcsim/int-store.h"
#include "ns3/nstime.h"

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * HPCC's parameters (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019; rdma.md,
 * "HPCC"), each the NIC's attribute named as the paper names it.
 */
struct HpccParams
{
    double eta = 0.95;     //!< "HpccEta": the target utilization
    uint32_t maxStage = 5; //!< "HpccMaxStage": additive steps before a multiplicative update
    uint64_t aiBps = 0;    //!< "HpccRai": W_AI as a rate (W_AI = R_AI x T)
    Time baseRtt;          //!< "HpccBaseRtt": T
};

/**
 * @brief HPCC's sender for one RC QP: a window W (bytes in flight) and its pacing rate W / T, set
 * from the INT records its ACKs bring back (the paper's Algorithm 1): per ACK the most utilized
 * hop's u = min(qlen, qlen') / (B T) + txRate / B, an EWMA U over its interval, then W = Wc /
 * (U / eta) + W_AI once U reaches eta or maxStage additive steps have passed, else W = Wc + W_AI;
 * Wc and the stage commit once per RTT (an ACK past the sequence sent at the last commit). No
 * timers: it changes only when an ACK comes.
 */
class Hpcc
{
  public:
    Hpcc(const HpccParams* params, uint64_t lineBps);

    bool Limited() const
    {
        return m_rateBps < m_line;
    }

    uint64_t GetRateBps() const
    {
        return m_rateBps;
    }

    /** Bytes the QP may have in flight: W. */
    uint64_t GetWindowBytes() const
    {
        return static_cast<uint64_t>(m_w);
    }

    /**
     * An ACK acknowledged every PSN below ackedEnd and brought these records back; nextPsn: one
     * past the highest PSN sent (snd_nxt).
     */
    void OnAck(const IntStore::Stack& s, uint32_t ackedEnd, uint32_t nextPsn);

    double GetU() const
    {
        return m_u;
    }

  private:
    /** The EWMA U with the records s (false: no hop has a new record). */
    bool MeasureInflight(const IntStore::Stack& s);
    /** The window from U; commit Wc and the stage if `commit`. */
    void ComputeWind(bool commit);

    const HpccParams* m_params;
    uint64_t m_line;
    double m_wInit; //!< line rate x T, bytes
    double m_wAi;   //!< R_AI x T, bytes
    double m_wc;    //!< the committed window
    double m_w;     //!< the window in force
    uint64_t m_rateBps;
    double m_u = 1.0; //!< the EWMA of the most utilized hop's u
    uint32_t m_stage = 0;
    uint32_t m_lastUpdateSeq = 0;
    bool m_haveRecords = false;
    IntStore::Stack m_last; //!< the records the last ACK brought
};

} // namespace mcsim
} // namespace ns3
