// SPDX-License-Identifier: GPL-2.0-only
#include "ud-qp.h"

#include "nic.h"

#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/fabric-header.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ns3
{
namespace mcsim
{

NS_LOG_COMPONENT_DEFINE("McsimUdQp");
NS_OBJECT_ENSURE_REGISTERED(UdQp);

TypeId
UdQp::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::mcsim::UdQp")
            .SetParent<QueuePair>()
            .SetGroupName("Mcsim")
            .AddConstructor<UdQp>()
            .AddAttribute("RqDepth",
                          "Receive buffers posted (the receive queue depth), in buffers.",
                          UintegerValue(128),
                          MakeUintegerAccessor(&UdQp::m_rqDepth),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("Staging",
                          "Datagrams land in staging buffers and are copied to their place by "
                          "the completion processor (else zero copy).",
                          BooleanValue(true),
                          MakeBooleanAccessor(&UdQp::m_staging),
                          MakeBooleanChecker())
            .AddAttribute(
                "LossyClass",
                "Its datagrams to hosts and groups go in PFC's lossy traffic class (a PFC "
                "fabric only; fabric.md, \"Traffic classes\"): never paused, tail-dropped. "
                "Contributions to an in-network reduction stay lossless.",
                BooleanValue(false),
                MakeBooleanAccessor(&UdQp::m_lossyClass),
                MakeBooleanChecker());
    return tid;
}

UdQp::UdQp()
    : m_posted(0),
      m_started(false)
{
}

UdQp::~UdQp() = default;

void
UdQp::PostSend(uint32_t dst,
               uint32_t dstQpn,
               uint32_t bytes,
               uint64_t wrId,
               bool withImm,
               uint32_t imm,
               int64_t localOffset,
               bool signalled)
{
    CheckPost(bytes);
    m_sq.push_back({dst,
                    dstQpn,
                    bytes,
                    wrId,
                    withImm,
                    imm,
                    localOffset,
                    m_nic->Doorbell(m_qpn),
                    0,
                    0,
                    signalled});
}

void
UdQp::PostContribution(uint32_t tree,
                       uint32_t seq,
                       uint32_t resultDst,
                       uint32_t resultQpn,
                       uint32_t bytes,
                       uint64_t wrId,
                       uint32_t imm,
                       int64_t localOffset)
{
    CheckPost(bytes);
    m_sq.push_back({tree | FabricHeader::AGGREGATE_FLAG,
                    resultQpn,
                    bytes,
                    wrId,
                    true,
                    imm,
                    localOffset,
                    m_nic->Doorbell(m_qpn),
                    resultDst,
                    seq,
                    true});
}

void
UdQp::CheckPost(uint32_t bytes) const
{
    if (m_nic == nullptr)
    {
        throw std::invalid_argument("UdQp: post on a QP not added to a NIC");
    }
    if (bytes == 0 || bytes > m_nic->GetMtuBytes())
    {
        throw std::invalid_argument("UdQp " + std::to_string(m_qpn) + ": a datagram of " +
                                    std::to_string(bytes) + " bytes; it must be 1.." +
                                    std::to_string(m_nic->GetMtuBytes()) + " (the MTU)");
    }
}

bool
UdQp::HasPacket() const
{
    return !m_sq.empty() && m_sq.front().visible <= mcsim::Now();
}

bool
UdQp::HasWork() const
{
    return !m_sq.empty();
}

OutgoingPacket
UdQp::NextPacket()
{
    const Datagram d = m_sq.front();
    m_sq.pop_front();
    TransportHeader h;
    h.opcode = d.withImm ? Opcode::UD_SEND_ONLY_IMM : Opcode::UD_SEND_ONLY;
    h.dst = d.dst;
    h.dstQpn = static_cast<uint16_t>(d.dstQpn);
    const bool contribution = FabricHeader::IsAggregateDestination(d.dst);
    h.flow = contribution ? d.resultDst : m_qpn; // a contribution's flow: where its sum goes
    h.psn = contribution ? d.seq : static_cast<uint32_t>(m_counters.txPackets);
    h.imm = d.imm;
    m_counters.txPackets++;
    m_counters.txPayload += d.bytes;
    const uint8_t* data = d.localOffset >= 0 && m_nic->HasMemory()
                              ? m_nic->Memory(static_cast<uint64_t>(d.localOffset), d.bytes)
                              : nullptr;
    OutgoingPacket p = m_nic->MakePacket(h, d.bytes, data);
    if (m_lossyClass)
    {
        p.fields.SetLossy();
    }
    CompleteSend(d.wrId, d.signalled); // a UD send completes when it leaves
    return p;
}

void
UdQp::Receive(Ptr<Packet> packet, const TransportHeader& h, uint32_t payloadBytes)
{
    if (!m_started)
    {
        m_started = true;
        m_posted = m_rqDepth;
        m_counters.minPosted = m_rqDepth;
    }
    if (m_posted == 0)
    {
        m_counters.overruns++;
        NS_LOG_INFO("host " << m_nic->GetHostId() << " QP " << m_qpn
                            << ": no receive buffer posted, datagram dropped");
        return;
    }
    m_posted--;
    m_counters.minPosted = std::min<uint64_t>(m_counters.minPosted, m_posted);
    m_counters.rxPackets++;
    m_counters.rxPayload += payloadBytes;
    Completion c;
    c.qpn = m_qpn;
    c.srcHost = h.srcHost;
    c.bytes = payloadBytes;
    c.imm = h.imm;
    c.hasImm = HasImm(h.opcode);
    c.staged = m_staging;
    c.opcode = h.opcode;
    if (m_nic->HasMemory())
    {
        c.packet = packet;
    }
    m_nic->Complete(c, this);
}

void
UdQp::OnReceiveProcessed(const Completion& c)
{
    m_posted++; // the buffer is posted again only now
    m_counters.processed++;
    if (m_owner != nullptr)
    {
        m_owner->OnReceive(m_nic->GetHostId(), c);
    }
}

bool
UdQp::ReceiveDeferrable(const Completion& c, const QueuedAhead& ahead) const
{
    return m_owner == nullptr || m_owner->Deferrable(m_nic->GetHostId(), c, ahead);
}

uint32_t
UdQp::GetPostedRecvs() const
{
    return m_started ? m_posted : m_rqDepth;
}

const UdQp::Counters&
UdQp::GetCounters() const
{
    return m_counters;
}

} // namespace mcsim
} // namespace ns3
