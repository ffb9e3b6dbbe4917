// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/mcsim/counter-table.h"

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * ECN marking defaults (fabric.md, "ECN"): RED on a switch port's output queue as DCQCN (Zhu et
 * al., SIGCOMM 2015, section 5.3) configures it at 40 Gbit/s, Kmin 5 KB, Kmax 200 KB and Pmax 1 %,
 * the thresholds scaled with the port's data rate (as simulators of DCQCN fabrics scale them;
 * switches' own defaults are absolute, e.g. NVIDIA's 150 KB and 1500 KB).
 */
namespace ecn
{
constexpr uint64_t KMIN_BYTES_AT_REFERENCE = 5000;
constexpr uint64_t KMAX_BYTES_AT_REFERENCE = 200000;
constexpr uint64_t REFERENCE_BPS = 40000000000ULL; //!< the rate the thresholds above are for
constexpr double DEFAULT_PMAX = 0.01;
} // namespace ecn

/** The fields of EcnCounters, in order: X(member, initial, python_name). */
#define MCSIM_ECN_COUNTERS(X)                                                                      \
    /* ECN-capable packets this port's output queue took (those it may mark) */                    \
    X(ectPackets, 0, "ect_packets")                                                                \
    /* packets it marked CE (congestion experienced) */                                            \
    X(ceMarked, 0, "ce_marked")                                                                    \
    /* packets a host's port made ECN-capable (ECT(0)) */                                          \
    X(ectStamped, 0, "ect_stamped")

/** @brief ECN counters of one port, read in bulk after the run. */
struct EcnCounters
{
    MCSIM_COUNTERS(MCSIM_ECN_COUNTERS)
};

/** @brief The ECN settings and state of one port. */
struct EcnState
{
    bool mark = false;               //!< RED marking on its output queue (a switch's port)
    bool stamp = false;              //!< it makes the packets it sends ECN-capable (a host's port)
    uint64_t kminConfig = 0;         //!< "EcnKminBytes" (0: scaled from the data rate)
    uint64_t kmaxConfig = 0;         //!< "EcnKmaxBytes" (0: scaled from the data rate)
    double pmax = ecn::DEFAULT_PMAX; //!< "EcnPmax"
    uint64_t kmin = 0;               //!< in force (Connect)
    uint64_t kmax = 0;               //!< in force (Connect)
    uint64_t seed = 0;               //!< its draws' key (the fabric's seed and its place)
    uint64_t draws = 0;              //!< draws so far
    EcnCounters counters;
};

} // namespace mcsim
} // namespace ns3
