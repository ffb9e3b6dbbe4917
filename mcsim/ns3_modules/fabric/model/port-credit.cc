// SPDX-License-Identifier: GPL-2.0-only
// Credits of a Port (FlowControl::LOSSLESS), and where a packet's ingress buffer goes when it
// leaves (credits, or a PFC ingress queue): fabric/doc/fabric.md, "Port".
#include "port.h"

#include "ns3/mcsim/event-loop.h"

#include <algorithm>

namespace ns3
{
namespace mcsim
{

uint64_t
Port::GetCreditsHeld() const
{
    if (m_mode != FlowControl::LOSSLESS)
    {
        return 0;
    }
    return m_credit.Held();
}

void
Port::ReturnCreditFor(Port* to, Time departure, uint32_t wireBytes, Time start)
{
    if (to->m_mode == FlowControl::LOSSY)
    {
        return;
    }
    if (to->m_mode == FlowControl::PFC)
    {
        to->m_pfc.Reverse()->IngressRelease(wireBytes, start); // it leaves the queue as it starts
        return;
    }
    // if both links are equally long, the credit reaches `to` just when this packet reaches the
    // next hop: should `to` wait for it, that arrival tells it (AttachCreditDue) and `to` needs
    // no event of its own (unless the next hop cuts through: it takes the packet earlier)
    to->AddPendingCredit(departure + to->m_delay,
                         wireBytes,
                         to->m_delay == m_delay && m_cutThroughBytes == 0 ? this : nullptr);
}

void
Port::AttachCreditDue(Time handover, Port* to)
{
    m_queue.AttachCreditDue(handover, to);
}

void
Port::ReturnCredit(Time at, uint32_t wireBytes)
{
    if (m_mode == FlowControl::LOSSY)
    {
        return;
    }
    if (m_mode == FlowControl::PFC)
    {
        m_pfc.Reverse()->IngressRelease(wireBytes, mcsim::Now()); // consumed or dropped there
        return;
    }
    AddPendingCredit(at, wireBytes, nullptr);
}

void
Port::AddPendingCredit(Time at, uint32_t wireBytes, Port* via)
{
    m_credit.Add(at, wireBytes, via);
    if (m_queue.HasWaiting())
    {
        if (at <= mcsim::Now() + m_delay)
        {
            DrainWaiting(); // due within a link delay: usable now (CreditAccount::Take)
        }
        else
        {
            ScheduleCreditEvent();
        }
    }
}

Time
Port::CreditReady(Time earliest, Time ready, Time now)
{
    if (ready > std::max(earliest, std::max(now, m_busyUntil)))
    {
        m_counters.creditStalls++; // the credit's return sets its start
        return ready;
    }
    return earliest;
}

void
Port::DrainWaiting()
{
    const Time now = mcsim::Now();
    while (m_queue.HasWaiting())
    {
        const uint32_t wire = GetWireBytes(m_queue.FrontWaiting().packet.Get()->GetSize());
        Time ready;
        if (!m_credit.Take(wire, now, m_delay, ready))
        {
            break;
        }
        PortQueue::Waiting w = m_queue.PopWaiting(wire);
        const Time departure =
            Commit(std::move(w.packet), w.fields, std::max(w.earliest, ready), w.credit, now);
        if (w.waker != nullptr)
        {
            w.waker->Wake(departure);
        }
    }
    if (m_queue.HasWaiting())
    {
        ScheduleCreditEvent();
    }
}

void
Port::ScheduleCreditEvent()
{
    const Time now = mcsim::Now();
    const CreditWakeup wakeup =
        m_credit.PlanWakeup(GetWireBytes(m_queue.FrontWaiting().packet.Get()->GetSize()),
                            now,
                            m_delay);
    if (wakeup.kind == CreditWakeup::ATTACH)
    {
        wakeup.via->AttachCreditDue(wakeup.at, this); // that arrival calls CreditDue()
    }
    else if (wakeup.kind == CreditWakeup::SCHEDULE)
    {
        mcsim::Post(wakeup.at - now, m_creditEvent, m_creditSource);
    }
}

void
Port::CreditDue()
{
    if (m_queue.HasWaiting())
    {
        DrainWaiting();
    }
}

void
Port::CreditEvent()
{
    m_credit.EventRan();
    DrainWaiting();
}

} // namespace mcsim
} // namespace ns3
