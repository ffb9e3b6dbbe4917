// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/mcsim/counter-table.h"
#include "ns3/mcsim/event-order.h"
#include "ns3/mcsim/fifo.h"
#include "ns3/mcsim/planned-wake.h"
#include "ns3/nstime.h"

#include <cstdint>
#include <limits>
#include <queue>
#include <vector>

namespace ns3
{
namespace mcsim
{

class Port;
class PfcWatchdog;

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

/**
 * @brief The PFC state of one port (FlowControl::PFC): the ingress queue of what arrives on its
 * link (and the frames it sends its peer about it), and the pause its peer put on its sending.
 */
struct PfcState
{
    // what a packet's way reads (a port is touched once per packet, mostly cold: these share the
    // first cache lines), then the settings and the rest
    Port* reverse = nullptr;   //!< the port at the far end of the link (it sends what arrives here)
    uint64_t ingressBytes = 0; //!< arrived and not released by the last release applied
    uint64_t maxIngressBytes = 0;      //!< the most it held (counters.maxIngressBytes, kept here)
    uint64_t xoffBytes = 0;            //!< above it, pause the peer (set at Connect)
    uint64_t dropAbove = 0;            //!< xoffBytes + the headroom in force (set at Connect)
    Time nextRelease = Time::Max();    //!< the first pending release (Max: none): a look loads none
    Time pausedUntil;                  //!< no data frame starts before (a pause's end)
    Time pendingPauseAt = Time::Max(); //!< the first XOFF on its way here
    Time lastStart;                    //!< when its last data frame started
    bool xoffSent = false;
    uint32_t maxFrameBytes = 0; //!< "PfcMaxFrameBytes": the largest data frame's size
    uint64_t dataRateBps = 0;   //!< the port's GetDataRateBps() (set at Connect)
    uint64_t xonBytes = 0;      //!< at or below it, resume the peer (set at Connect)
    /** packets whose egress committed them to start later: they leave the queue then; in time
     * order as they come (mostly: one egress), the others in a heap */
    Fifo<PfcRelease> inOrder;
    PlannedWake wake;         //!< the transmit wake's event
    PlannedWake releaseCheck; //!< the release check's event
    std::priority_queue<PfcRelease, std::vector<PfcRelease>, std::greater<PfcRelease>> releases;
    // the settings
    uint64_t xoffConfig = 0;           //!< "PfcXoffBytes" (0: BufferBytes less the headroom)
    uint64_t resumeOffset = 0;         //!< "PfcResumeOffsetBytes": XON is this far below XOFF
    uint64_t headroomBytes = 0;        //!< "PfcHeadroomBytes" (0: computed)
    uint32_t quanta = pfc::MAX_QUANTA; //!< "PfcPauseQuanta": the pause time of an XOFF
    Time frameTx;                      //!< a PFC frame's wire time (set at Connect)
    Time pauseTime;                    //!< the pause time of `quanta` (set at Connect)
    Time refreshAfter;                 //!< an XOFF's refresh interval: half of it (set at Connect)
    Time nextRefresh;                  //!< when an XOFF still in force is sent again
    Time refreshPosted = Time(-1);     //!< when the refresh event posted last runs (-1: none)
    Time pausedSince = Time::Max();    //!< when the pause in force began (Max: none)
    Fifo<PfcFrame> incoming;           //!< PFC frames on their way here, by arrival
    PfcWatchdog* watchdog = nullptr;   //!< told when an XOFF is sent again (the fabric's)
    PfcCounters counters;              //!< but maxIngressBytes (above)
};

} // namespace mcsim
} // namespace ns3
