// SPDX-License-Identifier: GPL-2.0-only
// Priority Flow Control of one port: fabric/doc/fabric.md, "Priority Flow Control".
#include "pfc-port.h"

#include "pfc-watchdog.h"

#include "ns3/log.h"
#include "ns3/mcsim/reusable-event.h"

#include <stdexcept>
#include <string>

namespace ns3
{
namespace mcsim
{

NS_LOG_COMPONENT_DEFINE("McsimPfc");

PfcPort::PfcPort(PfcTransmitter* port,
                 const PortQueue* queue,
                 FrameTrace* txTrace,
                 FrameTrace* rxTrace)
    : m_queue(queue),
      m_port(port),
      m_txTrace(txTrace),
      m_rxTrace(rxTrace),
      m_wakeEvent(Create<ReusableEvent<PfcPort, &PfcPort::Wake>>(this)),
      m_frameEvent(Create<ReusableEvent<PfcPort, &PfcPort::FrameArrives>>(this)),
      m_refreshEvent(Create<ReusableEvent<PfcPort, &PfcPort::Refresh>>(this)),
      m_releaseEvent(Create<ReusableEvent<PfcPort, &PfcPort::ReleaseCheck>>(this)),
      m_wakeSource(EventClass::TRANSMIT),
      m_frameSource(EventClass::ARRIVAL),
      m_refreshSource(EventClass::TIMER)
{
}

void
PfcPort::Place(uint32_t node, uint32_t port)
{
    m_node = node;
    m_index = port;
    m_wakeSource.Place(node, pfc::UNIT + port);
    m_frameSource.Place(node, pfc::UNIT + port);
    m_refreshSource.Place(node, pfc::UNIT + port);
}

void
PfcPort::SetReverse(PfcPort* reverse)
{
    m_reverse = reverse;
}

void
PfcPort::SetWatchdog(PfcWatchdog* watchdog)
{
    m_watchdog = watchdog;
}

void
PfcPort::Connect(uint64_t bufferBytes,
                 Time delay,
                 uint32_t headerBytes,
                 uint64_t dataRateBps,
                 Time frameTx)
{
    if (m_reverse == nullptr)
    {
        throw std::invalid_argument("Port: PFC needs the port at the far end (SetReverse)");
    }
    m_headerBytes = headerBytes;
    m_delay = delay;
    m_dataRateBps = dataRateBps;
    const uint64_t headroom = GetHeadroomBytes();
    if (m_settings.xoffConfig == 0 && headroom >= bufferBytes)
    {
        throw std::invalid_argument(
            "Port: node " + std::to_string(m_node) + " port " + std::to_string(m_index) +
            ": a PFC ingress buffer of " + std::to_string(bufferBytes) +
            " B does not hold its headroom of " + std::to_string(headroom) + " B");
    }
    m_xoffBytes = m_settings.xoffConfig != 0 ? m_settings.xoffConfig : bufferBytes - headroom;
    m_xonBytes = m_xoffBytes > m_settings.resumeOffset ? m_xoffBytes - m_settings.resumeOffset : 0;
    m_dropAbove = m_xoffBytes + headroom;
    m_frameTx = frameTx;
    m_pauseTime = QuantaTime(m_settings.quanta);
    m_refreshAfter = QuantaTime(m_settings.quanta / 2);
    m_on = true;
}

void
PfcPort::Dispose()
{
    m_wakeEvent = nullptr;
    m_frameEvent = nullptr;
    m_refreshEvent = nullptr;
    m_releaseEvent = nullptr;
    m_reverse = nullptr;
}

uint64_t
PfcPort::ComputedHeadroom(uint32_t maxFrameBytes,
                          uint32_t headerBytes,
                          Time delay,
                          uint64_t dataRateBps)
{
    // once the ingress passes XOFF: the frame this port is sending delays the PFC frame (one
    // largest frame), the PFC frame's own wire time, its way to the peer (one delay), the frame the
    // peer is sending when it arrives (one largest frame), and what is on the wire in between (the
    // way back: one delay); both directions at this link's data rate
    const uint64_t frame = maxFrameBytes + headerBytes;
    const uint64_t delayBytes = LineBytes(delay, dataRateBps);
    return 2 * frame + pfc::FRAME_BYTES + headerBytes + 2 * delayBytes;
}

uint64_t
PfcPort::GetHeadroomBytes() const
{
    return m_settings.headroomBytes != 0
               ? m_settings.headroomBytes
               : ComputedHeadroom(m_settings.maxFrameBytes, m_headerBytes, m_delay, m_dataRateBps);
}

Time
PfcPort::QuantaTime(uint32_t quanta) const
{
    // a quantum is 512 bit times at the data rate (the line code's bits are not the MAC's)
    return LineTime(static_cast<uint64_t>(quanta) * pfc::QUANTUM_BITS / 8, m_dataRateBps, 1, 1);
}

PfcCounters
PfcPort::GetCounters() const
{
    PfcCounters c = m_counters;
    c.maxIngressBytes = m_maxIngressBytes;
    if (m_pausedSince != Time::Max())
    {
        // a pause in force counts to its end or to now, whichever comes first
        const Time end = std::min(m_pausedUntil, mcsim::Now());
        if (end > m_pausedSince)
        {
            c.pausedPs += static_cast<uint64_t>((end - m_pausedSince).GetPicoSeconds());
        }
    }
    return c;
}

bool
PfcPort::Stalled(Time now) const
{
    return m_on && m_queue->HasWaiting(false) && now < m_pausedUntil &&
           now - m_lastStart >= m_refreshAfter;
}

uint32_t
PfcPort::GetPeerNode() const
{
    return m_reverse->m_node;
}

uint64_t
PfcPort::GetXoffBytes() const
{
    return m_xoffBytes;
}

uint64_t
PfcPort::GetXonBytes() const
{
    return m_xonBytes;
}

uint64_t
PfcPort::GetIngressBytes() const
{
    return m_ingressBytes;
}

Time
PfcPort::GetPausedUntil() const
{
    return m_pausedUntil;
}

bool
PfcPort::IsPausingPeer() const
{
    return m_xoffSent;
}

void
PfcPort::Wake()
{
    m_wake.Ran(mcsim::Now());
    m_port->PfcDrain();
}

bool
PfcPort::Overflow(uint32_t wire)
{
    m_counters.ingressDrops++;
    NS_LOG_INFO("node " << m_node << " port " << m_index << ": ingress overflow, " << wire
                        << " B dropped (" << m_ingressBytes << " B queued)");
    return false;
}

void
PfcPort::SendXoff()
{
    m_xoffSent = true;
    SendFrame(m_settings.quanta);
    PlanReleaseCheck();
}

void
PfcPort::TakeReleases(Time now)
{
    while (!m_inOrder.empty() && m_inOrder.front().at <= now)
    {
        m_ingressBytes -= m_inOrder.front().wire;
        m_inOrder.pop_front();
    }
    while (!m_releases.empty() && m_releases.top().at <= now)
    {
        m_ingressBytes -= m_releases.top().wire;
        m_releases.pop();
    }
    m_nextRelease = m_inOrder.empty() ? Time::Max() : m_inOrder.front().at;
    if (!m_releases.empty())
    {
        m_nextRelease = std::min(m_nextRelease, m_releases.top().at);
    }
}

void
PfcPort::PlanReleaseCheck()
{
    // a check at every pending release: its XON goes at the first that brings the queue to XON
    // (one check at that release alone would be enough, but its event would take another place
    // among the events at its time, and results would change)
    const Time at = m_nextRelease;
    if (at == Time::Max())
    {
        return;
    }
    const Time now = mcsim::Now();
    if (m_releaseCheck.Ask(at, now))
    {
        mcsim::Post(at - now, m_releaseEvent, m_wakeSource);
    }
}

void
PfcPort::ReleaseCheck()
{
    const Time now = mcsim::Now();
    m_releaseCheck.Ran(now);
    ApplyReleases(now);
    if (m_xoffSent)
    {
        PlanReleaseCheck();
    }
}

void
PfcPort::SendFrame(uint32_t quanta)
{
    // a MAC control frame goes at the next frame boundary, before any data frame that waits
    const Time now = mcsim::Now();
    const Time start = m_port->StartPfcFrame(m_frameTx);
    const Time end = start + m_frameTx;
    m_counters.frameBusyPs += static_cast<uint64_t>(m_frameTx.GetPicoSeconds());
    (quanta != 0 ? m_counters.pauseTx : m_counters.resumeTx)++;
    (*m_txTrace)(m_node, m_index, quanta);
    m_reverse->FrameOnItsWay(end + m_delay, quanta);
    if (quanta != 0)
    {
        // refreshed while in force, before it expires (at half its pause time); a refresh event
        // pending for earlier looks again then (one event per refresh, not one per XOFF)
        m_nextRefresh = start + m_refreshAfter;
        if (m_refreshPosted < now)
        {
            PostRefresh(now);
        }
    }
}

void
PfcPort::PostRefresh(Time now)
{
    m_refreshPosted = m_nextRefresh;
    mcsim::Post(m_nextRefresh - now, m_refreshEvent, m_refreshSource);
}

void
PfcPort::Refresh()
{
    const Time now = mcsim::Now();
    m_refreshPosted = Time(-1);
    if (!m_xoffSent)
    {
        return; // resumed: the next XOFF posts its own
    }
    if (now < m_nextRefresh)
    {
        PostRefresh(now); // an XOFF sent since: its refresh
        return;
    }
    SendFrame(m_settings.quanta);
    if (m_watchdog != nullptr)
    {
        m_watchdog->Check(); // paused this long: a cycle of paused ports?
    }
}

void
PfcPort::FrameOnItsWay(Time arrival, uint32_t quanta)
{
    if (quanta != 0)
    {
        m_pendingPauseAt = std::min(m_pendingPauseAt, arrival);
    }
    m_incoming.push_back({arrival, quanta});
    if (m_incoming.size() == 1)
    {
        mcsim::Post(arrival - mcsim::Now(), m_frameEvent, m_frameSource);
    }
}

void
PfcPort::FrameArrives()
{
    const Time now = mcsim::Now();
    const PfcFrame f = m_incoming.front();
    m_incoming.pop_front();
    m_pendingPauseAt = Time::Max();
    for (std::size_t i = 0; i < m_incoming.size(); ++i)
    {
        if (m_incoming[i].quanta != 0)
        {
            m_pendingPauseAt = m_incoming[i].arrival;
            break;
        }
    }
    if (!m_incoming.empty())
    {
        mcsim::Post(m_incoming.front().arrival - now, m_frameEvent, m_frameSource);
    }
    ActOnFrame(f.quanta, now);
    m_port->PfcDrain();
}

void
PfcPort::ActOnFrame(uint32_t quanta, Time now)
{
    // the pause in force so far ends now (a refresh starts a new one at once)
    if (m_pausedSince != Time::Max())
    {
        const Time end = std::min(m_pausedUntil, now);
        m_counters.pausedPs += static_cast<uint64_t>((end - m_pausedSince).GetPicoSeconds());
        m_pausedSince = Time::Max();
    }
    (*m_rxTrace)(m_node, m_index, quanta);
    if (quanta != 0)
    {
        m_counters.pauseRx++;
        m_pausedSince = now;
        m_pausedUntil = now + (quanta == m_settings.quanta ? m_pauseTime : QuantaTime(quanta));
    }
    else
    {
        m_counters.resumeRx++;
        m_pausedUntil = now;
    }
}

} // namespace mcsim
} // namespace ns3
