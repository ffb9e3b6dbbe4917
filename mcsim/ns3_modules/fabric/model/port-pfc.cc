// SPDX-License-Identifier: GPL-2.0-only
// Priority Flow Control of a Port (FlowControl::PFC): fabric/doc/fabric.md, "Priority Flow
// Control".
#include "pfc-watchdog.h"
#include "port.h"

#include "ns3/log.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/line-time.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{
namespace mcsim
{

NS_LOG_COMPONENT_DEFINE("McsimPfc");

TypeId
Port::AddPfcAttributes(TypeId tid)
{
    return tid
        .AddAttribute("PfcXoffBytes",
                      "PFC: bytes in this port's ingress queue above which it pauses its peer "
                      "(0: BufferBytes less the headroom).",
                      UintegerValue(0),
                      MakeUintegerAccessor(&Port::SetPfc<uint64_t, &PfcState::xoffConfig>,
                                           &Port::GetPfc<uint64_t, &PfcState::xoffConfig>),
                      MakeUintegerChecker<uint64_t>())
        .AddAttribute("PfcResumeOffsetBytes",
                      "PFC: the ingress resumes its peer once it holds this many bytes less "
                      "than PfcXoffBytes (XON).",
                      UintegerValue(DEFAULT_PFC_RESUME_OFFSET_BYTES),
                      MakeUintegerAccessor(&Port::SetPfc<uint64_t, &PfcState::resumeOffset>,
                                           &Port::GetPfc<uint64_t, &PfcState::resumeOffset>),
                      MakeUintegerChecker<uint64_t>())
        .AddAttribute("PfcHeadroomBytes",
                      "PFC: ingress bytes beyond PfcXoffBytes it takes (0: computed from the "
                      "link's delay and rate and PfcMaxFrameBytes); past them it drops.",
                      UintegerValue(0),
                      MakeUintegerAccessor(&Port::SetPfc<uint64_t, &PfcState::headroomBytes>,
                                           &Port::GetPfc<uint64_t, &PfcState::headroomBytes>),
                      MakeUintegerChecker<uint64_t>())
        .AddAttribute("PfcPauseQuanta",
                      "PFC: the pause time of an XOFF, in quanta of 512 bit times.",
                      UintegerValue(pfc::MAX_QUANTA),
                      MakeUintegerAccessor(&Port::SetPfc<uint32_t, &PfcState::quanta>,
                                           &Port::GetPfc<uint32_t, &PfcState::quanta>),
                      MakeUintegerChecker<uint32_t>(2, pfc::MAX_QUANTA))
        .AddAttribute("PfcMaxFrameBytes",
                      "PFC: the largest data packet's size in bytes (its HeaderBytes apart), "
                      "for the computed headroom.",
                      UintegerValue(4096 + 64),
                      MakeUintegerAccessor(&Port::SetPfc<uint32_t, &PfcState::maxFrameBytes>,
                                           &Port::GetPfc<uint32_t, &PfcState::maxFrameBytes>),
                      MakeUintegerChecker<uint32_t>(1))
        .AddTraceSource("PfcTx",
                        "PFC: this port sends its peer a PFC frame (it starts at the port's next "
                        "frame boundary): node, port, its pause time in quanta (0: XON).",
                        MakeTraceSourceAccessor(&Port::m_pfcTxTrace),
                        "ns3::mcsim::Port::PfcTracedCallback")
        .AddTraceSource("PfcRx",
                        "PFC: a PFC frame from the peer arrived at this port and acts: node, port, "
                        "its pause time in quanta (0: XON).",
                        MakeTraceSourceAccessor(&Port::m_pfcRxTrace),
                        "ns3::mcsim::Port::PfcTracedCallback");
}

Time
Port::PfcQuantaTime(uint32_t quanta) const
{
    // a quantum is 512 bit times at the data rate (the line code's bits are not the MAC's)
    return LineTime(static_cast<uint64_t>(quanta) * pfc::QUANTUM_BITS / 8, GetDataRateBps(), 1, 1);
}

uint64_t
Port::PfcComputedHeadroom() const
{
    // once the ingress passes XOFF: the frame this port is sending delays the PFC frame (one
    // largest frame), the PFC frame's own wire time, its way to the peer (one delay), the frame the
    // peer is sending when it arrives (one largest frame), and what is on the wire in between (the
    // way back: one delay); both directions at this link's data rate
    const uint64_t frame = m_pfc.maxFrameBytes + m_headerBytes;
    const uint64_t delayBytes = LineBytes(m_delay, GetDataRateBps());
    return 2 * frame + pfc::FRAME_BYTES + m_headerBytes + 2 * delayBytes;
}

uint64_t
Port::GetPfcHeadroomBytes() const
{
    return m_pfc.headroomBytes != 0 ? m_pfc.headroomBytes : PfcComputedHeadroom();
}

PfcCounters
Port::GetPfcCounters() const
{
    PfcCounters c = m_pfc.counters;
    c.maxIngressBytes = m_pfc.maxIngressBytes;
    if (m_pfc.pausedSince != Time::Max())
    {
        // a pause in force counts to its end or to now, whichever comes first
        const Time end = std::min(m_pfc.pausedUntil, mcsim::Now());
        if (end > m_pfc.pausedSince)
        {
            c.pausedPs += static_cast<uint64_t>((end - m_pfc.pausedSince).GetPicoSeconds());
        }
    }
    return c;
}

bool
Port::PfcStalled(Time now) const
{
    return m_mode == FlowControl::PFC && m_queue.HasWaiting(false) && now < m_pfc.pausedUntil &&
           now - m_pfc.lastStart >= m_pfc.refreshAfter;
}

uint32_t
Port::GetPfcPeerNode() const
{
    return m_pfc.reverse->m_node;
}

uint32_t
Port::GetNode() const
{
    return m_node;
}

uint32_t
Port::GetIndex() const
{
    return m_index;
}

void
Port::SetPfcWatchdog(PfcWatchdog* watchdog)
{
    m_pfc.watchdog = watchdog;
}

void
Port::SetLossyClass(bool lossy)
{
    m_lossyClass = lossy;
    UpdateRewrite();
}

bool
Port::PfcMayStart(Time start, Time now, uint32_t wire, bool lossy) const
{
    if (!lossy && (start < m_pfc.pausedUntil || start >= m_pfc.pendingPauseAt))
    {
        return false; // paused then, or an XOFF arrives first
    }
    if (start <= now)
    {
        return true;
    }
    // committed ahead (fabric.md, "Priority Flow Control"): no PFC frame of this port may fall due
    // before the frame starts (it would wait behind it), nor may one of its peer's arrive first
    if (m_pfc.xoffSent)
    {
        return false; // its XON may fall due at any release
    }
    const Port* peer = m_pfc.reverse;
    // what can arrive here by `start`: the peer's frames on the wire, and what it starts a delay
    // before (at most its data rate, in whole frames); in time steps, which are ps (no Time
    // temporaries on this path)
    uint64_t arrivals = m_pfc.ingressBytes + peer->m_queue.InFlightBytes();
    const int64_t ahead = start.GetTimeStep() - now.GetTimeStep() - m_delay.GetTimeStep();
    if (ahead > 0)
    {
        arrivals += m_pfc.maxFrameBytes + m_headerBytes;
        if (arrivals > m_pfc.xoffBytes || LineBytesExceed(static_cast<uint64_t>(ahead),
                                                          m_pfc.dataRateBps,
                                                          m_pfc.xoffBytes - arrivals))
        {
            return false;
        }
    }
    else if (arrivals > m_pfc.xoffBytes)
    {
        return false;
    }
    // the peer pauses this port only once what this port sent passes its XOFF: a pause it has not
    // sent yet arrives a delay later at the earliest (no pause holds the lossy class)
    return lossy || ahead <= 0 ||
           peer->m_pfc.ingressBytes + m_queue.InFlightBytes() + wire <= peer->m_pfc.xoffBytes;
}

void
Port::PfcDrain()
{
    const Time now = mcsim::Now();
    Time wake = Time::Max();
    // the head of the lossless class first, then the lossy class's: strict priority among what
    // waits (fabric.md, "Traffic classes")
    while (PfcDrainOne(false, now, wake) || PfcDrainOne(true, now, wake))
    {
        wake = Time::Max(); // after a start, each class's wake anew
    }
    PfcWakeAt(wake);
}

bool
Port::PfcDrainOne(bool lossy, Time now, Time& wake)
{
    if (!m_queue.HasWaiting(lossy))
    {
        return false;
    }
    PortQueue::Waiting& front = m_queue.FrontWaiting(lossy);
    const Time start = std::max(front.earliest, std::max(now, m_busyUntil));
    const uint32_t wire = GetWireBytes(front.packet.Get()->GetSize());
    if (!PfcMayStart(start, now, wire, lossy))
    {
        wake = std::min(wake, PfcLookAgain(start, lossy));
        return false;
    }
    PortQueue::Waiting w = m_queue.PopWaiting(wire, lossy);
    const Time departure = Commit(std::move(w.packet), w.fields, w.earliest, w.credit, now);
    if (w.waker != nullptr)
    {
        w.waker->Wake(departure);
    }
    return true;
}

Time
Port::PfcLookAgain(Time start, bool lossy) const
{
    // when it could start (or when the pause ends); an XOFF on its way here looks again when it
    // arrives
    if (lossy)
    {
        return start;
    }
    const Time at = std::max(start, m_pfc.pausedUntil);
    return at < m_pfc.pendingPauseAt ? at : Time::Max();
}

void
Port::PfcWakeAt(Time at)
{
    if (at == Time::Max())
    {
        return;
    }
    const Time now = mcsim::Now();
    if (m_pfc.wake.Ask(at, now))
    {
        mcsim::Post(at - now, m_pfcWakeEvent, m_pfcWakeSource);
    }
}

void
Port::PfcWake()
{
    m_pfc.wake.Ran(mcsim::Now());
    PfcDrain();
}

bool
Port::PfcIngressAdmit(uint32_t wire)
{
    PfcApplyReleases(mcsim::Now());
    if (m_pfc.ingressBytes + wire > m_pfc.dropAbove)
    {
        m_pfc.counters.ingressDrops++;
        NS_LOG_INFO("node " << m_node << " port " << m_index << ": ingress overflow, " << wire
                            << " B dropped (" << m_pfc.ingressBytes << " B queued)");
        return false;
    }
    m_pfc.ingressBytes += wire;
    m_pfc.maxIngressBytes = std::max(m_pfc.maxIngressBytes, m_pfc.ingressBytes);
    if (m_pfc.ingressBytes > m_pfc.xoffBytes && !m_pfc.xoffSent)
    {
        m_pfc.xoffSent = true;
        PfcSendFrame(m_pfc.quanta);
        PfcPlanReleaseCheck();
    }
    return true;
}

void
Port::PfcIngressRelease(uint32_t wire, Time at)
{
    const Time now = mcsim::Now();
    if (at > now)
    {
        if (m_pfc.inOrder.empty() || m_pfc.inOrder.back().at <= at)
        {
            m_pfc.inOrder.push_back({at, wire});
        }
        else
        {
            m_pfc.releases.push({at, wire});
        }
        m_pfc.nextRelease = std::min(m_pfc.nextRelease, at);
        if (m_pfc.xoffSent)
        {
            PfcPlanReleaseCheck();
        }
        return;
    }
    NS_ASSERT_MSG(m_pfc.ingressBytes >= wire, "Port: PFC ingress released more than it holds");
    m_pfc.ingressBytes -= wire;
    PfcApplyReleases(now);
}

void
Port::PfcApplyReleases(Time now)
{
    if (now >= m_pfc.nextRelease)
    {
        PfcTakeReleases(now);
    }
    if (m_pfc.xoffSent && m_pfc.ingressBytes <= m_pfc.xonBytes)
    {
        m_pfc.xoffSent = false;
        PfcSendFrame(0);
    }
}

void
Port::PfcTakeReleases(Time now)
{
    while (!m_pfc.inOrder.empty() && m_pfc.inOrder.front().at <= now)
    {
        m_pfc.ingressBytes -= m_pfc.inOrder.front().wire;
        m_pfc.inOrder.pop_front();
    }
    while (!m_pfc.releases.empty() && m_pfc.releases.top().at <= now)
    {
        m_pfc.ingressBytes -= m_pfc.releases.top().wire;
        m_pfc.releases.pop();
    }
    m_pfc.nextRelease = m_pfc.inOrder.empty() ? Time::Max() : m_pfc.inOrder.front().at;
    if (!m_pfc.releases.empty())
    {
        m_pfc.nextRelease = std::min(m_pfc.nextRelease, m_pfc.releases.top().at);
    }
}

void
Port::PfcPlanReleaseCheck()
{
    // a check at every pending release: its XON goes at the first that brings the queue to XON
    // (one check at that release alone would be enough, but its event would take another place
    // among the events at its time, and results would change)
    const Time at = m_pfc.nextRelease;
    if (at == Time::Max())
    {
        return;
    }
    const Time now = mcsim::Now();
    if (m_pfc.releaseCheck.Ask(at, now))
    {
        mcsim::Post(at - now, m_pfcReleaseEvent, m_pfcWakeSource);
    }
}

void
Port::PfcReleaseCheck()
{
    const Time now = mcsim::Now();
    m_pfc.releaseCheck.Ran(now);
    PfcApplyReleases(now);
    if (m_pfc.xoffSent)
    {
        PfcPlanReleaseCheck();
    }
}

void
Port::PfcSendFrame(uint32_t quanta)
{
    // a MAC control frame goes at the next frame boundary, before any data frame that waits
    const Time now = mcsim::Now();
    const Time start = std::max(now, m_busyUntil);
    m_busyUntil = start + m_pfc.frameTx;
    m_pfc.counters.frameBusyPs += static_cast<uint64_t>(m_pfc.frameTx.GetPicoSeconds());
    (quanta != 0 ? m_pfc.counters.pauseTx : m_pfc.counters.resumeTx)++;
    m_pfcTxTrace(m_node, m_index, quanta);
    m_pfc.reverse->PfcFrameOnItsWay(m_busyUntil + m_delay, quanta);
    if (quanta != 0)
    {
        // refreshed while in force, before it expires (at half its pause time); a refresh event
        // pending for earlier looks again then (one event per refresh, not one per XOFF)
        m_pfc.nextRefresh = start + m_pfc.refreshAfter;
        if (m_pfc.refreshPosted < now)
        {
            PfcPostRefresh(now);
        }
    }
}

void
Port::PfcPostRefresh(Time now)
{
    m_pfc.refreshPosted = m_pfc.nextRefresh;
    mcsim::Post(m_pfc.nextRefresh - now, m_pfcRefreshEvent, m_pfcRefreshSource);
}

void
Port::PfcRefresh()
{
    const Time now = mcsim::Now();
    m_pfc.refreshPosted = Time(-1);
    if (!m_pfc.xoffSent)
    {
        return; // resumed: the next XOFF posts its own
    }
    if (now < m_pfc.nextRefresh)
    {
        PfcPostRefresh(now); // an XOFF sent since: its refresh
        return;
    }
    PfcSendFrame(m_pfc.quanta);
    if (m_pfc.watchdog != nullptr)
    {
        m_pfc.watchdog->Check(); // paused this long: a cycle of paused ports?
    }
}

void
Port::PfcFrameOnItsWay(Time arrival, uint32_t quanta)
{
    if (quanta != 0)
    {
        m_pfc.pendingPauseAt = std::min(m_pfc.pendingPauseAt, arrival);
    }
    m_pfc.incoming.push_back({arrival, quanta});
    if (m_pfc.incoming.size() == 1)
    {
        mcsim::Post(arrival - mcsim::Now(), m_pfcFrameEvent, m_pfcFrameSource);
    }
}

void
Port::PfcFrameArrives()
{
    const Time now = mcsim::Now();
    const PfcFrame f = m_pfc.incoming.front();
    m_pfc.incoming.pop_front();
    m_pfc.pendingPauseAt = Time::Max();
    for (std::size_t i = 0; i < m_pfc.incoming.size(); ++i)
    {
        if (m_pfc.incoming[i].quanta != 0)
        {
            m_pfc.pendingPauseAt = m_pfc.incoming[i].arrival;
            break;
        }
    }
    if (!m_pfc.incoming.empty())
    {
        mcsim::Post(m_pfc.incoming.front().arrival - now, m_pfcFrameEvent, m_pfcFrameSource);
    }
    // the pause in force so far ends now (a refresh starts a new one at once)
    if (m_pfc.pausedSince != Time::Max())
    {
        const Time end = std::min(m_pfc.pausedUntil, now);
        m_pfc.counters.pausedPs +=
            static_cast<uint64_t>((end - m_pfc.pausedSince).GetPicoSeconds());
        m_pfc.pausedSince = Time::Max();
    }
    m_pfcRxTrace(m_node, m_index, f.quanta);
    if (f.quanta != 0)
    {
        m_pfc.counters.pauseRx++;
        m_pfc.pausedSince = now;
        m_pfc.pausedUntil =
            now + (f.quanta == m_pfc.quanta ? m_pfc.pauseTime : PfcQuantaTime(f.quanta));
    }
    else
    {
        m_pfc.counters.resumeRx++;
        m_pfc.pausedUntil = now;
    }
    PfcDrain();
}

} // namespace mcsim
} // namespace ns3
