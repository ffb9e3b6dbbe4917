// SPDX-License-Identifier: GPL-2.0-only
#include "port.h"

#include "ns3/double.h"
#include "ns3/enum.h"
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

NS_OBJECT_ENSURE_REGISTERED(Port);

TypeId
Port::GetTypeId()
{
    static TypeId tid =
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
            .AddAttribute("EncodingDataBits",
                          "Data bits per line code word (64 for 64b/66b; 1 and 1 for none).",
                          UintegerValue(1),
                          MakeUintegerAccessor(&Port::SetLine<uint32_t, &Port::m_encodingDataBits>,
                                               &Port::GetLine<uint32_t, &Port::m_encodingDataBits>),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("EncodingLineBits",
                          "Line bits per code word (66 for 64b/66b); >= EncodingDataBits.",
                          UintegerValue(1),
                          MakeUintegerAccessor(&Port::SetLine<uint32_t, &Port::m_encodingLineBits>,
                                               &Port::GetLine<uint32_t, &Port::m_encodingLineBits>),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("HeaderBytes",
                          "Bytes each packet occupies on the wire beyond its size, in bytes.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&Port::SetLine<uint32_t, &Port::m_headerBytes>,
                                               &Port::GetLine<uint32_t, &Port::m_headerBytes>),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("Delay",
                          "Propagation delay of the link, from last bit sent to last bit received.",
                          TimeValue(NanoSeconds(100)),
                          MakeTimeAccessor(&Port::m_delay),
                          MakeTimeChecker(Time(0)))
            .AddAttribute(
                "FlowControl",
                "LOSSLESS: credit-based, never drops; LOSSY: tail drop at BufferBytes.",
                EnumValue(FlowControl::LOSSLESS),
                MakeEnumAccessor<FlowControl>(&Port::m_mode),
                MakeEnumChecker(FlowControl::LOSSLESS, "Lossless", FlowControl::LOSSY, "Lossy"))
            .AddAttribute("BufferBytes",
                          "Output buffer in bytes (LOSSY: a packet that does not fit is dropped).",
                          UintegerValue(DEFAULT_BUFFER_BYTES),
                          MakeUintegerAccessor(&Port::m_bufferBytes),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("CreditBytes",
                          "The peer's ingress buffer for this link in bytes (LOSSLESS credits).",
                          UintegerValue(DEFAULT_BUFFER_BYTES),
                          MakeUintegerAccessor(&Port::m_creditBytes),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("LossProbability",
                          "Probability in [0, 1) that a packet sent on this port is lost on the "
                          "wire (it occupies the link, then is discarded at its arrival).",
                          DoubleValue(0.0),
                          MakeDoubleAccessor(&Port::SetLossProbability, &Port::GetLossProbability),
                          MakeDoubleChecker<double>(0.0, std::nextafter(1.0, 0.0)));
    return tid;
}

Port::Port()
    : m_peer(nullptr),
      m_peerPort(0),
      m_mode(FlowControl::LOSSLESS),
      m_headerBytes(0),
      m_faulty(false),
      m_credits(0),
      m_arrivalImpl(this),
      m_arrivalEvent(&m_arrivalImpl),
      m_waitingBytes(0),
      m_departed(0),
      m_queuedBytes(0),
      m_txCacheBytes(NO_TX_CACHE),
      m_encodingDataBits(1),
      m_encodingLineBits(1),
      m_bufferBytes(DEFAULT_BUFFER_BYTES),
      m_creditBytes(DEFAULT_BUFFER_BYTES),
      m_creditEvent(Create<ReusableEvent<Port, &Port::CreditEvent>>(this)),
      m_lossProbability(0.0),
      m_chosenNext(0),
      m_downNext(0)
{
}

Port::~Port() = default;

void
Port::DoDispose()
{
    m_waiting.clear();
    m_inFlight.clear();
    m_departed = 0;
    m_peer = nullptr;
    m_creditEvent = nullptr;
    m_arrivalEvent = nullptr;
    m_lossRng = nullptr;
    Object::DoDispose();
}

void
Port::SetFlowControl(FlowControl mode)
{
    m_mode = mode;
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
    m_credits = static_cast<int64_t>(bytes);
}

void
Port::SetLossProbability(double p)
{
    if (!(p >= 0.0 && p < 1.0)) // NaN fails too
    {
        throw std::invalid_argument("Port: LossProbability=" + std::to_string(p) +
                                    " must be >= 0 and < 1");
    }
    m_lossProbability = p;
    if (p > 0.0 && !m_lossRng)
    {
        m_lossRng = CreateObject<UniformRandomVariable>();
    }
    else if (p == 0.0)
    {
        m_lossRng = nullptr;
    }
    UpdateFaulty();
}

double
Port::GetLossProbability() const
{
    return m_lossProbability;
}

int64_t
Port::AssignStreams(int64_t stream)
{
    if (stream < 0)
    {
        throw std::invalid_argument("Port::AssignStreams: stream " + std::to_string(stream) +
                                    " must be >= 0");
    }
    if (!m_lossRng)
    {
        return 0;
    }
    m_lossRng->SetStream(stream);
    return 1;
}

void
Port::SetChosenDrops(const uint64_t* indexes, std::size_t n)
{
    m_chosen.assign(indexes, indexes + n);
    std::sort(m_chosen.begin(), m_chosen.end());
    m_chosen.erase(std::unique(m_chosen.begin(), m_chosen.end()), m_chosen.end());
    m_chosenNext = 0;
    UpdateFaulty();
}

void
Port::SetDownIntervals(const int64_t* downUpPs, std::size_t n)
{
    std::vector<std::pair<Time, Time>> down;
    down.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
    {
        const int64_t from = downUpPs[2 * i];
        const int64_t to = downUpPs[2 * i + 1];
        if (from < 0 || to <= from)
        {
            throw std::invalid_argument("Port: down interval [" + std::to_string(from) + ", " +
                                        std::to_string(to) + ") ps must have 0 <= down < up");
        }
        down.emplace_back(PicoSeconds(from), PicoSeconds(to));
    }
    std::sort(down.begin(), down.end());
    m_down.clear();
    for (const auto& d : down)
    {
        if (!m_down.empty() && d.first <= m_down.back().second)
        {
            m_down.back().second = std::max(m_down.back().second, d.second);
        }
        else
        {
            m_down.push_back(d);
        }
    }
    m_downNext = 0;
    UpdateFaulty();
}

void
Port::UpdateFaulty()
{
    m_faulty = m_lossProbability > 0.0 || !m_chosen.empty() || !m_down.empty();
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
    m_peer = peer;
    m_peerPort = peerPort;
    m_credits = static_cast<int64_t>(m_creditBytes);
}

Time
Port::GetTxTime(uint64_t packetBytes) const
{
    // the setters of the attributes it depends on drop the cached time
    if (packetBytes != m_txCacheBytes)
    {
        m_txCacheTime = LineTime(packetBytes + m_headerBytes,
                                 m_rate.GetBitRate(),
                                 m_encodingDataBits,
                                 m_encodingLineBits);
        m_txCacheBytes = packetBytes;
    }
    return m_txCacheTime;
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

uint64_t
Port::GetCreditsHeld() const
{
    if (m_mode == FlowControl::LOSSY)
    {
        return 0;
    }
    int64_t held = m_credits;
    for (std::size_t i = 0; i < m_pending.size(); ++i)
    {
        held += m_pending[i].bytes;
    }
    return static_cast<uint64_t>(held);
}

const Port::Counters&
Port::GetCounters() const
{
    return m_counters;
}

Time
Port::Send(const Ptr<Packet>& packet,
           const FabricHeader::Fields& fields,
           Time earliest,
           CreditReturn credit,
           PortWaker* waker)
{
    NS_ASSERT_MSG(m_peer != nullptr, "Port::Send on an unconnected port");
    const uint32_t wire = GetWireBytes(packet->GetSize());
    const Time now = Simulator::Now();
    if (m_mode == FlowControl::LOSSY)
    {
        ReleaseQueue(now);
        if (m_queuedBytes + wire > m_bufferBytes)
        {
            m_counters.dropPackets++;
            m_counters.dropBytes += wire;
            return Time(-1);
        }
        return Commit(OwnedPacket(packet), fields, earliest, credit, now);
    }
    Time ready;
    if (m_waiting.empty() && TakeCredits(wire, now, ready))
    {
        return Commit(OwnedPacket(packet), fields, CreditReady(earliest, ready, now), credit, now);
    }
    const bool head = m_waiting.empty();
    m_waiting.push_back({OwnedPacket(packet), fields, earliest, credit, waker});
    m_waitingBytes += wire;
    m_counters.creditStalls++;
    ReleaseQueue(now);
    m_counters.maxQueueBytes = std::max(m_counters.maxQueueBytes, m_queuedBytes + m_waitingBytes);
    if (head)
    {
        // behind an earlier head, nothing changes: whatever tells the head (a credit event, an
        // arrival, or the next ReturnCredit) is in place already
        ScheduleCreditEvent();
    }
    return Time(-1);
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
    const Time start = std::max({earliest, now, m_busyUntil});
    m_busyUntil = start + tx;
    m_counters.txPackets++;
    m_counters.txBytes += size;
    m_counters.txWireBytes += wire;
    m_counters.busyPs += static_cast<uint64_t>(tx.GetPicoSeconds());
    ReleaseQueue(now);
    m_queuedBytes += wire;
    m_counters.maxQueueBytes = std::max(m_counters.maxQueueBytes, m_queuedBytes + m_waitingBytes);
    m_inFlight.push_back({m_busyUntil + m_delay, std::move(packet), fields, nullptr, wire});
    if (m_inFlight.size() == 1)
    {
        Simulator::Schedule(m_inFlight.front().arrival - now, m_arrivalEvent);
    }
    if (credit.to != nullptr)
    {
        ReturnCreditFor(credit.to, m_busyUntil, credit.to->GetWireBytes(size));
    }
    else if (credit.shared != nullptr)
    {
        SharedCredit* s = credit.shared;
        if (m_busyUntil >= s->latest)
        {
            s->latest = m_busyUntil;
            s->latestPort = this;
        }
        if (--s->copiesLeft == 0)
        {
            s->latestPort->ReturnCreditFor(s->to, s->latest, s->wireBytes);
            delete s;
        }
    }
    return m_busyUntil;
}

void
Port::ReturnCreditFor(Port* to, Time departure, uint32_t wireBytes)
{
    if (to->m_mode == FlowControl::LOSSY)
    {
        return;
    }
    // if both links are equally long, the credit reaches `to` just when this packet reaches the
    // next hop: should `to` wait for it, that arrival tells it (AttachCreditDue) and `to` needs
    // no event of its own
    to->AddPendingCredit(departure + to->m_delay,
                         wireBytes,
                         to->m_delay == m_delay ? this : nullptr);
}

void
Port::AttachCreditDue(Time arrival, Port* to)
{
    // arrival times in flight are strictly increasing: binary search
    std::size_t lo = 0;
    std::size_t hi = m_inFlight.size();
    while (lo < hi)
    {
        const std::size_t mid = (lo + hi) / 2;
        if (m_inFlight[mid].arrival < arrival)
        {
            lo = mid + 1;
        }
        else
        {
            hi = mid;
        }
    }
    NS_ASSERT_MSG(lo < m_inFlight.size() && m_inFlight[lo].arrival == arrival,
                  "Port: no packet in flight arrives when the credit is due");
    m_inFlight[lo].creditDue = to;
}

void
Port::Arrive()
{
    NS_ASSERT_MSG(!m_inFlight.empty(), "Port::Arrive with nothing in flight");
    InFlight& head = m_inFlight.front();
    const Time now = head.arrival; // this event runs at the head's arrival
    const Ptr<Packet> packet = head.packet.Release();
    const FabricHeader::Fields fields = head.fields;
    Port* creditDue = head.creditDue;
    if (m_departed > 0)
    {
        --m_departed;
    }
    else
    {
        m_queuedBytes -= head.wireBytes; // it departed, uncounted yet
    }
    m_inFlight.pop_front();
    if (!m_inFlight.empty())
    {
        Simulator::Schedule(m_inFlight.front().arrival - now, m_arrivalEvent);
    }
    if (creditDue != nullptr)
    {
        creditDue->CreditDue();
    }
    if (m_faulty && LoseAtArrival(packet))
    {
        return;
    }
    m_peer->Receive(packet, fields, m_peerPort);
}

bool
Port::LoseAtArrival(const Ptr<Packet>& packet)
{
    const Time now = Simulator::Now();
    // packets arrive in the order they were committed: this one is the index-th
    const uint64_t index = m_counters.txPackets - m_inFlight.size() - 1;
    // one draw per arrival, whatever the other causes decide
    const bool random = m_lossRng && m_lossRng->GetValue() < m_lossProbability;
    while (m_downNext < m_down.size() && m_down[m_downNext].second <= now)
    {
        ++m_downNext;
    }
    while (m_chosenNext < m_chosen.size() && m_chosen[m_chosenNext] < index)
    {
        ++m_chosenNext;
    }
    if (m_downNext < m_down.size() && m_down[m_downNext].first <= now)
    {
        m_counters.linkDownDrops++;
    }
    else if (m_chosenNext < m_chosen.size() && m_chosen[m_chosenNext] == index)
    {
        m_counters.chosenDrops++;
    }
    else if (random)
    {
        m_counters.lossPackets++;
    }
    else
    {
        return false;
    }
    // the peer would have freed its ingress buffer at once: its credit comes back (LOSSLESS)
    ReturnCredit(now + m_delay, GetWireBytes(packet->GetSize()));
    return true;
}

void
Port::ReturnCredit(Time at, uint32_t wireBytes)
{
    if (m_mode == FlowControl::LOSSY)
    {
        return;
    }
    AddPendingCredit(at, wireBytes, nullptr);
}

void
Port::AddPendingCredit(Time at, uint32_t wireBytes, Port* via)
{
    // returns come nearly in time order: insert from the back, usually at the back
    std::size_t i = m_pending.size();
    while (i > 0 && m_pending[i - 1].at > at)
    {
        --i;
    }
    m_pending.insert(i, {at, wireBytes, via});
    if (!m_waiting.empty())
    {
        if (at <= Simulator::Now() + m_delay)
        {
            DrainWaiting(); // due within a link delay: usable now (TakeCredits)
        }
        else
        {
            ScheduleCreditEvent();
        }
    }
}

void
Port::HarvestCredits(Time now)
{
    while (!m_pending.empty() && m_pending.front().at <= now)
    {
        m_credits += m_pending.front().bytes;
        m_pending.pop_front();
    }
}

std::size_t
Port::PendingNeeded(uint32_t wireBytes, Time horizon) const
{
    int64_t have = m_credits;
    std::size_t n = 0;
    while (have < wireBytes && n < m_pending.size() && m_pending[n].at <= horizon)
    {
        have += m_pending[n].bytes;
        ++n;
    }
    return have < wireBytes ? NOT_ENOUGH : n;
}

bool
Port::TakeCredits(uint32_t wireBytes, Time now, Time& ready)
{
    // Every return is registered at least one link delay before it is due (the peer's buffer
    // frees no earlier than now, and the credit then crosses the link), so all credits due by
    // now + Delay are known: a packet may take them now and start when the last one it needs is
    // due.
    const std::size_t n = PendingNeeded(wireBytes, now + m_delay);
    if (n == NOT_ENOUGH)
    {
        HarvestCredits(now);
        return false;
    }
    int64_t have = m_credits;
    for (std::size_t i = 0; i < n; ++i)
    {
        have += m_pending[i].bytes;
    }
    // credits left over from the last entry are due by then too; the packets after this one
    // start after it, so they may use them
    ready = n > 0 ? m_pending[n - 1].at : Time(0);
    for (std::size_t i = 0; i < n; ++i)
    {
        m_pending.pop_front();
    }
    m_credits = have - wireBytes;
    return true;
}

Time
Port::CreditReady(Time earliest, Time ready, Time now)
{
    if (ready > std::max({earliest, now, m_busyUntil}))
    {
        m_counters.creditStalls++; // the credit's return sets its start
        return ready;
    }
    return earliest;
}

void
Port::DrainWaiting()
{
    const Time now = Simulator::Now();
    while (!m_waiting.empty())
    {
        Waiting& head = m_waiting.front();
        const uint32_t wire = GetWireBytes(head.packet.Get()->GetSize());
        Time ready;
        if (!TakeCredits(wire, now, ready))
        {
            break;
        }
        m_waitingBytes -= wire;
        Waiting w = std::move(head);
        m_waiting.pop_front();
        const Time departure =
            Commit(std::move(w.packet), w.fields, std::max(w.earliest, ready), w.credit, now);
        if (w.waker != nullptr)
        {
            w.waker->Wake(departure);
        }
    }
    if (!m_waiting.empty())
    {
        ScheduleCreditEvent();
    }
}

void
Port::ScheduleCreditEvent()
{
    // which returned credit completes the head packet's?
    const std::size_t n =
        PendingNeeded(GetWireBytes(m_waiting.front().packet.Get()->GetSize()), Time::Max());
    if (n == NOT_ENOUGH)
    {
        return; // the rest are still held downstream; ReturnCredit calls again when they come
    }
    const Time now = Simulator::Now();
    Time at = now;
    if (n > 0)
    {
        const PendingCredit& last = m_pending[n - 1];
        if (last.via != nullptr && last.at > now)
        {
            last.via->AttachCreditDue(last.at, this); // that arrival calls CreditDue()
            return;
        }
        // one link delay before it is due, every credit due by then is known (TakeCredits)
        at = std::max(last.at - m_delay, now);
    }
    if (!m_creditEvents.empty() && m_creditEvents.front() <= at)
    {
        return; // an event at or before then will look again
    }
    // earlier than any scheduled one: the later ones stay scheduled and find nothing or little
    // to do (cheaper than cancelling, which leaves a dead event in the queue anyway)
    m_creditEvents.insert(0, at);
    Simulator::Schedule(at - now, m_creditEvent);
}

void
Port::CreditDue()
{
    if (!m_waiting.empty())
    {
        DrainWaiting();
    }
}

void
Port::CreditEvent()
{
    m_creditEvents.pop_front(); // events run in time order: this is the earliest
    DrainWaiting();
}

void
Port::ReleaseQueue(Time now)
{
    // departures are in commit order, at arrival - Delay
    while (m_departed < m_inFlight.size() && m_inFlight[m_departed].arrival - m_delay <= now)
    {
        m_queuedBytes -= m_inFlight[m_departed].wireBytes;
        ++m_departed;
    }
}

} // namespace mcsim
} // namespace ns3
