// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/mcsim/counter-table.h"
#include "ns3/nstime.h"

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * Priority Flow Control (IEEE 802.1Qbb) constants. A PFC frame is a MAC control frame of 64 bytes
 * (opcode 0x0101, a class-enable vector and 8 pause times, padded); a pause time counts quanta of
 * 512 bit times at the port's data rate; a time of 0 resumes at once (XON).
 */
namespace pfc
{
constexpr uint32_t FRAME_BYTES = 64;    //!< the PFC frame, destination address to FCS
constexpr uint32_t QUANTUM_BITS = 512;  //!< one pause quantum, in bit times
constexpr uint32_t MAX_QUANTA = 0xFFFF; //!< the largest pause time a frame carries
constexpr uint32_t UNIT = 0x8000;       //!< + the port's number: a port's PFC events' unit
} // namespace pfc

/** The fields of PfcCounters, in order: X(member, initial, python_name). */
#define MCSIM_PFC_COUNTERS(X)                                                                      \
    /* PFC frames this port sent that pause its peer (XOFF, and their refreshes) */                \
    X(pauseTx, 0, "pause_tx")                                                                      \
    /* PFC frames this port sent that resume its peer (XON: pause time 0) */                       \
    X(resumeTx, 0, "resume_tx")                                                                    \
    /* PFC frames that arrived at this port and paused it */                                       \
    X(pauseRx, 0, "pause_rx")                                                                      \
    /* PFC frames that arrived at this port and resumed it */                                      \
    X(resumeRx, 0, "resume_rx")                                                                    \
    /* time this port was paused, in ps (to the end of the run for a pause still on) */            \
    X(pausedPs, 0, "paused_ps")                                                                    \
    /* wire time of the PFC frames this port sent, in ps */                                        \
    X(frameBusyPs, 0, "pfc_busy_ps")                                                               \
    /* packets that arrived at this port over its ingress buffer (PfcXoffBytes + headroom) */      \
    X(ingressDrops, 0, "ingress_drops")                                                            \
    /* most bytes its ingress queue held */                                                        \
    X(maxIngressBytes, 0, "max_ingress_bytes")

/** @brief PFC counters of one port, read in bulk after the run. */
struct PfcCounters
{
    MCSIM_COUNTERS(MCSIM_PFC_COUNTERS)
};

/** A PFC frame on its way to a port: when its last bit arrives, and its pause time. */
struct PfcFrame
{
    Time arrival;
    uint32_t quanta; //!< 0: resume
};

/** A packet that leaves an ingress queue at a later time (its egress committed it ahead). */
struct PfcRelease
{
    Time at;
    uint32_t wire;

    bool operator>(const PfcRelease& other) const
    {
        return at > other.at;
    }
};

} // namespace mcsim
} // namespace ns3
