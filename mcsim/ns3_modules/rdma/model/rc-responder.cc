// SPDX-License-Identifier: GPL-2.0-only
#include "rc-responder.h"

#include "nic.h"
#include "rc-qp.h"

#include "ns3/log.h"

#include <algorithm>

#undef NS_LOG_APPEND_CONTEXT // every log line of this file names the host and QP
#define NS_LOG_APPEND_CONTEXT                                                                      \
    std::clog << "host " << m_qp->m_nic->GetHostId() << " QP " << m_qp->m_qpn << ": ";

namespace ns3
{
namespace mcsim
{

NS_LOG_COMPONENT_DEFINE("McsimRcResponder");

RcResponder::RcResponder(RcQp* qp)
    : m_qp(qp),
      m_ePsn(0),
      m_nakSent(false),
      m_unacked(0),
      m_msgBytes(0),
      m_msgOffset(0),
      m_postedRecvs(0)
{
}

void
RcResponder::PostRecv(uint32_t n)
{
    m_postedRecvs += n;
}

bool
RcResponder::HasPacket() const
{
    return !m_responses.empty();
}

OutgoingPacket
RcResponder::NextPacket()
{
    Nic* nic = m_qp->m_nic;
    const uint32_t mtu = nic->GetMtuBytes();
    TransportHeader h;
    Response& r = m_responses.front();
    if (r.npkts == 0)
    {
        h.opcode = Opcode::ACK;
        h.psn = r.psn;
        h.flags = r.flags;
        // HPCC: the newest data packet's INT records go back to the sender
        h.intHandle = m_int != 0 ? (m_int | FabricHeader::INT_ECHO) : 0;
        m_int = 0;
        m_responses.pop_front();
        m_qp->m_counters.acksSent++;
        return m_qp->Build(h, 0);
    }
    const uint64_t done = static_cast<uint64_t>(r.sent) * mtu;
    const auto payload = static_cast<uint32_t>(std::min<uint64_t>(mtu, r.bytes - done));
    const bool first = r.sent == 0;
    const bool last = r.sent + 1 == r.npkts;
    h.opcode = ReadResponseOpcode(first, last);
    h.psn = r.psn + r.sent;
    const uint8_t* data = nic->HasMemory() ? nic->Memory(r.offset + done, payload) : nullptr;
    r.sent++;
    if (last)
    {
        m_responses.pop_front();
    }
    return m_qp->Build(h, payload, data);
}

void
RcResponder::QueueControl(uint32_t psn, uint8_t flags)
{
    Response* back = m_responses.empty() ? nullptr : &m_responses.back();
    if (flags == 0 && back != nullptr && back->npkts == 0 && back->flags == 0)
    {
        back->psn = psn; // coalesce: one cumulative ACK says it all
    }
    else
    {
        m_responses.push_back({psn, 0, 0, flags, 0, 0});
        if (flags & TransportHeader::FLAG_NAK)
        {
            m_qp->m_counters.naksSent++;
        }
    }
    m_unacked = 0;
    m_qp->m_nic->Kick(m_qp->m_qpn);
}

void
RcResponder::AbandonFrom(uint32_t psn)
{
    while (!m_responses.empty())
    {
        Response& r = m_responses.back();
        if (r.psn >= psn)
        {
            m_responses.pop_back(); // the requester asks for all of it again
            continue;
        }
        if (r.npkts > 0 && r.psn + r.npkts > psn)
        {
            // an older stream of the same READ: the requester holds its PSNs before psn (it asks
            // from there) and the new stream brings the rest
            m_responses.pop_back();
        }
        break;
    }
}

void
RcResponder::Receive(Ptr<Packet> packet, const TransportHeader& h, uint32_t payload)
{
    if (h.intHandle != 0) // HPCC: the next ACK brings the newest records back
    {
        if (m_int != 0)
        {
            m_qp->m_nic->ReleaseInt(m_int);
        }
        m_int = h.intHandle;
    }
    if (h.psn != m_ePsn)
    {
        OutOfSequence(h);
        return;
    }
    const Opcode op = h.opcode;
    const bool needsRecv = ConsumesRecv(op);
    if (needsRecv && m_postedRecvs == 0)
    {
        NS_LOG_INFO("no receive posted for PSN " << h.psn << ", RNR NAK");
        QueueControl(m_ePsn, TransportHeader::FLAG_RNR); // the requester retries later
        return;
    }
    m_nakSent = false;
    if (IsReadRequest(op))
    {
        const uint32_t n = m_qp->Packets(h.length);
        m_responses.push_back({h.psn, n, 0, 0, h.length, h.remoteOffset});
        m_ePsn += n;
        m_qp->m_nic->Kick(m_qp->m_qpn);
        return;
    }
    if (needsRecv)
    {
        m_postedRecvs--;
    }
    if (StartsMessage(op))
    {
        m_msgBytes = 0;
        m_msgOffset = h.remoteOffset;
    }
    if (IsWrite(op) && payload > 0 && m_qp->m_nic->HasMemory())
    {
        m_qp->m_nic->StorePayload(packet, payload, m_msgOffset + m_msgBytes);
    }
    m_ePsn++;
    m_msgBytes += payload;
    m_qp->m_counters.rxPayload += payload;
    Deliver(h);
    if ((h.flags & TransportHeader::FLAG_ACK_REQUEST) || ++m_unacked >= m_qp->m_ackInterval)
    {
        QueueControl(m_ePsn - 1, 0);
    }
}

void
RcResponder::OutOfSequence(const TransportHeader& h)
{
    if (h.psn < m_ePsn)
    {
        m_qp->m_counters.duplicates++;
        if (IsReadRequest(h.opcode)) // re-executed: the requester lost responses
        {
            NS_LOG_INFO("duplicate READ request, responses again from PSN " << h.psn);
            AbandonFrom(h.psn);
            m_responses.push_back({h.psn, m_qp->Packets(h.length), 0, 0, h.length, h.remoteOffset});
            m_qp->m_nic->Kick(m_qp->m_qpn);
        }
        else
        {
            QueueControl(m_ePsn - 1, 0);
        }
        return;
    }
    // ahead of the expected PSN: a packet before it was lost
    m_qp->m_counters.outOfSequence++;
    if (!m_nakSent)
    {
        m_nakSent = true;
        NS_LOG_INFO("PSN " << h.psn << " ahead of " << m_ePsn << ", NAK");
        QueueControl(m_ePsn, TransportHeader::FLAG_NAK);
    }
}

void
RcResponder::Deliver(const TransportHeader& h)
{
    const Opcode op = h.opcode;
    if (!EndsSend(op) && !HasImm(op))
    {
        return; // a WRITE without immediate completes nothing at the responder
    }
    Completion c;
    c.qpn = m_qp->m_qpn;
    c.srcHost = h.srcHost;
    c.bytes = static_cast<uint32_t>(m_msgBytes);
    c.imm = h.imm;
    c.hasImm = HasImm(op);
    c.staged = false; // RC data lands in place (zero copy)
    c.opcode = op;
    m_qp->m_nic->Complete(c, m_qp);
}

} // namespace mcsim
} // namespace ns3
