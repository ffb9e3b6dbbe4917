// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "pfc.h"
#include "port-queue.h"

#include "ns3/event-impl.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/event-order.h"
#include "ns3/mcsim/fifo.h"
#include "ns3/mcsim/invariant.h"
#include "ns3/mcsim/line-time.h"
#include "ns3/mcsim/planned-wake.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/traced-callback.h"

#include <algorithm>
#include <cstdint>
#include <queue>
#include <vector>

namespace ns3
{
namespace mcsim
{

class PfcWatchdog;

/** @brief What a PfcPort needs of the port it belongs to (Port; a test may stand in for it). */
class PfcTransmitter
{
  public:
    virtual ~PfcTransmitter() = default;
    /** Put a PFC frame that takes `tx` on the wire at the next frame boundary, after the frame in
     * transmission and before any waiting data frame: return its start. */
    virtual Time StartPfcFrame(Time tx) = 0;
    /** The pause on the port's sending changed, or a wake it asked for (PfcPort::WakeAt) runs:
     * start what waits and may (PfcPort::MayStart), and ask for a wake when the rest may. */
    virtual void PfcDrain() = 0;
};

/**
 * @brief The Priority Flow Control of one port: the ingress queue of what arrives on its link (and
 * the PFC frames it sends its peer about it), and the pause its peer puts on its sending.
 *
 * The model: fabric/doc/fabric.md, "Priority Flow Control".
 */
class PfcPort
{
  public:
    /** The "PfcTx" and "PfcRx" trace sources (the port's): node, port, pause time in quanta. */
    typedef TracedCallback<uint32_t, uint32_t, uint32_t> FrameTrace;

    /** The attributes (the port's "Pfc..."), set before Connect. */
    struct Settings
    {
        uint64_t xoffConfig = 0;           //!< "PfcXoffBytes" (0: BufferBytes less the headroom)
        uint64_t resumeOffset = 0;         //!< "PfcResumeOffsetBytes": XON is this far below XOFF
        uint64_t headroomBytes = 0;        //!< "PfcHeadroomBytes" (0: computed)
        uint32_t quanta = pfc::MAX_QUANTA; //!< "PfcPauseQuanta": the pause time of an XOFF
        uint32_t maxFrameBytes = 0;        //!< "PfcMaxFrameBytes": the largest data frame's size
    };

    /**
     * The PFC of `port`, whose output queue is `queue`; it fires the port's trace sources txTrace
     * ("PfcTx") and rxTrace ("PfcRx"). Raw pointers: the port owns all of them, and this.
     */
    PfcPort(PfcTransmitter* port, const PortQueue* queue, FrameTrace* txTrace, FrameTrace* rxTrace);
    PfcPort(const PfcPort&) = delete;
    PfcPort& operator=(const PfcPort&) = delete;

    // Setup.
    Settings& GetSettings()
    {
        return m_settings;
    }

    const Settings& GetSettings() const
    {
        return m_settings;
    }

    /** Port `port` of node `node`: its traces, and the key (node, pfc::UNIT + port) of its events.
     */
    void Place(uint32_t node, uint32_t port);
    /** The PFC of the port at the far end of the link (it sends what arrives here, and gets this
     * port's PFC frames). */
    void SetReverse(PfcPort* reverse);
    /** The fabric's deadlock detector, told when this port sends an XOFF again (null: none). */
    void SetWatchdog(PfcWatchdog* watchdog);
    /**
     * Turn PFC on, for a port with an ingress buffer of bufferBytes, a link of `delay`, headerBytes
     * on the wire per packet, a data rate of dataRateBps, and a PFC frame's wire time frameTx.
     * @throws std::invalid_argument without a reverse, or if bufferBytes do not hold the headroom
     */
    void Connect(uint64_t bufferBytes,
                 Time delay,
                 uint32_t headerBytes,
                 uint64_t dataRateBps,
                 Time frameTx);
    /** Drop the events and the reverse (the port's DoDispose). */
    void Dispose();

    /**
     * The headroom's closed form: what can still arrive once the ingress passes XOFF, when nothing
     * leaves it (two largest frames of maxFrameBytes + headerBytes, the PFC frame, a link delay of
     * bytes each way at dataRateBps, rounded up).
     */
    static uint64_t ComputedHeadroom(uint32_t maxFrameBytes,
                                     uint32_t headerBytes,
                                     Time delay,
                                     uint64_t dataRateBps);
    /** The headroom in force: "PfcHeadroomBytes", or the one computed (after Connect). */
    uint64_t GetHeadroomBytes() const;
    /** The time of a pause of `quanta` (512 bit times each at the data rate; after Connect). */
    Time QuantaTime(uint32_t quanta) const;

    // The port's sending (its hot calls).
    /** Whether a data frame of `wire` bytes may be committed now to start at `start` (a frame of
     * the lossy class: no pause holds it). */
    bool MayStart(Time start, Time now, uint32_t wire, bool lossy) const;
    /** When to look again at a frame of the class that may not start now and could from `start`:
     * then, or when the pause ends; Max while an XOFF is on its way (its arrival looks). */
    Time LookAgain(Time start, bool lossy) const;
    /** Post the transmit wake (it calls PfcTransmitter::PfcDrain) at `at` unless one runs by then
     * (none for Max). */
    void WakeAt(Time at);

    /** A data frame was committed to start at `start`. */
    void Started(Time start)
    {
        m_lastStart = start;
    }

    // The ingress (of what the reverse's port sends here).
    /** The PFC of the port at the far end (whose ingress takes what this port sends). */
    PfcPort* Reverse() const
    {
        return m_reverse;
    }

    /** A packet of `wire` bytes arrives on this port's link: whether the ingress takes it. */
    bool IngressAdmit(uint32_t wire);
    /** A packet that arrived on this port's link leaves its ingress queue at `at` (its egress
     * committed it to start then; or it was consumed or dropped: now). */
    void IngressRelease(uint32_t wire, Time at);

    // Reading.
    /** The counters; a pause still in force counts its time to now. */
    PfcCounters GetCounters() const;
    /** Paused, with lossless frames waiting, and no frame started for half a pause time (the
     * watchdog's stalled port); false while PFC is off. */
    bool Stalled(Time now) const;
    /** The node at the far end of the link (the one that pauses this port). */
    uint32_t GetPeerNode() const;
    uint64_t GetXoffBytes() const;    //!< in force (after Connect)
    uint64_t GetXonBytes() const;     //!< in force (after Connect)
    uint64_t GetIngressBytes() const; //!< arrived and not released by the last release applied
    Time GetPausedUntil() const;      //!< no lossless data frame starts before
    bool IsPausingPeer() const;       //!< an XOFF sent and no XON since

  private:
    /** Take out of the ingress queue what has left it by now; XON if it is low enough. */
    void ApplyReleases(Time now);
    /** ApplyReleases's walk: what has left by now, out (some has). */
    void TakeReleases(Time now);
    /** While the peer is paused: look again at the next release. */
    void PlanReleaseCheck();
    void ReleaseCheck();
    void Wake();
    /** Send the peer a PFC frame with this pause time (0: XON) at the next frame boundary. */
    void SendFrame(uint32_t quanta);
    /** A PFC frame from the peer will arrive at `arrival`. */
    void FrameOnItsWay(Time arrival, uint32_t quanta);
    void FrameArrives();
    void Refresh();
    /** Post the refresh event for m_nextRefresh. */
    void PostRefresh(Time now);
    /** A frame on its way arrives now: the pause it sets (or ends), counted and traced. */
    void ActOnFrame(uint32_t quanta, Time now);
    /** The ingress passed XOFF: pause the peer. */
    void SendXoff();
    /** A packet of `wire` bytes overflows the ingress: counted and dropped (false). */
    bool Overflow(uint32_t wire);

    // what a packet's way reads (a port is touched once per packet, mostly cold: these share the
    // first cache lines), then the settings and the rest
    PfcPort* m_reverse = nullptr;     //!< the PFC at the far end of the link
    const PortQueue* m_queue;         //!< the port's output queue (not owned)
    uint64_t m_ingressBytes = 0;      //!< arrived and not released by the last release applied
    uint64_t m_maxIngressBytes = 0;   //!< the most it held (counters' maxIngressBytes, kept here)
    uint64_t m_xoffBytes = 0;         //!< above it, pause the peer (set at Connect)
    uint64_t m_dropAbove = 0;         //!< xoffBytes + the headroom in force (set at Connect)
    Time m_nextRelease = Time::Max(); //!< the first pending release (Max: none): a look loads none
    Time m_pausedUntil;               //!< no data frame starts before (a pause's end)
    Time m_pendingPauseAt = Time::Max(); //!< the first XOFF on its way here
    Time m_lastStart;                    //!< when its last data frame started
    bool m_xoffSent = false;
    bool m_on = false;          //!< Connect ran (FlowControl::PFC)
    uint32_t m_headerBytes = 0; //!< the port's HeaderBytes (set at Connect)
    Time m_delay;               //!< the link's delay (set at Connect)
    uint64_t m_dataRateBps = 0; //!< the port's data rate (set at Connect)
    uint64_t m_xonBytes = 0;    //!< at or below it, resume the peer (set at Connect)
    /** packets whose egress committed them to start later: they leave the queue then; in time
     * order as they come (mostly: one egress), the others in a heap */
    Fifo<PfcRelease> m_inOrder;
    PlannedWake m_wake;         //!< the transmit wake's event
    PlannedWake m_releaseCheck; //!< the release check's event
    std::priority_queue<PfcRelease, std::vector<PfcRelease>, std::greater<PfcRelease>> m_releases;
    Settings m_settings;
    Time m_frameTx;                    //!< a PFC frame's wire time (set at Connect)
    Time m_pauseTime;                  //!< the pause time of the settings' quanta (set at Connect)
    Time m_refreshAfter;               //!< an XOFF's refresh interval: half of it (set at Connect)
    Time m_nextRefresh;                //!< when an XOFF still in force is sent again
    Time m_refreshPosted = Time(-1);   //!< when the refresh event posted last runs (-1: none)
    Time m_pausedSince = Time::Max();  //!< when the pause in force began (Max: none)
    Fifo<PfcFrame> m_incoming;         //!< PFC frames on their way here, by arrival
    PfcWatchdog* m_watchdog = nullptr; //!< told when an XOFF is sent again (the fabric's)
    PfcCounters m_counters;            //!< but maxIngressBytes (above)
    PfcTransmitter* m_port;            //!< the port this belongs to (not owned)
    FrameTrace* m_txTrace;             //!< the port's "PfcTx"
    FrameTrace* m_rxTrace;             //!< the port's "PfcRx"
    uint32_t m_node = 0;               //!< Place's (traces)
    uint32_t m_index = 0;              //!< Place's (traces)
    Ptr<EventImpl> m_wakeEvent;        //!< a waiting data frame may start
    Ptr<EventImpl> m_frameEvent;       //!< a PFC frame arrives here
    Ptr<EventImpl> m_refreshEvent;     //!< an XOFF in force is sent again
    Ptr<EventImpl> m_releaseEvent; //!< a packet leaves the ingress queue while the peer is paused
    /** (TRANSMIT, node, pfc::UNIT + port): the transmit wakes and the release checks, one source
     * (their same-time order is its post order: engine.md, "Canonical order") */
    EventSource m_wakeSource;
    EventSource m_frameSource;   //!< (ARRIVAL, node, pfc::UNIT + port)
    EventSource m_refreshSource; //!< (TIMER, node, pfc::UNIT + port)
};

inline bool
PfcPort::MayStart(Time start, Time now, uint32_t wire, bool lossy) const
{
    if (!lossy && (start < m_pausedUntil || start >= m_pendingPauseAt))
    {
        return false; // paused then, or an XOFF arrives first
    }
    if (start <= now)
    {
        return true;
    }
    // committed ahead (fabric.md, "Priority Flow Control"): no PFC frame of this port may fall due
    // before the frame starts (it would wait behind it), nor may one of its peer's arrive first
    if (m_xoffSent)
    {
        return false; // its XON may fall due at any release
    }
    const PfcPort* peer = m_reverse;
    // what can arrive here by `start`: the peer's frames on the wire, and what it starts a delay
    // before (at most its data rate, in whole frames); in time steps, which are ps (no Time
    // temporaries on this path)
    uint64_t arrivals = m_ingressBytes + peer->m_queue->InFlightBytes();
    const int64_t ahead = start.GetTimeStep() - now.GetTimeStep() - m_delay.GetTimeStep();
    if (ahead > 0)
    {
        arrivals += m_settings.maxFrameBytes + m_headerBytes;
        if (arrivals > m_xoffBytes ||
            LineBytesExceed(static_cast<uint64_t>(ahead), m_dataRateBps, m_xoffBytes - arrivals))
        {
            return false;
        }
    }
    else if (arrivals > m_xoffBytes)
    {
        return false;
    }
    // the peer pauses this port only once what this port sent passes its XOFF: a pause it has not
    // sent yet arrives a delay later at the earliest (no pause holds the lossy class)
    return lossy || ahead <= 0 ||
           peer->m_ingressBytes + m_queue->InFlightBytes() + wire <= peer->m_xoffBytes;
}

inline Time
PfcPort::LookAgain(Time start, bool lossy) const
{
    // when it could start (or when the pause ends); an XOFF on its way here looks again when it
    // arrives
    if (lossy)
    {
        return start;
    }
    const Time at = std::max(start, m_pausedUntil);
    return at < m_pendingPauseAt ? at : Time::Max();
}

inline void
PfcPort::WakeAt(Time at)
{
    if (at == Time::Max())
    {
        return;
    }
    const Time now = mcsim::Now();
    if (m_wake.Ask(at, now))
    {
        mcsim::Post(at - now, m_wakeEvent, m_wakeSource);
    }
}

inline bool
PfcPort::IngressAdmit(uint32_t wire)
{
    ApplyReleases(mcsim::Now());
    if (m_ingressBytes + wire > m_dropAbove)
    {
        return Overflow(wire);
    }
    m_ingressBytes += wire;
    m_maxIngressBytes = std::max(m_maxIngressBytes, m_ingressBytes);
    if (m_ingressBytes > m_xoffBytes && !m_xoffSent)
    {
        SendXoff();
    }
    return true;
}

inline void
PfcPort::IngressRelease(uint32_t wire, Time at)
{
    const Time now = mcsim::Now();
    if (at > now)
    {
        if (m_inOrder.empty() || m_inOrder.back().at <= at)
        {
            m_inOrder.push_back({at, wire});
        }
        else
        {
            m_releases.push({at, wire});
        }
        m_nextRelease = std::min(m_nextRelease, at);
        if (m_xoffSent)
        {
            PlanReleaseCheck();
        }
        return;
    }
    MCSIM_ASSERT(m_ingressBytes >= wire, "Port: PFC ingress released more than it holds");
    m_ingressBytes -= wire;
    ApplyReleases(now);
}

inline void
PfcPort::ApplyReleases(Time now)
{
    if (now >= m_nextRelease)
    {
        TakeReleases(now);
    }
    if (m_xoffSent && m_ingressBytes <= m_xonBytes)
    {
        m_xoffSent = false;
        SendFrame(0);
    }
}

} // namespace mcsim
} // namespace ns3
