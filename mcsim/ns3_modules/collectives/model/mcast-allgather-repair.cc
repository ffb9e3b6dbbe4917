// SPDX-License-Identifier: GPL-2.0-only
//
// McastAllgather's repair (collectives/doc/collectives.md, "McastAllgather": early repair and
// repair): the end of the data phase, NEED_FETCH / FETCH_OK down the ring, and the RDMA READs of
// the missing runs of chunks from r+1. The rest of the rank is in mcast-allgather.cc.
#include "mcast-allgather.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

namespace ns3
{
namespace mcsim
{

// McastAllgather's NS_LOG component: all of its log lines are in this file
NS_LOG_COMPONENT_DEFINE("McsimMcastAllgather");

void
McastAllgather::EndDataPhase()
{
    if (m_dataOver)
    {
        return;
    }
    m_dataOver = true;
    m_stats.dataPhaseEndPs = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
    if (m_timer.IsPending())
    {
        m_timer.Cancel();
    }
    else
    {
        m_stats.dataTimeouts = 1;
        Note(EventKind::DATA_TIMEOUT, m_rank);
        NS_LOG_INFO("rank " << m_rank << ": data phase timed out with " << m_total << " of "
                            << m_expected << " chunks");
    }
    if (m_total == m_expected)
    {
        SendFin();
        return;
    }
    for (uint32_t s = 0; s < Sources(); ++s)
    {
        if (m_count.Get(s) < m_chunks)
        {
            NeedFetch(s);
        }
    }
}

void
McastAllgather::NeedFetch(uint32_t source)
{
    if (m_asked.Get(source))
    {
        return;
    }
    m_asked.Set(source, 1);
    m_stats.needFetches++;
    NS_LOG_INFO("rank " << m_rank << ": repair request (NEED_FETCH) for source " << source);
    SendControl(m_next, NEED_FETCH, source);
}

void
McastAllgather::OnNeedFetch(uint32_t source)
{
    if (source >= Sources())
    {
        return;
    }
    if (m_count.Get(source) == m_chunks)
    {
        SendControl(m_prev, FETCH_OK, source);
    }
    else
    {
        m_owedSources += m_owed.Get(source) == 0;
        m_owed.Set(source, 1); // answered when this rank holds all of source
    }
}

void
McastAllgather::OnFetchOk(uint32_t source)
{
    // one READ per run of missing chunks, from r+1's copy at the same place in the output
    uint32_t i = 0;
    while (i < m_chunks)
    {
        if (m_have.Get(static_cast<std::size_t>(source) * m_chunks + i))
        {
            ++i;
            continue;
        }
        uint32_t j = i;
        uint64_t bytes = 0;
        while (j < m_chunks && !m_have.Get(static_cast<std::size_t>(source) * m_chunks + j))
        {
            bytes += ChunkSize(j);
            ++j;
        }
        m_reads.push_back({source, i, j - i, bytes});
        i = j;
    }
    IssueReads();
}

void
McastAllgather::IssueReads()
{
    while (!m_reads.empty() && (m_repairReads == 0 || m_readsInFlight < m_repairReads))
    {
        const Read r = m_reads.front();
        m_reads.pop_front();
        const uint64_t offset =
            r.source * m_bytesPerRank + static_cast<uint64_t>(r.first) * m_chunkBytes;
        const uint64_t wrId = (1ULL << 63) | (static_cast<uint64_t>(r.source) << 40) |
                              (static_cast<uint64_t>(r.first) << 20) | r.chunks;
        m_stats.repairReads++;
        m_readsInFlight++;
        NS_LOG_DEBUG("rank " << m_rank << ": repair READ of chunks [" << r.first << ", "
                             << r.first + r.chunks << ") of source " << r.source);
        Note(EventKind::READ_OUT, r.source, r.first, r.chunks);
        m_next->PostSend(RcQp::Verb::READ, r.bytes, InRegion(offset), wrId, false, 0);
    }
}

void
McastAllgather::OnRepairRead(uint64_t wrId)
{
    // wrId = 1 << 63 | source << 40 | first chunk << 20 | chunks (IssueReads)
    const auto source = static_cast<uint32_t>((wrId >> 40) & 0xFFFFF);
    const auto first = static_cast<uint32_t>((wrId >> 20) & 0xFFFFF);
    const auto n = static_cast<uint32_t>(wrId & 0xFFFFF);
    Note(EventKind::READ_IN, source, first, n);
    for (uint32_t i = first; i < first + n; ++i)
    {
        SetChunk(source, i, true);
    }
    m_readsInFlight--;
    IssueReads();
    // chunks set outside the datagrams' order: which queued datagrams stay deferrable changed
    m_stack->GetNic(m_host)->GetProcessor()->Reconsider();
}

} // namespace mcsim
} // namespace ns3
