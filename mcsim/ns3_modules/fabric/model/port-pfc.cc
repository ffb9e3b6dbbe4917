// SPDX-License-Identifier: GPL-2.0-only
// A Port's side of Priority Flow Control (FlowControl::PFC): its attributes, and the sending that
// PfcPort's pauses hold (fabric/doc/fabric.md, "Priority Flow Control").
#include "port.h"

#include "ns3/mcsim/event-loop.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{
namespace mcsim
{

TypeId
Port::AddPfcAttributes(TypeId tid)
{
    return tid
        .AddAttribute(
            "PfcXoffBytes",
            "PFC: bytes in this port's ingress queue above which it pauses its peer "
            "(0: BufferBytes less the headroom).",
            UintegerValue(0),
            MakeUintegerAccessor(&Port::SetPfcField<uint64_t, &PfcPort::Settings::xoffConfig>,
                                 &Port::GetPfcField<uint64_t, &PfcPort::Settings::xoffConfig>),
            MakeUintegerChecker<uint64_t>())
        .AddAttribute(
            "PfcResumeOffsetBytes",
            "PFC: the ingress resumes its peer once it holds this many bytes less "
            "than PfcXoffBytes (XON).",
            UintegerValue(DEFAULT_PFC_RESUME_OFFSET_BYTES),
            MakeUintegerAccessor(&Port::SetPfcField<uint64_t, &PfcPort::Settings::resumeOffset>,
                                 &Port::GetPfcField<uint64_t, &PfcPort::Settings::resumeOffset>),
            MakeUintegerChecker<uint64_t>())
        .AddAttribute(
            "PfcHeadroomBytes",
            "PFC: ingress bytes beyond PfcXoffBytes it takes (0: computed from the "
            "link's delay and rate and PfcMaxFrameBytes); past them it drops.",
            UintegerValue(0),
            MakeUintegerAccessor(&Port::SetPfcField<uint64_t, &PfcPort::Settings::headroomBytes>,
                                 &Port::GetPfcField<uint64_t, &PfcPort::Settings::headroomBytes>),
            MakeUintegerChecker<uint64_t>())
        .AddAttribute(
            "PfcPauseQuanta",
            "PFC: the pause time of an XOFF, in quanta of 512 bit times.",
            UintegerValue(pfc::MAX_QUANTA),
            MakeUintegerAccessor(&Port::SetPfcField<uint32_t, &PfcPort::Settings::quanta>,
                                 &Port::GetPfcField<uint32_t, &PfcPort::Settings::quanta>),
            MakeUintegerChecker<uint32_t>(2, pfc::MAX_QUANTA))
        .AddAttribute(
            "PfcMaxFrameBytes",
            "PFC: the largest data packet's size in bytes (its HeaderBytes apart), "
            "for the computed headroom.",
            UintegerValue(4096 + 64),
            MakeUintegerAccessor(&Port::SetPfcField<uint32_t, &PfcPort::Settings::maxFrameBytes>,
                                 &Port::GetPfcField<uint32_t, &PfcPort::Settings::maxFrameBytes>),
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
Port::SetLossyClass(bool lossy)
{
    m_lossyClass = lossy;
    UpdateRewrite();
}

Time
Port::SendPfc(const Ptr<Packet>& packet,
              const FabricHeader::Fields& fields,
              Time earliest,
              CreditReturn credit,
              PortWaker* waker,
              uint32_t wire,
              Time now)
{
    // the lossy class: no pause holds it, and its own share of the buffer is all it has
    const bool lossy = fields.IsLossy();
    if (lossy && TailDrops(packet, fields, wire, m_queue.LossyOccupancy(now, m_delay)))
    {
        return Time(-1);
    }
    const Time start = std::max(earliest, std::max(now, m_busyUntil));
    if (!m_queue.HasWaiting(lossy) && m_pfc.MayStart(start, now, wire, lossy))
    {
        return Commit(OwnedPacket(packet), fields, earliest, credit, now);
    }
    const bool head = !m_queue.HasWaiting(lossy);
    const uint64_t occupancy =
        m_queue.PushWaiting({OwnedPacket(packet), fields, earliest, credit, waker},
                            wire,
                            now,
                            m_delay,
                            lossy);
    m_counters.maxQueueBytes = std::max(m_counters.maxQueueBytes, occupancy);
    if (head && m_queue.HasWaiting(!lossy))
    {
        PfcDrain(); // the other class's head may go now; posts the wakes
    }
    else if (head)
    {
        m_pfc.WakeAt(m_pfc.LookAgain(start, lossy)); // it may not start now: nothing else changed
    }
    return Time(-1);
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
    m_pfc.WakeAt(wake);
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
    if (!m_pfc.MayStart(start, now, wire, lossy))
    {
        wake = std::min(wake, m_pfc.LookAgain(start, lossy));
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
Port::StartPfcFrame(Time tx)
{
    const Time start = std::max(mcsim::Now(), m_busyUntil);
    m_busyUntil = start + tx;
    return start;
}

} // namespace mcsim
} // namespace ns3
