// SPDX-License-Identifier: GPL-2.0-only
#include "rc-qp.h"

#include "nic.h"

#include "ns3/log.h"
#include "ns3/make-event.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/invariant.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#undef NS_LOG_APPEND_CONTEXT // every log line of this file names the host and QP
#define NS_LOG_APPEND_CONTEXT std::clog << "host " << m_nic->GetHostId() << " QP " << m_qpn << ": ";

namespace ns3
{
namespace mcsim
{

NS_LOG_COMPONENT_DEFINE("McsimRcQp");

void
RcQp::PostSend(Verb verb,
               uint64_t bytes,
               uint64_t remoteOffset,
               uint64_t wrId,
               bool withImm,
               uint32_t imm,
               uint64_t localOffset)
{
    const std::string where = "RcQp " + std::to_string(m_qpn) + ": ";
    if (!m_connected || m_nic == nullptr)
    {
        throw std::invalid_argument(where + "post on a QP that is not connected");
    }
    if (bytes == 0 && verb != Verb::SEND)
    {
        throw std::invalid_argument(where + "a WRITE or READ of 0 bytes");
    }
    if (verb != Verb::SEND &&
        (remoteOffset > m_remoteRegion || bytes > m_remoteRegion - remoteOffset))
    {
        throw std::invalid_argument(where + "target [" + std::to_string(remoteOffset) + ", " +
                                    std::to_string(remoteOffset + bytes) +
                                    ") is outside the peer's registered region of " +
                                    std::to_string(m_remoteRegion) + " bytes");
    }
    if (verb == Verb::READ && withImm)
    {
        throw std::invalid_argument(where + "a READ has no immediate data");
    }
    if (verb == Verb::READ && m_lines.bytes != 0)
    {
        throw std::invalid_argument(where + "a READ on a QP whose packets carry lines (SetLines)");
    }
    m_mtu = DataMtu(); // the same for every post (the NIC's MTU and the lines are set before)
    const uint32_t n = Packets(bytes);
    const uint64_t local = localOffset == SAME_OFFSET ? remoteOffset : localOffset;
    const uint64_t memory = m_nic->GetMemoryBytes();
    if (verb != Verb::SEND && memory > 0 && (local > memory || bytes > memory - local))
    {
        throw std::invalid_argument(
            where + "source [" + std::to_string(local) + ", " + std::to_string(local + bytes) +
            ") is outside this host's region of " + std::to_string(memory) + " bytes");
    }
    m_sq.push_back({verb,
                    withImm,
                    imm,
                    wrId,
                    bytes,
                    remoteOffset,
                    local,
                    m_nextPsn,
                    n,
                    false,
                    m_nic->Doorbell(m_qpn)});
    m_nextPsn += n;
}

void
RcQp::PostRecv(uint32_t n)
{
    m_responder.PostRecv(n);
}

std::size_t
RcQp::FindWqe(uint32_t psn) const
{
    // the first work request that psn is not past: the queue's ends (firstPsn + npkts) grow from
    // the oldest on. First the last answer and the request after it (a QP sends its packets in
    // order, and asks twice per packet: HasPacket, then NextRequesterPacket): one is the answer
    // when psn is before its end and not before the end of the one in front of it. Else a binary
    // search (a QP with many requests posted sends each packet in log time).
    const auto past = [psn](const Wqe& w) { return psn >= w.firstPsn + w.npkts; };
    const std::size_t n = m_sq.size();
    for (std::size_t i = m_wqeHint; i < n && i <= m_wqeHint + 1; ++i)
    {
        if (!past(m_sq[i]))
        {
            if (i == 0 || past(m_sq[i - 1]))
            {
                m_wqeHint = i;
                return i;
            }
            break;
        }
    }
    const auto it = std::partition_point(m_sq.begin(), m_sq.end(), past);
    m_wqeHint = static_cast<std::size_t>(it - m_sq.begin());
    return m_wqeHint;
}

bool
RcQp::HasPacket() const
{
    if (m_error)
    {
        return false;
    }
    if (m_responder.HasPacket())
    {
        return true;
    }
    if (m_txPsn >= m_nextPsn || mcsim::Now() < m_rnrUntil)
    {
        return false;
    }
    const CongestionControl* control = PeekPointer(cc); // (Ptr's operator-> asserts)
    if (control != nullptr &&
        uint64_t{m_txPsn - m_una} * m_nic->GetMtuBytes() >= control->GetWindowBytes())
    {
        m_windowShut = true;
        return false; // its window is in flight (HPCC: an ACK opens it)
    }
    const Wqe& w = m_sq[FindWqe(m_txPsn)];
    return w.visible <= mcsim::Now() &&
           !(w.verb == Verb::READ && !w.readRequested && m_outstandingReads >= m_maxReads);
}

bool
RcQp::HasWork() const
{
    return !m_error && (m_responder.HasPacket() || m_txPsn < m_nextPsn);
}

OutgoingPacket
RcQp::Build(TransportHeader& h, uint32_t payload, const uint8_t* data, uint32_t padBytes)
{
    h.dst = m_remoteHost;
    h.dstQpn = static_cast<uint16_t>(m_remoteQpn);
    h.flow = (m_qpn << 16) | m_remoteQpn;
    m_counters.txPackets++;
    m_counters.txPayload += payload;
    return m_nic->MakePacket(h, payload, data, padBytes);
}

OutgoingPacket
RcQp::NextPacket()
{
    return m_responder.HasPacket() ? m_responder.NextPacket() : NextRequesterPacket();
}

OutgoingPacket
RcQp::NextRequesterPacket()
{
    const uint32_t mtu = m_mtu; // PostSend's DataMtu()
    const std::size_t idx = FindWqe(m_txPsn);
    MCSIM_ASSERT(idx < m_sq.size(), "RcQp: no work request holds the PSN to send");
    Wqe& w = m_sq[idx];
    TransportHeader h;
    uint32_t payload = 0;
    const uint8_t* data = nullptr;
    const uint32_t psn = m_txPsn; // a READ re-requested from a gap starts at the gap (m_una)
    if (psn < m_sentEnd)
    {
        m_counters.retransmits++;
        m_nic->CountRetransmit();
    }
    if (w.verb == Verb::READ)
    {
        const uint64_t skip = static_cast<uint64_t>(psn - w.firstPsn) * mtu;
        h.opcode = Opcode::READ_REQUEST;
        h.psn = psn;
        h.remoteOffset = w.remoteOffset + skip;
        h.length = static_cast<uint32_t>(w.bytes - skip);
        if (!w.readRequested)
        {
            w.readRequested = true;
            m_outstandingReads++;
        }
        m_txPsn = w.firstPsn + w.npkts;
    }
    else
    {
        const uint32_t i = psn - w.firstPsn;
        const bool first = i == 0;
        const bool last = i + 1 == w.npkts;
        payload = static_cast<uint32_t>(
            std::min<uint64_t>(mtu, w.bytes - static_cast<uint64_t>(i) * mtu));
        const bool send = w.verb == Verb::SEND;
        h.opcode = MessageOpcode(send, w.withImm, first, last);
        h.psn = psn;
        h.imm = w.imm;
        h.remoteOffset = w.remoteOffset;
        h.length = static_cast<uint32_t>(std::min<uint64_t>(w.bytes, UINT32_MAX));
        h.flags = last ? TransportHeader::FLAG_ACK_REQUEST : 0;
        h.intHandle = m_nic->TakeInt(this); // HPCC: the switches on its way add their records
        if (h.intHandle != 0)
        {
            // HPCC: every packet asks for an ACK (the HPCC authors' simulator ACKs every packet):
            // its records come back at once, and a window that shrinks below the packets in
            // flight never waits on a responder that counts to AckInterval
            h.flags |= TransportHeader::FLAG_ACK_REQUEST;
        }
        m_txPsn = psn + 1;
        if (!send && m_nic->HasMemory())
        {
            data = m_nic->Memory(w.localOffset + static_cast<uint64_t>(i) * mtu, payload);
        }
    }
    if (m_una >= m_sentEnd) // nothing was outstanding: the timer starts with this packet
    {
        m_progressAt = mcsim::Now();
    }
    m_sentEnd = std::max(m_sentEnd, m_txPsn);
    ArmTimer();
    if (m_lines.bytes != 0) [[unlikely]]
    {
        return Build(h, payload, data, m_lines.Pad(payload));
    }
    return Build(h, payload, data);
}

void
RcQp::Receive(Ptr<Packet> packet, const TransportHeader& h, uint32_t payloadBytes)
{
    if (m_error)
    {
        return; // a QP in the error state neither sends nor takes packets
    }
    if (IsAck(h.opcode))
    {
        HandleAck(h);
    }
    else if (IsReadResponse(h.opcode))
    {
        HandleReadResponse(packet, h, payloadBytes);
    }
    else // a SEND or WRITE (in lines: their flags off), or a READ request (no payload)
    {
        if (m_lines.bytes != 0) [[unlikely]]
        {
            payloadBytes = m_lines.Data(payloadBytes);
        }
        m_responder.Receive(packet, h, payloadBytes);
    }
}

void
RcQp::HandleAck(const TransportHeader& h)
{
    const bool nak = (h.flags & (TransportHeader::FLAG_NAK | TransportHeader::FLAG_RNR)) != 0;
    // an ACK names the last PSN it acknowledges, a NAK the PSN the responder expects
    const uint32_t limit = nak ? h.psn : h.psn + 1;
    Acknowledge(limit);
    if ((h.intHandle & FabricHeader::INT_ECHO) != 0)
    {
        m_nic->IntAck(this, h.intHandle & ~FabricHeader::INT_ECHO, limit, m_sentEnd);
        if (m_windowShut) // the arbiter skipped it for its window: it may have opened
        {
            m_windowShut = false;
            m_nic->Kick(m_qpn);
        }
    }
    if (m_una < limit)
    {
        CheckImpliedNak(limit); // the responder is past a READ whose responses were lost
        return;
    }
    if (!nak || h.psn < m_una)
    {
        return; // progress, or a stale NAK from before it
    }
    if (h.flags & TransportHeader::FLAG_RNR)
    {
        m_counters.rnrNaksReceived++;
        if (m_rnrRetry < 7 && !UseRetry(m_rnrRetries, m_rnrRetry))
        {
            return;
        }
        NS_LOG_INFO("RNR NAK at PSN " << h.psn << ", retry in " << m_rnrDelay.As(Time::US));
        m_rnrUntil = mcsim::Now() + m_rnrDelay;
        mcsim::Post(m_rnrDelay,
                    Ptr<EventImpl>(MakeEvent(&Nic::Kick, m_nic, m_qpn), false),
                    m_timerSource);
        GoBack(m_una);
        return;
    }
    m_counters.naksReceived++;
    Retry();
}

void
RcQp::HandleReadResponse(Ptr<Packet> packet, const TransportHeader& h, uint32_t payload)
{
    Acknowledge(h.psn); // a response acknowledges every request before it
    if (h.psn < m_una)
    {
        m_counters.duplicates++; // a late copy of a response already taken
        return;
    }
    if (h.psn > m_una)
    {
        m_counters.outOfSequence++; // discarded: the requester takes responses in PSN order
        CheckImpliedNak(h.psn);
        return;
    }
    Wqe& w = m_sq.front(); // m_una == h.psn < m_nextPsn: the head holds the PSN
    if (w.verb != Verb::READ)
    {
        m_counters.duplicates++; // a stale response naming a PSN of a SEND or WRITE
        return;
    }
    if (m_nic->HasMemory())
    {
        const uint64_t offset =
            w.localOffset + static_cast<uint64_t>(h.psn - w.firstPsn) * m_nic->GetMtuBytes();
        m_nic->StorePayload(packet, payload, offset);
    }
    m_counters.rxPayload += payload;
    m_una = h.psn + 1;
    Acknowledge(m_una); // completes the READ with its last response
    Progress();
}

void
RcQp::Acknowledge(uint32_t limit)
{
    const uint32_t before = m_una;
    while (!m_sq.empty())
    {
        Wqe& w = m_sq.front();
        const uint32_t end = w.firstPsn + w.npkts;
        if (w.verb != Verb::READ && limit > m_una)
        {
            m_una = std::min(limit, end);
        }
        if (m_una < end)
        {
            break; // a READ is acknowledged only by its own responses
        }
        if (w.verb == Verb::READ)
        {
            m_outstandingReads--;
        }
        const uint64_t wrId = w.wrId;
        m_sq.pop_front();
        m_counters.completed++;
        CompleteSend(wrId, true);
    }
    if (m_una != before)
    {
        Progress();
    }
}

void
RcQp::Progress()
{
    m_retries = 0;
    m_rnrRetries = 0;
    m_txPsn = std::max(m_txPsn, m_una);
    m_progressAt = mcsim::Now();
    if (m_una >= m_sentEnd)
    {
        m_timer.Cancel(); // nothing outstanding
    }
    else
    {
        ArmTimer();
    }
    m_nic->Kick(m_qpn); // a READ slot may have freed up
}

void
RcQp::CheckImpliedNak(uint32_t limit)
{
    if (limit > m_una && limit <= m_sentEnd)
    {
        m_counters.readGaps += m_retriedAt != m_una + 1;
        Retry();
    }
}

void
RcQp::Retry()
{
    if (m_retriedAt == m_una + 1)
    {
        return; // sent back to this PSN already: the rest of the old stream tells nothing new
    }
    m_retriedAt = m_una + 1;
    NS_LOG_INFO("NAK or missing READ responses, back to PSN " << m_una);
    if (UseRetry(m_retries, m_retryCount))
    {
        GoBack(m_una);
    }
}

bool
RcQp::UseRetry(uint32_t& used, uint32_t limit)
{
    if (limit == RETRY_FOREVER)
    {
        return true;
    }
    if (++used > limit)
    {
        NS_LOG_INFO(limit << " retries exhausted at PSN " << m_una << ", error state");
        m_error = true;
        m_counters.errors++;
        m_nic->CountRcError();
        m_timer.Cancel();
        return false;
    }
    return true;
}

void
RcQp::GoBack(uint32_t psn)
{
    if (psn < m_txPsn)
    {
        m_txPsn = std::max(psn, m_una);
    }
    m_nic->Kick(m_qpn);
}

void
RcQp::ArmTimer()
{
    if (!m_timer.IsPending() && m_una < m_sentEnd && !m_timeout.IsZero() && !m_error)
    {
        m_timer.Schedule(m_progressAt + m_timeout - mcsim::Now());
    }
}

void
RcQp::OnTimeout()
{
    if (m_una >= m_sentEnd)
    {
        return;
    }
    if (mcsim::Now() < m_progressAt + m_timeout)
    {
        ArmTimer(); // progress since this timer was set: wait for the rest of the period
        return;
    }
    m_counters.timeouts++;
    m_nic->CountRcTimeout();
    NS_LOG_INFO("local ACK timeout, back to PSN " << m_una);
    if (!UseRetry(m_retries, m_retryCount))
    {
        return;
    }
    m_retriedAt = 0; // nothing of the old stream is still in flight: a new gap may be told again
    m_progressAt = mcsim::Now();
    GoBack(m_una);
    ArmTimer();
}

void
RcQp::OnReceiveProcessed(const Completion& c)
{
    if (m_owner != nullptr)
    {
        m_owner->OnReceive(m_nic->GetHostId(), c);
    }
}

const RcQp::Counters&
RcQp::GetCounters() const
{
    return m_counters;
}

bool
RcQp::GetPeer(uint32_t& host, uint32_t& qpn) const
{
    host = m_remoteHost;
    qpn = m_remoteQpn;
    return true;
}

} // namespace mcsim
} // namespace ns3
