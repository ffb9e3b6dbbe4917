// SPDX-License-Identifier: GPL-2.0-only
#include "mcast-allgather.h"

#include "ns3/boolean.h"
#include "ns3/integer.h"
#include "ns3/mcsim/fabric-header.h"
#include "ns3/mcsim/transport-header.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ns3
{
namespace mcsim
{

// the NS_LOG component McsimMcastAllgather is defined in mcast-allgather-repair.cc, which logs
NS_OBJECT_ENSURE_REGISTERED(McastAllgather);

namespace
{
constexpr uint32_t SOURCE_MASK = 0xFFFFFF; //!< control immediates: type << 24 | source
constexpr uint32_t CONTROL_RECVS = 64;     //!< receives kept posted on each RC QP
constexpr uint64_t FIN_WR_ID = 1;          //!< the FIN's work request (a repair READ's has bit 63)
} // namespace

TypeId
McastAllgather::GetTypeId()
{
    static TypeId tid = AddRegionOffset(
        TypeId("ns3::mcsim::McastAllgather")
            .SetParent<CollectiveRank>()
            .SetGroupName("Mcsim")
            .AddConstructor<McastAllgather>()
            .AddAttribute("ChunkBytes",
                          "Payload bytes per multicast datagram (at most the MTU).",
                          UintegerValue(4096),
                          MakeUintegerAccessor(&McastAllgather::m_chunkBytes),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("Roots",
                          "Ranks multicasting at once (K contiguous sequences with tokens).",
                          UintegerValue(2),
                          MakeUintegerAccessor(&McastAllgather::m_roots),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("Batch",
                          "Datagrams a root posts before waiting for a send completion.",
                          UintegerValue(128),
                          MakeUintegerAccessor(&McastAllgather::m_batch),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("Barriers",
                          "RC barriers every rank runs before the data phase (the artifact: 2); "
                          "each is ceil(log2 P) rounds of a 0-byte SEND (RcBarrier).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&McastAllgather::m_barriers),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("RepairReads",
                          "Repair READs a rank keeps outstanding (the artifact: 1); 0 (the "
                          "default): all of them at once, one per run of missing chunks.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&McastAllgather::m_repairReads),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("StopAndWait",
                          "The artifact's batching: post Batch datagrams (the last one "
                          "signalled) and the next batch only when all have completed; else "
                          "(the default) a sliding window of Batch posted datagrams.",
                          BooleanValue(false),
                          MakeBooleanAccessor(&McastAllgather::m_stopAndWait),
                          MakeBooleanChecker())
            .AddAttribute("FinWait",
                          "The artifact's end: a rank is done only when it holds every chunk, "
                          "its FIN to r+1 is acknowledged and r-1's FIN has been processed; else "
                          "(the default) when it holds every chunk. With it a Broadcast root "
                          "sends its FIN at the start.",
                          BooleanValue(false),
                          MakeBooleanAccessor(&McastAllgather::m_finWait),
                          MakeBooleanChecker())
            .AddAttribute("DataTimeout",
                          "The data phase ends this long after the start even if chunks are "
                          "missing; repair fetches them.",
                          TimeValue(MilliSeconds(10)),
                          MakeTimeAccessor(&McastAllgather::m_dataTimeout),
                          MakeTimeChecker(PicoSeconds(1)))
            .AddAttribute("Endpoints",
                          "UD QPs per rank, each in its own copy of the team's multicast group; "
                          "chunk i uses endpoint i mod Endpoints.",
                          UintegerValue(1),
                          MakeUintegerAccessor(&McastAllgather::m_endpoints),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("Root",
                          "The only contributing rank (a Broadcast), or -1 (an Allgather).",
                          IntegerValue(-1),
                          MakeIntegerAccessor(&McastAllgather::m_bcastRoot),
                          MakeIntegerChecker<int32_t>(-1)));
    return tid;
}

McastAllgather::McastAllgather()
    : m_chunkBytes(4096),
      m_roots(2),
      m_batch(128),
      m_stopAndWait(false),
      m_finWait(false),
      m_barriers(0),
      m_repairReads(0),
      m_readsInFlight(0),
      m_bcastRoot(-1),
      m_endpoints(1),
      m_group(0),
      m_chunks(0),
      m_tailEndpoints(0),
      m_total(0),
      m_expected(0),
      m_posted(0),
      m_inFlight(0),
      m_sent(0),
      m_active(false),
      m_dataOver(false),
      m_finSent(false),
      m_finAcked(false),
      m_finIn(false),
      m_timer(this, &m_timerSource)
{
}

McastAllgather::~McastAllgather() = default;

void
McastAllgather::DoDispose()
{
    m_timer.Cancel();
    m_ud.clear();
    m_next = nullptr;
    m_prev = nullptr;
    m_barrier.Dispose();
    CollectiveRank::DoDispose();
}

uint64_t
McastAllgather::GetReceiveDrops() const
{
    uint64_t drops = 0;
    for (const auto& ud : m_ud)
    {
        drops += ud->GetCounters().overruns;
    }
    return drops;
}

uint32_t
McastAllgather::Sources() const
{
    return m_bcastRoot >= 0 ? 1 : m_nRanks;
}

int64_t
McastAllgather::MySource() const
{
    if (m_bcastRoot >= 0)
    {
        return static_cast<uint32_t>(m_bcastRoot) == m_rank ? 0 : -1;
    }
    return m_rank;
}

uint32_t
McastAllgather::ChunkSize(uint32_t i) const
{
    const uint64_t start = static_cast<uint64_t>(i) * m_chunkBytes;
    return static_cast<uint32_t>(std::min<uint64_t>(m_chunkBytes, m_bytesPerRank - start));
}

uint32_t
McastAllgather::GetEndpoints() const
{
    return m_endpoints;
}

void
McastAllgather::Wire(uint32_t firstGroup, Ptr<RcQp> next, Ptr<RcQp> prev)
{
    Ptr<Nic> nic = m_stack->GetNic(m_host);
    std::vector<Ptr<UdQp>> ud;
    for (uint32_t e = 0; e < m_endpoints; ++e)
    {
        ud.push_back(m_stack->CreateUdQp());
        nic->AttachMulticast(firstGroup + e, nic->AddQp(ud.back(), this));
    }
    Connect(firstGroup, std::move(ud), next, prev);
}

void
McastAllgather::Connect(uint32_t firstGroup,
                        std::vector<Ptr<UdQp>> ud,
                        Ptr<RcQp> next,
                        Ptr<RcQp> prev)
{
    if (ud.size() != m_endpoints)
    {
        throw std::invalid_argument("McastAllgather: " + std::to_string(ud.size()) +
                                    " UD QPs for " + std::to_string(m_endpoints) + " endpoints");
    }
    if (m_bcastRoot >= static_cast<int32_t>(m_nRanks))
    {
        throw std::invalid_argument("McastAllgather: Root=" + std::to_string(m_bcastRoot) +
                                    " is not a rank of " + std::to_string(m_nRanks));
    }
    m_group = firstGroup;
    m_ud = std::move(ud);
    for (const auto& q : m_ud)
    {
        m_isUd.resize(std::max<std::size_t>(m_isUd.size(), q->GetQpn() + 1), 0);
        m_isUd[q->GetQpn()] = 1;
    }
    m_next = next;
    m_prev = prev;
    m_chunks = static_cast<uint32_t>(ChunkCount(m_bytesPerRank, m_chunkBytes));
    if (static_cast<uint64_t>(Sources()) * m_chunks > SOURCE_MASK)
    {
        throw std::invalid_argument("McastAllgather: more than 2^24 chunks");
    }
    m_tailEndpoints = std::min(m_endpoints, m_chunks);
    m_have.Assign(static_cast<std::size_t>(Sources()) * m_chunks, 1);
    m_count.Assign(Sources(), m_chunks);
    m_owed.Assign(Sources(), 1);
    m_owedSources = 0;
    m_asked.Assign(Sources(), 1);
    m_tails.Assign(Sources(), m_tailEndpoints);
    m_expected = static_cast<uint64_t>(Sources()) * m_chunks;
    if (MySource() >= 0)
    {
        const auto me = static_cast<uint32_t>(MySource());
        for (uint32_t i = 0; i < m_chunks; ++i)
        {
            m_have.Set(static_cast<std::size_t>(me) * m_chunks + i, 1);
        }
        m_count.Set(me, m_chunks);
        m_total = m_chunks;
    }
    m_next->PostRecv(CONTROL_RECVS);
    m_prev->PostRecv(CONTROL_RECVS);
}

std::vector<uint32_t>
McastAllgather::GetRingDistances() const
{
    std::vector<uint32_t> distances;
    for (uint32_t k = 0; m_barriers > 0 && k < RcBarrier::Rounds(m_nRanks); ++k)
    {
        distances.push_back(1U << k);
    }
    return distances;
}

void
McastAllgather::WireRings(std::vector<Ptr<RcQp>> out, std::vector<Ptr<RcQp>> in)
{
    m_barrier.Setup(m_barriers, std::move(out), std::move(in), [this]() { StartData(); });
}

void
McastAllgather::Start()
{
    Note(EventKind::START, m_rank);
    if (m_barriers == 0)
    {
        StartData();
        return;
    }
    m_barrier.Start();
}

void
McastAllgather::StartData()
{
    Note(EventKind::DATA_START, m_rank);
    m_timer.Schedule(m_dataTimeout);
    if (m_bcastRoot >= 0)
    {
        if (MySource() == 0)
        {
            Activate();
        }
    }
    else
    {
        // K contiguous sequences: rank r heads one if floor(j * P / K) == r for some j
        const uint32_t k = std::min(m_roots, m_nRanks);
        for (uint32_t j = 0; j < k; ++j)
        {
            if (static_cast<uint64_t>(j) * m_nRanks / k == m_rank)
            {
                Activate();
            }
        }
    }
    if (m_total == m_expected) // nothing to receive (a Broadcast root)
    {
        if (m_finWait)
        {
            EndDataPhase(); // the artifact's root sends its FIN at once
        }
        TryFinish();
    }
}

void
McastAllgather::TryFinish()
{
    if (m_total == m_expected && (!m_finWait || (m_finAcked && m_finIn)))
    {
        MarkFinished();
    }
}

void
McastAllgather::SendFin()
{
    m_finSent = true;
    SendControl(m_next, FIN, m_rank, FIN_WR_ID);
}

void
McastAllgather::Activate()
{
    if (m_active || MySource() < 0)
    {
        return;
    }
    m_active = true;
    Note(EventKind::ACTIVATE, m_rank);
    PostMore();
}

void
McastAllgather::PostMore()
{
    const auto me = static_cast<uint32_t>(MySource());
    if (m_stopAndWait && m_inFlight > 0)
    {
        return; // the batch's signalled completion has not come yet
    }
    while (m_inFlight < m_batch && m_posted < m_chunks)
    {
        const uint32_t id = me * m_chunks + m_posted;
        const uint32_t e = m_posted % m_endpoints;
        const uint64_t offset =
            me * m_bytesPerRank + static_cast<uint64_t>(m_posted) * m_chunkBytes;
        // a stop-and-wait batch signals only its last datagram (the one the next batch waits for)
        const bool last = m_inFlight + 1 == m_batch || m_posted + 1 == m_chunks;
        m_ud[e]->PostSend((m_group + e) | FabricHeader::GROUP_FLAG,
                          0,
                          ChunkSize(m_posted),
                          m_posted,
                          true,
                          id,
                          static_cast<int64_t>(InRegion(offset)),
                          !m_stopAndWait || last);
        m_posted++;
        m_inFlight++;
    }
}

void
McastAllgather::SendControl(Ptr<RcQp> qp, Control type, uint32_t source, uint64_t wrId)
{
    static constexpr EventKind OUT[] = {EventKind::START, // (no control 0)
                                        EventKind::TOKEN_OUT,
                                        EventKind::NEED_FETCH_OUT,
                                        EventKind::FETCH_OK_OUT,
                                        EventKind::FIN_OUT};
    Note(OUT[type], source);
    qp->PostSend(RcQp::Verb::SEND, 0, 0, wrId, true, (static_cast<uint32_t>(type) << 24) | source);
}

void
McastAllgather::OnSendComplete(uint32_t host, uint32_t qpn, uint64_t wrId)
{
    if (m_barriers > 0 && m_barrier.OnSendComplete(qpn, wrId))
    {
        return;
    }
    if (qpn < m_isUd.size() && m_isUd[qpn])
    {
        m_inFlight--;
        m_sent++;
        m_stats.chunksSent++;
        PostMore();
        if (m_sent == m_chunks && m_bcastRoot < 0)
        {
            // pass the token on within this rank's sequence
            const uint32_t k = std::min(m_roots, m_nRanks);
            const uint32_t nextRank = m_rank + 1;
            bool nextHeads = nextRank >= m_nRanks;
            for (uint32_t j = 0; j < k && !nextHeads; ++j)
            {
                nextHeads = static_cast<uint64_t>(j) * m_nRanks / k == nextRank;
            }
            if (!nextHeads)
            {
                SendControl(m_next, TOKEN, m_rank);
            }
        }
        return;
    }
    if (m_next && qpn == m_next->GetQpn() && wrId == FIN_WR_ID)
    {
        m_finAcked = true;
        TryFinish();
        return;
    }
    if (m_next && qpn == m_next->GetQpn() && (wrId >> 63) != 0)
    {
        OnRepairRead(wrId);
    }
}

void
McastAllgather::OnReceive(uint32_t host, const Completion& c)
{
    if (c.qpn < m_isUd.size() && m_isUd[c.qpn])
    {
        const uint32_t id = c.imm & SOURCE_MASK;
        if (id < m_have.Size())
        {
            if (c.packet && !m_have.Get(id))
            {
                // verify mode: the datagram's bytes go to the chunk's place in the output
                const uint64_t offset = (id / m_chunks) * m_bytesPerRank +
                                        static_cast<uint64_t>(id % m_chunks) * m_chunkBytes;
                m_stack->GetNic(m_host)->StorePayload(c.packet, c.bytes, InRegion(offset));
            }
            const bool fresh = m_have.Get(id) == 0;
            m_stats.chunksReceived += fresh;
            const uint32_t source = id / m_chunks;
            const uint32_t i = id % m_chunks;
            SetChunk(source, i, false);
            if (fresh && i + m_endpoints >= m_chunks &&
                m_tails.Increment(source) == m_tailEndpoints && m_count.Get(source) < m_chunks)
            {
                NeedFetch(source); // the source's last chunks are here: what is missing was lost
            }
        }
        return;
    }
    if (m_barriers > 0 && m_barrier.OnReceive(c))
    {
        return;
    }
    const uint32_t type = c.imm >> 24;
    const uint32_t source = c.imm & SOURCE_MASK;
    if (c.qpn == m_prev->GetQpn())
    {
        m_prev->PostRecv(1);
        if (type == TOKEN)
        {
            Note(EventKind::TOKEN_IN, source);
            Activate();
        }
        else if (type == NEED_FETCH)
        {
            Note(EventKind::NEED_FETCH_IN, source);
            OnNeedFetch(source);
        }
        else if (type == FIN)
        {
            Note(EventKind::FIN_IN, source);
            m_finIn = true;
            TryFinish();
        }
    }
    else if (c.qpn == m_next->GetQpn())
    {
        m_next->PostRecv(1);
        if (type == FETCH_OK)
        {
            Note(EventKind::FETCH_OK_IN, source);
            OnFetchOk(source);
        }
    }
}

bool
McastAllgather::Deferrable(uint32_t /* host */, const Completion& c, const QueuedAhead& ahead) const
{
    // only a UD QP asks (its datagrams: one of m_ud's); read as little of the rank's state as the
    // answer needs, it is read again when the datagram is processed (a duplicate is treated as a
    // fresh chunk: it does nothing either way)
    const uint32_t id = c.imm & SOURCE_MASK;
    if (!IsUd(c.opcode) || id >= m_have.Size())
    {
        return IsUd(c.opcode); // a datagram outside the output does nothing
    }
    // each completion processed before it may set one chunk more (a repair READ coming back
    // makes the host's processor ask again: Reconsider)
    const uint64_t reach = static_cast<uint64_t>(ahead.all) + 1;
    if (m_total + reach >= m_expected)
    {
        return false; // the output's last chunk ends the data phase
    }
    const uint32_t source = id / m_chunks;
    const bool tail = id % m_chunks + m_endpoints >= m_chunks;
    const bool countMatters = reach < m_chunks || (tail && m_chunks > 1);
    const uint64_t count = countMatters ? m_count.Get(source) : 0;
    // completing its source answers a NEED_FETCH of it: only deferrable if none is owed, and no
    // completion before it can be one (only a datagram that is deferred itself)
    if (count + reach >= m_chunks &&
        (ahead.eventful > 0 || (m_owedSources > 0 && m_owed.Get(source) != 0)))
    {
        return false;
    }
    // a source's last chunks may start a repair if they leave it incomplete: deferrable when it
    // is the one chunk of its source still missing (it completes the source or is a duplicate)
    return !tail || count + 1 >= m_chunks;
}

void
McastAllgather::SetChunk(uint32_t source, uint32_t i, bool repaired)
{
    const std::size_t id = static_cast<std::size_t>(source) * m_chunks + i;
    if (m_have.Get(id))
    {
        return;
    }
    m_have.Set(id, 1);
    m_total++;
    m_stats.repairedChunks += repaired;
    if (m_count.Increment(source) == m_chunks && m_owed.Get(source))
    {
        m_owed.Set(source, 0);
        m_owedSources--;
        SendControl(m_prev, FETCH_OK, source);
    }
    if (m_total == m_expected)
    {
        TryFinish();
        if (!m_dataOver)
        {
            EndDataPhase();
        }
        else if (!m_finSent)
        {
            SendFin();
        }
    }
}

} // namespace mcsim
} // namespace ns3
