// SPDX-License-Identifier: GPL-2.0-only
#include "collective-rank.h"

#include "ns3/mcsim/nic.h"
#include "ns3/nstime.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(CollectiveRank);

TypeId
CollectiveRank::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::mcsim::CollectiveRank").SetParent<Object>().SetGroupName("Mcsim");
    return tid;
}

TypeId
CollectiveRank::AddRegionOffset(TypeId tid)
{
    return tid.AddAttribute("RegionOffsetBytes",
                            "Where the team's buffer begins in each rank's region, in bytes, the "
                            "same on every rank of the team: its inputs, outputs, landing zones "
                            "and every WRITE, READ and datagram's place are that far in (teams "
                            "composed into a hierarchical collective share one region).",
                            UintegerValue(0), // the buffer at the region's start
                            MakeUintegerAccessor(&CollectiveRank::m_regionOffset),
                            MakeUintegerChecker<uint64_t>(0, MAX_REGION_OFFSET));
}

TypeId
CollectiveRank::AddProtocol(TypeId tid)
{
    return tid
        .AddAttribute("LineBytes",
                      "A protocol's line on the wire (NCCL's LL: 16, LL128: 128; 0: no lines, the "
                      "verbs' bytes alone).",
                      UintegerValue(0),
                      MakeUintegerAccessor(&CollectiveRank::m_lineBytes),
                      MakeUintegerChecker<uint32_t>())
        .AddAttribute("LineDataBytes",
                      "The message's bytes in a full line (LL: 8, LL128: 120).",
                      UintegerValue(0),
                      MakeUintegerAccessor(&CollectiveRank::m_lineDataBytes),
                      MakeUintegerChecker<uint32_t>())
        .AddAttribute("StepDelayNode",
                      "A protocol's time before each chunk a rank sends to a rank of its own node "
                      "(0: none).",
                      TimeValue(Time(0)),
                      MakeTimeAccessor(&CollectiveRank::m_stepDelayNode),
                      MakeTimeChecker(Time(0)))
        .AddAttribute("StepDelayNet",
                      "A protocol's time before each chunk a rank sends to a rank of another node "
                      "(0: none).",
                      TimeValue(Time(0)),
                      MakeTimeAccessor(&CollectiveRank::m_stepDelayNet),
                      MakeTimeChecker(Time(0)))
        .AddAttribute("GpusPerNode",
                      "Hosts per node, numbered node by node (0: a node per host).",
                      UintegerValue(0),
                      MakeUintegerAccessor(&CollectiveRank::m_gpusPerNode),
                      MakeUintegerChecker<uint32_t>());
}

void
CollectiveRank::CarryLines(const Ptr<RcQp>& qp) const
{
    if (m_lineBytes != 0)
    {
        qp->SetLines({m_lineBytes, m_lineDataBytes});
    }
}

Time
CollectiveRank::StepDelayTo(uint32_t host) const
{
    const bool sameNode = m_gpusPerNode != 0 && host / m_gpusPerNode == m_host / m_gpusPerNode;
    return sameNode ? m_stepDelayNode : m_stepDelayNet;
}

uint32_t
CollectiveRank::PeerHost(const Ptr<RcQp>& qp)
{
    uint32_t host = 0;
    uint32_t qpn = 0;
    qp->GetPeer(host, qpn);
    return host;
}

CollectiveRank::CollectiveRank()
    : m_rank(0),
      m_nRanks(0),
      m_bytesPerRank(0),
      m_regionOffset(0),
      m_timerSource(EventClass::TIMER),
      m_computeSource(EventClass::COMPLETION)
{
}

CollectiveRank::~CollectiveRank() = default;

void
CollectiveRank::DoDispose()
{
    m_stack = nullptr;
    Object::DoDispose();
}

void
CollectiveRank::Setup(Ptr<RdmaStack> stack,
                      uint32_t rank,
                      const std::vector<uint32_t>& hosts,
                      uint64_t bytesPerRank)
{
    m_stack = stack;
    m_rank = rank;
    m_nRanks = static_cast<uint32_t>(hosts.size());
    m_host = hosts.at(rank);
    m_bytesPerRank = bytesPerRank;
    const uint32_t unit = unit::RANK + stack->GetNic(m_host)->GetNQps();
    m_timerSource.Place(m_host, unit);
    m_computeSource.Place(m_host, unit);
}

std::vector<uint32_t>
CollectiveRank::GetRingDistances() const
{
    return {};
}

void
CollectiveRank::WireRings(std::vector<Ptr<RcQp>> /* out */, std::vector<Ptr<RcQp>> /* in */)
{
}

uint32_t
CollectiveRank::GetAddressQpn() const
{
    return 0;
}

void
CollectiveRank::Introduce(std::shared_ptr<const std::vector<RankAddress>> /* team */)
{
}

void
CollectiveRank::RecordEvents(bool on)
{
    m_recording = on;
}

const std::vector<CollectiveRank::ProtocolEvent>&
CollectiveRank::GetEvents() const
{
    return m_events;
}

void
CollectiveRank::NoteNow(EventKind kind, uint32_t source, uint32_t value, uint32_t count)
{
    m_events.push_back({Simulator::Now().GetPicoSeconds(), kind, source, value, count});
}

void
CollectiveRank::MarkFinished()
{
    if (m_stats.finishPs == NEVER)
    {
        m_stats.finishPs = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
        Note(EventKind::FINISH, m_rank);
        if (m_onFinished)
        {
            m_onFinished();
        }
    }
}

uint8_t*
CollectiveRank::Bytes(uint64_t offset, uint64_t n) const
{
    Ptr<Nic> nic = m_stack->GetNic(m_host);
    return nic->HasMemory() ? nic->Memory(InRegion(offset), n) : nullptr;
}

std::vector<uint32_t>
CollectiveRank::PowerOfTwoDistances() const
{
    std::vector<uint32_t> d;
    for (uint64_t k = 2; k < m_nRanks; k *= 2)
    {
        d.push_back(static_cast<uint32_t>(k));
    }
    return d;
}

void
CollectiveRank::SetOnFinished(std::function<void()> onFinished)
{
    m_onFinished = std::move(onFinished);
}

CollectiveRank::Stats
CollectiveRank::GetStats() const
{
    Stats s = m_stats;
    s.receiveDrops = GetReceiveDrops();
    return s;
}

uint64_t
CollectiveRank::GetReceiveDrops() const
{
    return 0;
}

} // namespace mcsim
} // namespace ns3
