// SPDX-License-Identifier: GPL-2.0-only
#include "port.h"

#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/log.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/invariant.h"
#include "ns3/mcsim/line-time.h"
#include "ns3/mcsim/reusable-event.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace ns3
{
namespace mcsim
{

NS_LOG_COMPONENT_DEFINE("McsimPort");
NS_OBJECT_ENSURE_REGISTERED(Port);

Ptr<const AttributeChecker>
MakeFlowControlChecker()
{
    return MakeEnumChecker(FlowControl::LOSSLESS,
                           "Lossless",
                           FlowControl::LOSSY,
                           "Lossy",
                           FlowControl::PFC,
                           "Pfc");
}

TypeId
Port::GetTypeId()
{
    static TypeId tid =
        AddPfcAttributes(
            TypeId("ns3::mcsim::Port")
                .SetParent<Object>()
                .SetGroupName("Mcsim")
                .AddConstructor<Port>()
                .AddAttribute("DataRate",
                              "Signalling rate of the link in bit/s, before line encoding.",
                              DataRateValue(DataRate("56Gbps")),
                              MakeDataRateAccessor(&Port::SetLine<DataRate, &Port::m_rate>,
                                                   &Port::GetLine<DataRate, &Port::m_rate>),
                              MakeDataRateChecker())
                .AddAttribute(
                    "EncodingDataBits",
                    "Data bits per line code word (64 for 64b/66b; 1 and 1 for none).",
                    UintegerValue(1),
                    MakeUintegerAccessor(&Port::SetLine<uint32_t, &Port::m_encodingDataBits>,
                                         &Port::GetLine<uint32_t, &Port::m_encodingDataBits>),
                    MakeUintegerChecker<uint32_t>(1))
                .AddAttribute(
                    "EncodingLineBits",
                    "Line bits per code word (66 for 64b/66b); >= EncodingDataBits.",
                    UintegerValue(1),
                    MakeUintegerAccessor(&Port::SetLine<uint32_t, &Port::m_encodingLineBits>,
                                         &Port::GetLine<uint32_t, &Port::m_encodingLineBits>),
                    MakeUintegerChecker<uint32_t>(1))
                .AddAttribute("HeaderBytes",
                              "Bytes each packet occupies on the wire beyond its size, in bytes.",
                              UintegerValue(DEFAULT_HEADER_BYTES),
                              MakeUintegerAccessor(&Port::SetLine<uint32_t, &Port::m_headerBytes>,
                                                   &Port::GetLine<uint32_t, &Port::m_headerBytes>),
                              MakeUintegerChecker<uint32_t>())
                .AddAttribute(
                    "Delay",
                    "Propagation delay of the link, from last bit sent to last bit received.",
                    TimeValue(NanoSeconds(100)),
                    MakeTimeAccessor(&Port::m_delay),
                    MakeTimeChecker(Time(0)))
                .AddAttribute("FlowControl",
                              "LOSSLESS: credit-based, never drops; LOSSY: tail drop at "
                              "BufferBytes; PFC: the "
                              "peer pauses this port when its ingress queue passes PfcXoffBytes.",
                              EnumValue(FlowControl::LOSSLESS),
                              MakeEnumAccessor<FlowControl>(&Port::m_mode),
                              MakeFlowControlChecker())
                .AddAttribute(
                    "BufferBytes",
                    "Output buffer in bytes (LOSSY: a packet that does not fit is dropped; "
                    "PFC: the ingress buffer, and the lossy class's share of the output).",
                    UintegerValue(DEFAULT_BUFFER_BYTES),
                    MakeUintegerAccessor(&Port::m_bufferBytes),
                    MakeUintegerChecker<uint64_t>(1))
                .AddAttribute(
                    "CreditBytes",
                    "The peer's ingress buffer for this link in bytes (LOSSLESS credits).",
                    UintegerValue(DEFAULT_BUFFER_BYTES),
                    MakeUintegerAccessor(&Port::m_creditBytes),
                    MakeUintegerChecker<uint64_t>(1))
                .AddAttribute(
                    "LossProbability",
                    "Probability in [0, 1) that a packet sent on this port is lost on the "
                    "wire (it occupies the link, then is discarded at its arrival).",
                    DoubleValue(0.0),
                    MakeDoubleAccessor(&Port::SetLossProbability, &Port::GetLossProbability),
                    MakeDoubleChecker<double>(0.0, std::nextafter(1.0, 0.0))))
            .AddAttribute("EcnKminBytes",
                          "ECN: output queue bytes at and below which RED marks nothing (0: 5 KB "
                          "at 40 Gbit/s, scaled with the data rate).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&Port::SetEcnField<uint64_t, &EcnState::kminConfig>,
                                               &Port::GetEcnField<uint64_t, &EcnState::kminConfig>),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("EcnKmaxBytes",
                          "ECN: output queue bytes at and above which RED marks every packet (0: "
                          "200 KB at 40 Gbit/s, scaled with the data rate).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&Port::SetEcnField<uint64_t, &EcnState::kmaxConfig>,
                                               &Port::GetEcnField<uint64_t, &EcnState::kmaxConfig>),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("EcnPmax",
                          "ECN: RED's marking probability just below EcnKmaxBytes.",
                          DoubleValue(ecn::DEFAULT_PMAX),
                          MakeDoubleAccessor(&Port::SetEcnField<double, &EcnState::pmax>,
                                             &Port::GetEcnField<double, &EcnState::pmax>),
                          MakeDoubleChecker<double>(0.0, 1.0))
            .AddTraceSource("Tx",
                            "A packet was committed to the wire (its last bit leaves at the port's "
                            "busy-until time).",
                            MakeTraceSourceAccessor(&Port::m_txTrace),
                            "ns3::mcsim::Port::PacketTracedCallback")
            .AddTraceSource("Rx",
                            "A packet arrived at the far end of the link and went to the peer.",
                            MakeTraceSourceAccessor(&Port::m_rxTrace),
                            "ns3::mcsim::Port::PacketTracedCallback")
            .AddTraceSource(
                "Drop",
                "A packet was tail-dropped (LOSSY, or PFC's lossy class) or lost on the wire, with "
                "its cause.",
                MakeTraceSourceAccessor(&Port::m_dropTrace),
                "ns3::mcsim::Port::DropTracedCallback");
    return tid;
}

Port::Port()
    : m_peer(nullptr),
      m_peerPort(0),
      m_mode(FlowControl::LOSSLESS),
      m_headerBytes(DEFAULT_HEADER_BYTES),
      m_cutThroughBytes(0),
      m_faulty(false),
      m_txCacheBytes{NO_TX_CACHE, NO_TX_CACHE},
      m_arrivalImpl(this),
      m_arrivalEvent(&m_arrivalImpl),
      m_arrivalSource(EventClass::ARRIVAL),
      m_handoverWaker(nullptr),
      m_handoverIndex(0),
      m_txTrace(&m_traced, TRACED_TX),
      m_rxTrace(&m_traced, TRACED_RX),
      m_node(0),
      m_index(0),
      m_encodingDataBits(1),
      m_encodingLineBits(1),
      m_bufferBytes(DEFAULT_BUFFER_BYTES),
      m_creditBytes(DEFAULT_BUFFER_BYTES),
      m_creditEvent(Create<ReusableEvent<Port, &Port::CreditEvent>>(this)),
      m_creditSource(EventClass::TRANSMIT),
      m_pfc(this, &m_queue, &m_pfcTxTrace, &m_pfcRxTrace)
{
}

Port::~Port() = default;

void
Port::DoDispose()
{
    m_queue.Clear();
    m_peer = nullptr;
    m_creditEvent = nullptr;
    m_arrivalEvent = nullptr;
    m_pfc.Dispose();
    m_faults.Dispose();
    Object::DoDispose();
}

void
Port::SetFlowControl(FlowControl mode)
{
    m_mode = mode;
}

void
Port::SetLocation(uint32_t node, uint32_t port)
{
    m_node = node;
    m_index = port;
    if (port >= pfc::UNIT)
    {
        throw std::invalid_argument("Port: node " + std::to_string(node) + " has more than " +
                                    std::to_string(pfc::UNIT) + " ports");
    }
    m_arrivalSource.Place(node, port);
    m_creditSource.Place(node, port);
    m_pfc.Place(node, port);
}

void
Port::SetReverse(Port* reverse)
{
    m_pfc.SetReverse(reverse != nullptr ? &reverse->m_pfc : nullptr);
}

void
Port::SetCutThroughBytes(uint32_t bytes)
{
    m_cutThroughBytes = bytes;
}

void
Port::SetBufferBytes(uint64_t bytes)
{
    m_bufferBytes = bytes;
}

void
Port::SetCreditBytes(uint64_t bytes)
{
    m_creditBytes = bytes;
    m_credit.Reset(bytes);
}

void
Port::Connect(PacketReceiver* peer, uint32_t peerPort)
{
    if (peer == nullptr)
    {
        throw std::invalid_argument("Port::Connect: peer must not be null");
    }
    if (m_encodingLineBits < m_encodingDataBits)
    {
        throw std::invalid_argument(
            "Port: EncodingLineBits=" + std::to_string(m_encodingLineBits) +
            " must be >= EncodingDataBits=" + std::to_string(m_encodingDataBits));
    }
    if (m_rate.GetBitRate() == 0)
    {
        throw std::invalid_argument("Port: DataRate must be > 0 bit/s");
    }
    if (m_mode == FlowControl::PFC)
    {
        m_pfc.Connect(m_bufferBytes,
                      m_delay,
                      m_headerBytes,
                      GetDataRateBps(),
                      GetTxTime(pfc::FRAME_BYTES));
    }
    if (m_ecn.mark)
    {
        const auto scaled = [this](uint64_t atReference) {
            return static_cast<uint64_t>(
                (static_cast<unsigned __int128>(atReference) * GetDataRateBps() +
                 ecn::REFERENCE_BPS - 1) /
                ecn::REFERENCE_BPS);
        };
        m_ecn.kmin =
            m_ecn.kminConfig != 0 ? m_ecn.kminConfig : scaled(ecn::KMIN_BYTES_AT_REFERENCE);
        m_ecn.kmax =
            m_ecn.kmaxConfig != 0 ? m_ecn.kmaxConfig : scaled(ecn::KMAX_BYTES_AT_REFERENCE);
        if (m_ecn.kmin > m_ecn.kmax)
        {
            throw std::invalid_argument("Port: EcnKminBytes=" + std::to_string(m_ecn.kmin) +
                                        " must be <= EcnKmaxBytes=" + std::to_string(m_ecn.kmax));
        }
    }
    m_peer = peer;
    m_peerPort = peerPort;
    m_headTime =
        LineTime(m_cutThroughBytes, m_rate.GetBitRate(), m_encodingDataBits, m_encodingLineBits);
    m_credit.Reset(m_creditBytes);
}

Time
Port::GetTxTime(uint64_t packetBytes) const
{
    // the setters of the attributes it depends on drop the cached times
    if (packetBytes == m_txCacheBytes[0])
    {
        return m_txCacheTime[0];
    }
    if (packetBytes == m_txCacheBytes[1])
    {
        std::swap(m_txCacheBytes[0], m_txCacheBytes[1]);
        std::swap(m_txCacheTime[0], m_txCacheTime[1]);
        return m_txCacheTime[0];
    }
    const Time t = LineTime(packetBytes + m_headerBytes,
                            m_rate.GetBitRate(),
                            m_encodingDataBits,
                            m_encodingLineBits);
    m_txCacheBytes[1] = m_txCacheBytes[0];
    m_txCacheTime[1] = m_txCacheTime[0];
    m_txCacheBytes[0] = packetBytes;
    m_txCacheTime[0] = t;
    return t;
}

uint32_t
Port::GetWireBytes(uint32_t packetBytes) const
{
    return packetBytes + m_headerBytes;
}

uint64_t
Port::GetDataRateBps() const
{
    return static_cast<uint64_t>(static_cast<unsigned __int128>(m_rate.GetBitRate()) *
                                 m_encodingDataBits / m_encodingLineBits);
}

Time
Port::GetDelay() const
{
    return m_delay;
}

Time
Port::GetBusyUntil() const
{
    return m_busyUntil;
}

const Port::Counters&
Port::GetCounters() const
{
    return m_counters;
}

Time
Port::SendFields(const Ptr<Packet>& packet,
                 const FabricHeader::Fields& fields,
                 Time earliest,
                 CreditReturn credit,
                 PortWaker* waker)
{
    MCSIM_ASSERT(m_peer != nullptr, "Port::Send on an unconnected port");
    const uint32_t wire = GetWireBytes(packet->GetSize());
    const Time now = mcsim::Now();
    if (m_mode == FlowControl::LOSSY)
    {
        if (TailDrops(packet, fields, wire, m_queue.QueuedBytes(now, m_delay)))
        {
            return Time(-1);
        }
        return Commit(OwnedPacket(packet), fields, earliest, credit, now);
    }
    if (m_mode == FlowControl::PFC)
    {
        return SendPfc(packet, fields, earliest, credit, waker, wire, now);
    }
    Time ready;
    if (!m_queue.HasWaiting() && m_credit.Take(wire, now, m_delay, ready))
    {
        return Commit(OwnedPacket(packet), fields, CreditReady(earliest, ready, now), credit, now);
    }
    const bool head = !m_queue.HasWaiting();
    const uint64_t occupancy =
        m_queue.PushWaiting({OwnedPacket(packet), fields, earliest, credit, waker},
                            wire,
                            now,
                            m_delay,
                            false);
    m_counters.creditStalls++;
    m_counters.maxQueueBytes = std::max(m_counters.maxQueueBytes, occupancy);
    if (head)
    {
        // behind an earlier head, nothing changes: whatever tells the head (a credit event, an
        // arrival, or the next ReturnCredit) is in place already
        ScheduleCreditEvent();
    }
    return Time(-1);
}

bool
Port::TailDrops(const Ptr<Packet>& packet,
                const FabricHeader::Fields& fields,
                uint32_t wire,
                uint64_t queued)
{
    if (queued + wire <= m_bufferBytes)
    {
        return false;
    }
    m_counters.dropPackets++;
    m_counters.dropBytes += wire;
    NS_LOG_INFO("node " << m_node << " port " << m_index << ": tail drop of " << wire
                        << " B (buffer " << m_bufferBytes << " B full)");
    if (!m_dropTrace.IsEmpty())
    {
        m_dropTrace(packet, fields, m_node, m_index, DropCause::TAIL);
    }
    return true;
}

Time
Port::Commit(OwnedPacket packet,
             const FabricHeader::Fields& fields,
             Time earliest,
             CreditReturn credit,
             Time now)
{
    const uint32_t size = packet.Get()->GetSize();
    const uint32_t wire = GetWireBytes(size);
    const Time tx = GetTxTime(size);
    const Time start = std::max(earliest, std::max(now, m_busyUntil)); // (no copies of Time)
    m_busyUntil = start + tx;
    if (m_mode == FlowControl::PFC)
    {
        m_pfc.Started(start);
    }
    m_counters.txPackets++;
    m_counters.txBytes += size;
    m_counters.txWireBytes += wire;
    m_counters.busyPs += static_cast<uint64_t>(tx.GetTimeStep()); // a time step is a ps
    if ((m_traced & TRACED_TX) != 0)
    {
        m_txTrace(Ptr<const Packet>(packet.Get()), fields, m_node, m_index);
    }
    const Time arrival = m_busyUntil + m_delay;
    // a cut-through peer takes it once its first m_cutThroughBytes have arrived
    const Time handover =
        m_cutThroughBytes == 0 ? arrival : std::min(start + m_headTime + m_delay, arrival);
    const uint64_t occupancy =
        m_queue.Commit({handover, arrival, std::move(packet), fields, nullptr, wire}, now, m_delay);
    m_counters.maxQueueBytes = std::max(m_counters.maxQueueBytes, occupancy);
    if (m_intPush && fields.GetInt() != 0)
    {
        IntPush(fields, start, earliest, wire);
    }
    if (m_queue.InFlightCount() == 1)
    {
        mcsim::Post(handover - now, m_arrivalEvent, m_arrivalSource);
    }
    if (credit.to != nullptr)
    {
        ReturnCreditFor(credit.to, m_busyUntil, credit.to->GetWireBytes(size), start);
    }
    else if (credit.shared != nullptr)
    {
        SharedCredit* s = credit.shared;
        if (m_busyUntil >= s->latest)
        {
            s->latest = m_busyUntil;
            s->latestPort = this;
        }
        s->latestStart = std::max(s->latestStart, start);
        if (--s->copiesLeft == 0)
        {
            s->latestPort->ReturnCreditFor(s->to, s->latest, s->wireBytes, s->latestStart);
            delete s;
        }
    }
    return m_busyUntil;
}

bool
Port::WakeAtHandover(PortWaker* waker)
{
    MCSIM_ASSERT(m_handoverWaker == nullptr, "Port::WakeAtHandover: one registration at a time");
    if (!m_queue.HasInFlight() || m_queue.LastHandover() > m_busyUntil)
    {
        return false;
    }
    m_handoverWaker = waker;
    m_handoverIndex = m_counters.txPackets - 1;
    return true;
}

void
Port::Arrive()
{
    MCSIM_ASSERT(m_queue.HasInFlight(), "Port::Arrive with nothing in flight");
    PortQueue::InFlight head = m_queue.PopArrival();
    const Time now = head.handover; // this event runs at the head's handover
    const Ptr<Packet> packet = head.packet.Release();
    if (m_queue.HasInFlight())
    {
        mcsim::Post(m_queue.FirstHandover() - now, m_arrivalEvent, m_arrivalSource);
    }
    // packets arrive in the order they were committed: this one is the index-th
    const uint64_t index = m_counters.txPackets - m_queue.InFlightCount() - 1;
    PortWaker* waker = nullptr; // told once the peer has the packet (WakeAtHandover)
    if (m_handoverWaker != nullptr && index == m_handoverIndex)
    {
        waker = m_handoverWaker;
        m_handoverWaker = nullptr;
    }
    if (head.creditDue != nullptr)
    {
        head.creditDue->CreditDue();
    }
    if (!(m_faulty && LoseAtArrival(packet, head.fields, head.arrival, index)) &&
        (m_mode != FlowControl::PFC || head.fields.IsLossy() ||
         m_pfc.Reverse()->IngressAdmit(head.wireBytes)))
    {
        if ((m_traced & TRACED_RX) != 0)
        {
            m_rxTrace(packet, head.fields, m_node, m_index);
        }
        m_peer->Receive(packet, head.fields, m_peerPort);
    }
    if (waker != nullptr)
    {
        waker->HandedOver();
    }
}

bool
Port::LoseAtArrival(const Ptr<Packet>& packet,
                    const FabricHeader::Fields& fields,
                    Time arrival,
                    uint64_t index)
{
    const DropCause cause = m_faults.Decide(index, arrival);
    if (cause == DropCause::NONE)
    {
        return false;
    }
    uint64_t& counter = cause == DropCause::LINK_DOWN ? m_counters.linkDownDrops
                        : cause == DropCause::CHOSEN  ? m_counters.chosenDrops
                                                      : m_counters.lossPackets;
    counter++;
    NS_LOG_INFO("node " << m_node << " port " << m_index << ": packet " << index
                        << " lost on the wire (" << DropCauseName(cause) << ")");
    if (!m_dropTrace.IsEmpty())
    {
        m_dropTrace(packet, fields, m_node, m_index, cause);
    }
    // the peer would have freed its ingress buffer at once: its credit comes back (LOSSLESS; a
    // PFC ingress never took it)
    if (m_mode == FlowControl::LOSSLESS)
    {
        ReturnCredit(arrival + m_delay, GetWireBytes(packet->GetSize()));
    }
    return true;
}

} // namespace mcsim
} // namespace ns3
