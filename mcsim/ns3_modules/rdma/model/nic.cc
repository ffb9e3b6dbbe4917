// SPDX-License-Identifier: GPL-2.0-only
#include "nic.h"

#include "ns3/boolean.h"
#include "ns3/enum.h"
#include "ns3/log.h"
#include "ns3/make-event.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/fabric-header.h"
#include "ns3/mcsim/reusable-event.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

namespace ns3
{
namespace mcsim
{

NS_LOG_COMPONENT_DEFINE("McsimNic");
NS_OBJECT_ENSURE_REGISTERED(Nic);

TypeId
Nic::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::mcsim::Nic")
            .SetParent<Object>()
            .SetGroupName("Mcsim")
            .AddConstructor<Nic>()
            .AddAttribute(
                "WireFormat",
                "Encapsulation whose real header sizes every packet has on the wire.",
                EnumValue(WireFormat::INFINIBAND),
                MakeEnumAccessor<WireFormat>(&Nic::m_format),
                MakeEnumChecker(WireFormat::INFINIBAND, "InfiniBand", WireFormat::ROCEV2, "RoCEv2"))
            .AddAttribute("MtuBytes",
                          "Payload bytes per packet (the path MTU), in bytes.",
                          UintegerValue(4096),
                          MakeUintegerAccessor(&Nic::m_mtu),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("SendLatency",
                          "From a work request's post (the doorbell) to the earliest start of its "
                          "first byte on the wire: WQE fetch and payload DMA read over PCIe.",
                          TimeValue(NanoSeconds(300)),
                          MakeTimeAccessor(&Nic::m_sendLatency),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("ReceiveLatency",
                          "From a packet's last byte in to its receive completion reaching the "
                          "completion processor: payload and CQE DMA writes over PCIe.",
                          TimeValue(NanoSeconds(300)),
                          MakeTimeAccessor(&Nic::m_receiveLatency),
                          MakeTimeChecker(Time(0)))
            .AddTraceSource(
                "Tx",
                "A QP's packet went to the host's port (its header: TransportHeader::FromFields).",
                MakeTraceSourceAccessor(&Nic::m_txTrace),
                "ns3::mcsim::Nic::PacketTracedCallback")
            .AddTraceSource(
                "Rx",
                "A packet arrived for this NIC (qpn >= GetNQps(): no such QP, dropped).",
                MakeTraceSourceAccessor(&Nic::m_rxTrace),
                "ns3::mcsim::Nic::PacketTracedCallback")
            .AddAttribute("PickAtHandover",
                          "The arbiter picks its next packet when the current one has left "
                          "(false), or already when the next hop has been handed the current one "
                          "if that is earlier (true: a cut-through switch takes a packet once its "
                          "header is in; a pipelined send engine, and no event per packet sent).",
                          BooleanValue(false),
                          MakeBooleanAccessor(&Nic::m_pickAtHandover),
                          MakeBooleanChecker())
            .AddAttribute(
                "MulticastLoopback",
                "A multicast datagram this NIC sends also reaches its own QP in the group "
                "(InfiniBand's default; the SC'24 artifact's senders receive and drop "
                "their own chunks): it takes a receive buffer and a completion, when its "
                "last bit has left.",
                BooleanValue(false),
                MakeBooleanAccessor(&Nic::m_loopback),
                MakeBooleanChecker())
            .AddAttribute("SendCompletions",
                          "Who processes send completions: Free (the application hears of each "
                          "at once, at no cost), Separate (a completion processor of their own, "
                          "the SC'24 artifact's TX thread) or Shared (the receive completions' "
                          "processor). A signalled send's CQE reaches it ReceiveLatency later.",
                          EnumValue(SendCompletions::FREE),
                          MakeEnumAccessor<SendCompletions>(&Nic::m_sendCompletions),
                          MakeEnumChecker(SendCompletions::FREE,
                                          "Free",
                                          SendCompletions::SEPARATE,
                                          "Separate",
                                          SendCompletions::SHARED,
                                          "Shared"));
    return tid;
}

Nic::Nic()
    : m_rrNext(0),
      m_sendCompletions(SendCompletions::FREE),
      m_loopback(false),
      m_pickAtHandover(false),
      m_idle(true),
      m_doorbellAt(Time(-1)),
      m_sendEvent(Create<ReusableEvent<Nic, &Nic::TrySend>>(this)),
      m_sendSource(EventClass::TRANSMIT),
      m_blank(Create<BlankPackets>()),
      m_txTrace(&m_traced, TRACED_TX),
      m_rxTrace(&m_traced, TRACED_RX),
      m_loopbackSource(EventClass::ARRIVAL),
      m_pacedEvent(Create<ReusableEvent<Nic, &Nic::PacedWake>>(this))
{
}

Nic::~Nic() = default;

void
Nic::DoDispose()
{
    for (auto& qp : m_qps)
    {
        qp->Dispose();
    }
    m_pacedEvent = nullptr;
    m_qps.clear();
    m_work.clear();
    if (m_host)
    {
        m_host->SetUpperLayer(nullptr);
    }
    m_host = nullptr;
    m_processor = nullptr;
    m_txProcessor = nullptr;
    m_sendEvent = nullptr;
    m_blank = nullptr;
    Object::DoDispose();
}

void
Nic::Attach(Ptr<Host> host,
            Ptr<CompletionProcessor> processor,
            Ptr<CompletionProcessor> txProcessor)
{
    if (!host || !processor)
    {
        throw std::invalid_argument("Nic::Attach: host and completion processor are required");
    }
    if (!txProcessor != (m_sendCompletions != SendCompletions::SEPARATE))
    {
        throw std::invalid_argument("Nic::Attach: a send completion processor is required with "
                                    "SendCompletions Separate, and only then");
    }
    CheckCongestionControl();
    m_host = host;
    m_intStore = host->GetPort()->GetIntStore();
    m_processor = processor;
    m_txProcessor = m_sendCompletions == SendCompletions::SHARED ? processor : txProcessor;
    host->SetUpperLayer(this);
    const uint32_t node = host->GetId();
    m_sendSource.Place(node, unit::NIC);
    m_loopbackSource.Place(node, unit::NIC);
    processor->Place(node, unit::CPU);
    if (txProcessor)
    {
        txProcessor->Place(node, unit::TX_CPU);
    }
    for (const auto& qp : m_qps) // those added before
    {
        StartCongestionControl(PeekPointer(qp));
    }
}

SendCompletions
Nic::GetSendCompletions() const
{
    return m_sendCompletions;
}

void
Nic::CompleteSend(Completion c, CompletionSink* sink)
{
    m_counters.sendCompletions++;
    c.ready = mcsim::Now() + m_receiveLatency;
    m_txProcessor->Submit(c, sink);
}

uint32_t
Nic::AddQp(Ptr<QueuePair> qp, QpOwner* owner)
{
    if (m_qps.size() >= 0xFFFF)
    {
        throw std::invalid_argument("Nic::AddQp: at most 65535 QPs per NIC");
    }
    const auto qpn = static_cast<uint32_t>(m_qps.size());
    qp->Bind(this, m_host ? m_host->GetId() : 0, qpn, owner);
    m_qps.push_back(qp);
    m_work.resize((m_qps.size() + 63) / 64, 0);
    StartCongestionControl(PeekPointer(qp)); // once attached (Attach: those added before)
    return qpn;
}

Ptr<QueuePair>
Nic::GetQp(uint32_t qpn) const
{
    return m_qps.at(qpn);
}

uint32_t
Nic::GetNQps() const
{
    return static_cast<uint32_t>(m_qps.size());
}

void
Nic::AttachMulticast(uint32_t group, uint32_t qpn)
{
    if (qpn >= m_qps.size() || group >= FabricHeader::GROUP_FLAG)
    {
        throw std::invalid_argument("Nic::AttachMulticast: no QP " + std::to_string(qpn) +
                                    " or group id too large");
    }
    if (group >= m_groupQp.size())
    {
        m_groupQp.resize(group + 1, -1);
    }
    m_groupQp[group] = static_cast<int32_t>(qpn);
}

OutgoingPacket
Nic::MakePacket(TransportHeader& h, uint32_t payloadBytes, const uint8_t* data, uint32_t padBytes)
{
    h.srcHost = m_host->GetId();
    // a contribution to an in-network reduction is as large as the sum it becomes
    const bool contribution = FabricHeader::IsAggregateDestination(h.dst);
    const bool multicast = ((contribution ? h.flow : h.dst) & FabricHeader::GROUP_FLAG) != 0;
    const uint32_t size = payloadBytes + padBytes + WireHeaderBytes(m_format, h.opcode, multicast) +
                          (h.intHandle != 0 ? IntStore::HEADER_BYTES : 0);
    if (data == nullptr)
    {
        return {m_blank->Get(size), h.ToFields(), payloadBytes + padBytes};
    }
    std::vector<uint8_t> bytes(size, 0); // the payload, then the flags and header bytes as padding
    std::copy(data, data + payloadBytes, bytes.begin());
    return {Create<Packet>(bytes.data(), size), h.ToFields(), payloadBytes + padBytes};
}

void
Nic::ShareBlankPackets(Ptr<BlankPackets> blank)
{
    m_blank = blank;
}

void
Nic::EnableMemory(uint64_t bytes)
{
    m_memory.assign(bytes, 0);
}

uint64_t
Nic::GetMemoryBytes() const
{
    return m_memory.size();
}

bool
Nic::HasMemory() const
{
    return !m_memory.empty();
}

void
Nic::WriteMemory(uint64_t offset, const uint8_t* data, std::size_t n)
{
    if (offset > m_memory.size() || n > m_memory.size() - offset)
    {
        throw std::invalid_argument("Nic::WriteMemory: [" + std::to_string(offset) + ", " +
                                    std::to_string(offset + n) + ") is outside the region of " +
                                    std::to_string(m_memory.size()) + " bytes");
    }
    std::copy(data, data + n, m_memory.begin() + static_cast<std::ptrdiff_t>(offset));
}

void
Nic::ReadMemory(uint64_t offset, uint8_t* out, std::size_t n) const
{
    if (offset > m_memory.size() || n > m_memory.size() - offset)
    {
        throw std::invalid_argument("Nic::ReadMemory: [" + std::to_string(offset) + ", " +
                                    std::to_string(offset + n) + ") is outside the region of " +
                                    std::to_string(m_memory.size()) + " bytes");
    }
    std::copy(m_memory.begin() + static_cast<std::ptrdiff_t>(offset),
              m_memory.begin() + static_cast<std::ptrdiff_t>(offset + n),
              out);
}

uint8_t*
Nic::Memory(uint64_t offset, uint64_t n)
{
    if (offset > m_memory.size() || n > m_memory.size() - offset)
    {
        throw std::logic_error("Nic::Memory: [" + std::to_string(offset) + ", " +
                               std::to_string(offset + n) + ") is outside the region of " +
                               std::to_string(m_memory.size()) + " bytes (verify mode)");
    }
    return m_memory.data() + offset;
}

void
Nic::StorePayload(Ptr<const Packet> packet, uint32_t payloadBytes, uint64_t offset)
{
    packet->CopyData(Memory(offset, payloadBytes), payloadBytes);
}

void
Nic::SetWork(uint32_t qpn)
{
    m_work[qpn / 64] |= uint64_t{1} << (qpn % 64);
}

uint32_t
Nic::NextWork(uint32_t from, uint32_t end) const
{
    while (from < end)
    {
        const uint64_t bits = m_work[from / 64] >> (from % 64);
        if (bits != 0)
        {
            return std::min(end, from + static_cast<uint32_t>(std::countr_zero(bits)));
        }
        from = (from / 64 + 1) * 64;
    }
    return end;
}

void
Nic::Kick(uint32_t qpn)
{
    SetWork(qpn);
    if (m_idle)
    {
        m_idle = false;
        mcsim::Post(Time(0), m_sendEvent, m_sendSource);
    }
}

Time
Nic::Doorbell(uint32_t qpn)
{
    SetWork(qpn);
    if (m_sendLatency.IsZero())
    {
        Kick(qpn);
        return mcsim::Now();
    }
    const Time at = mcsim::Now() + m_sendLatency;
    if (at != m_doorbellAt) // posts at one time share one look
    {
        m_doorbellAt = at;
        mcsim::Post(m_sendLatency,
                    Ptr<EventImpl>(MakeEvent(&Nic::Fetched, this), false),
                    m_sendSource);
    }
    return at;
}

void
Nic::Complete(Completion c, CompletionSink* sink)
{
    c.ready = mcsim::Now() + m_receiveLatency;
    m_processor->Submit(c, sink);
}

void
Nic::Fetched()
{
    if (m_idle) // the arbiter looks at once (Kick would schedule it: one event more per post)
    {
        m_idle = false;
        TrySend();
    }
}

uint32_t
Nic::PickQp()
{
    // round robin from m_rrNext: its QPs from there to the last, then from the first; a QP whose
    // work bit is clear has no packet (QueuePair::HasWork), so only those with the bit are asked
    const auto n = static_cast<uint32_t>(m_qps.size());
    const Time now = mcsim::Now();
    m_pacedEarliest = Time::Max();
    for (const auto& [begin, end] : {std::pair{m_rrNext, n}, std::pair{0U, m_rrNext}})
    {
        for (uint32_t q = NextWork(begin, end); q < end; q = NextWork(q + 1, end))
        {
            QueuePair* qp = PeekPointer(m_qps[q]); // (Ptr's operator-> asserts, out of line)
            if (!qp->HasWork())
            {
                m_work[q / 64] &= ~(uint64_t{1} << (q % 64));
            }
            else if (qp->HasPacket())
            {
                if (qp->nextSend > now) // paced: not before its congestion control's rate allows
                {
                    m_pacedEarliest = std::min(m_pacedEarliest, qp->nextSend);
                    continue;
                }
                return q;
            }
        }
    }
    return n;
}

void
Nic::TrySend()
{
    if (SendCnp())
    {
        return;
    }
    const auto n = static_cast<uint32_t>(m_qps.size());
    const uint32_t q = PickQp();
    if (q == n)
    {
        m_idle = true;
        if (m_pacedEarliest != Time::Max())
        {
            PacedWakeAt(m_pacedEarliest);
        }
        return;
    }
    QueuePair* qp = PeekPointer(m_qps[q]);
    m_rrNext = (q + 1) % n;
    const OutgoingPacket out = qp->NextPacket();
    m_counters.txPackets++;
    m_counters.txPayload += out.payloadBytes;
    if ((m_traced & TRACED_TX) != 0)
    {
        m_txTrace(out.packet, out.fields, m_host->GetId(), q);
    }
    const Time departure = m_host->Send(out.packet, out.fields, this);
    Pace(qp, m_host->GetPort()->GetWireBytes(out.packet->GetSize()), out.payloadBytes);
    if (m_loopback && (out.fields.dst & FabricHeader::GROUP_FLAG) != 0)
    {
        const uint32_t g = out.fields.dst & ~FabricHeader::GROUP_FLAG;
        if (g < m_groupQp.size() && m_groupQp[g] >= 0)
        {
            // when its last bit has left (if it waits for credits: one serialization from now)
            const Time now = mcsim::Now();
            const Time left = departure.IsNegative()
                                  ? now + m_host->GetPort()->GetTxTime(out.packet->GetSize())
                                  : departure;
            mcsim::Post(
                left - now,
                Ptr<EventImpl>(MakeEvent(&Nic::Loopback, this, out.packet, out.fields), false),
                m_loopbackSource);
        }
    }
    if (!departure.IsNegative())
    {
        Wake(departure); // it arranges the next pick
    }
}

void
Nic::Loopback(Ptr<Packet> packet, FabricHeader::Fields fields)
{
    const TransportHeader h = TransportHeader::FromFields(fields);
    const uint32_t payload = packet->GetSize() - WireHeaderBytes(m_format, h.opcode, true);
    const auto qpn = static_cast<uint32_t>(m_groupQp[fields.dst & ~FabricHeader::GROUP_FLAG]);
    SetWork(qpn); // a packet in may give the QP work (an ACK, a response, a go-back)
    PeekPointer(m_qps[qpn])->Receive(packet, h, payload);
}

void
Nic::Wake(Time departure)
{
    // the next pick: when this packet has left, or (PickAtHandover) when the next hop has its
    // header if that is earlier: then in the port's arrival event, with no event of its own
    if (!m_pickAtHandover || !m_host->GetPort()->WakeAtHandover(this))
    {
        mcsim::Post(departure - mcsim::Now(), m_sendEvent, m_sendSource);
    }
}

void
Nic::HandedOver()
{
    TrySend();
}

void
Nic::Receive(const Ptr<Packet>& packet, const FabricHeader::Fields& fields, uint32_t inPort)
{
    if (EventLoop* loop = EventLoop::Current())
    {
        loop->CatchUpNode(m_host->GetId()); // the deferred completions before this arrival
    }
    const TransportHeader h = TransportHeader::FromFields(fields);
    const bool multicast = (h.dst & FabricHeader::GROUP_FLAG) != 0;
    const uint32_t payload = packet->GetSize() - WireHeaderBytes(m_format, h.opcode, multicast) -
                             (h.intHandle != 0 ? IntStore::HEADER_BYTES : 0);
    m_counters.rxPackets++;
    m_counters.rxPayload += payload;
    uint32_t qpn = h.dstQpn;
    if (multicast)
    {
        const uint32_t g = h.dst & ~FabricHeader::GROUP_FLAG;
        qpn = g < m_groupQp.size() && m_groupQp[g] >= 0 ? m_groupQp[g] : m_qps.size();
    }
    if ((m_traced & TRACED_RX) != 0)
    {
        m_rxTrace(packet, fields, m_host->GetId(), qpn);
    }
    if (qpn >= m_qps.size())
    {
        m_counters.unknownQp++;
        NS_LOG_INFO("host " << m_host->GetId() << ": packet for no QP (" << qpn << "), dropped");
        return;
    }
    if (m_ccCnps) // its congestion control reacts to CE marks with CNPs (DCQCN)
    {
        if (IsCnp(h.opcode))
        {
            ReactToCnp(h);
            return;
        }
        if (h.ecn == FabricHeader::ECN_CE && !multicast && !IsAck(h.opcode))
        {
            NotifyCongestion(qpn, h);
        }
    }
    SetWork(qpn); // a packet in may give the QP work (an ACK, a response, a go-back)
    PeekPointer(m_qps[qpn])->Receive(packet, h, payload);
}

Ptr<Port>
Nic::GetPort() const
{
    return m_host->GetPort();
}

uint32_t
Nic::GetHostId() const
{
    return m_host->GetId();
}

uint32_t
Nic::GetMtuBytes() const
{
    return m_mtu;
}

WireFormat
Nic::GetWireFormat() const
{
    return m_format;
}

Ptr<CompletionProcessor>
Nic::GetProcessor() const
{
    return m_processor;
}

Ptr<CompletionProcessor>
Nic::GetTxProcessor() const
{
    return m_sendCompletions == SendCompletions::SEPARATE ? m_txProcessor : nullptr;
}

void
Nic::CountRetransmit()
{
    m_counters.retransmits++;
}

void
Nic::CountRcTimeout()
{
    m_counters.rcTimeouts++;
}

void
Nic::CountRcError()
{
    m_counters.rcErrors++;
}

const Nic::Counters&
Nic::GetCounters() const
{
    return m_counters;
}

} // namespace mcsim
} // namespace ns3
