// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "collective-rank.h"
#include "rc-barrier.h"

#include "ns3/mcsim/packed-counters.h"
#include "ns3/mcsim/protocol-timer.h"
#include "ns3/mcsim/rc-qp.h"
#include "ns3/mcsim/ud-qp.h"

#include <cstdint>
#include <deque>
#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * @brief One rank of the multicast Allgather (or Broadcast) of "Network-Offloaded
 * Bandwidth-Optimal Broadcast and Allgather for Distributed AI" (SC'24).
 *
 * The model: collectives/doc/collectives.md, "McastAllgather".
 */
class McastAllgather : public CollectiveRank
{
  public:
    static TypeId GetTypeId();
    McastAllgather();
    ~McastAllgather() override;

    /**
     * Team wiring: one UD QP per endpoint, endpoint e in multicast group firstGroup + e (groups
     * with the same members); RC QPs to r+1 and from r-1. Chunk i goes out through endpoint
     * i mod Endpoints, so a receiver's completions spread over its endpoints (and a multi-threaded
     * completion processor's threads).
     */
    void Connect(uint32_t firstGroup, std::vector<Ptr<UdQp>> ud, Ptr<RcQp> next, Ptr<RcQp> prev);
    uint32_t GetEndpoints() const;
    /** Creates one UD QP per endpoint on its host's NIC, in group firstGroup + e, then Connect. */
    void Wire(uint32_t firstGroup, Ptr<RcQp> next, Ptr<RcQp> prev) override;
    /** With Barriers: rings at distances 1, 2, 4, ... < P for the dissemination barrier. */
    std::vector<uint32_t> GetRingDistances() const override;
    void WireRings(std::vector<Ptr<RcQp>> out, std::vector<Ptr<RcQp>> in) override;
    /** The barriers (if any), then the data phase. */
    void Start() override;

    void OnSendComplete(uint32_t host, uint32_t qpn, uint64_t wrId) override;
    void OnReceive(uint32_t host, const Completion& c) override;
    /** A datagram only updates this rank's state unless it completes the output, completes a
     * source that a NEED_FETCH is owed for, or is one of a source's last chunks and leaves the
     * source incomplete (a repair starts). */
    bool Deferrable(uint32_t host, const Completion& c, const QueuedAhead& ahead) const override;

  protected:
    void DoDispose() override;
    uint64_t GetReceiveDrops() const override;

  private:
    enum Control : uint32_t
    {
        TOKEN = 1,
        NEED_FETCH = 2,
        FETCH_OK = 3,
        FIN = 4,
    };

    uint32_t Sources() const;             //!< shards collected: P, or 1 for a Broadcast
    int64_t MySource() const;             //!< this rank's source index, or -1
    uint32_t ChunkSize(uint32_t i) const; //!< bytes of chunk i of a shard
    void StartData();                     //!< the data phase, after the barriers
    void TryFinish(); //!< done: every chunk here (and with FinWait both FINs through)
    void SendFin();   //!< FIN to r+1: this rank holds everything
    void Activate();
    void PostMore();
    void SendControl(Ptr<RcQp> qp, Control type, uint32_t source, uint64_t wrId = 0);
    void SetChunk(uint32_t source, uint32_t i, bool repaired);
    void NeedFetch(uint32_t source); //!< ask r+1 for source (once)
    void EndDataPhase();
    void OnNeedFetch(uint32_t source);
    void OnFetchOk(uint32_t source);
    void IssueReads(); //!< post queued repair READs while fewer than RepairReads are out
    void OnRepairRead(uint64_t wrId); //!< a repair READ completed: its chunks are here

    uint32_t m_chunkBytes;  //!< "ChunkBytes"
    uint32_t m_roots;       //!< "Roots": K sequences multicasting at once
    uint32_t m_batch;       //!< "Batch": datagrams posted before waiting for a completion
    bool m_stopAndWait;     //!< "StopAndWait": whole batches, the next after the last completes
    bool m_finWait;         //!< "FinWait": done only after both FINs
    uint32_t m_barriers;    //!< "Barriers": RC barriers before the data phase
    uint32_t m_repairReads; //!< "RepairReads": outstanding repair READs at most (0: any number)

    /** @brief A repair READ not yet posted: a run of missing chunks of one source. */
    struct Read
    {
        uint32_t source;
        uint32_t first;
        uint32_t chunks;
        uint64_t bytes;
    };

    std::deque<Read> m_reads; //!< queued repair READs, in the order OnFetchOk found them
    uint32_t m_readsInFlight; //!< repair READs posted, not yet complete
    RcBarrier m_barrier;
    Time m_dataTimeout;  //!< "DataTimeout"
    int32_t m_bcastRoot; //!< "Root": -1 for an Allgather

    uint32_t m_endpoints; //!< "Endpoints": UD QPs (and multicast groups) per rank
    uint32_t m_group;     //!< the first of the team's groups
    std::vector<Ptr<UdQp>> m_ud;
    std::vector<uint8_t> m_isUd; //!< QP number -> one of m_ud
    Ptr<RcQp> m_next;
    Ptr<RcQp> m_prev;
    uint32_t m_chunks; //!< chunks per shard
    // per source, in as few bits as each needs (P x P state: 5 bits per pair at one chunk each)
    PackedCounters m_have;      //!< source * m_chunks + i -> chunk here (1 bit)
    PackedCounters m_count;     //!< source -> chunks here (0..m_chunks)
    PackedCounters m_owed;      //!< source -> r-1 waits for FETCH_OK(source) (1 bit)
    uint32_t m_owedSources = 0; //!< sources whose m_owed bit is set
    PackedCounters m_asked;     //!< source -> NEED_FETCH(source) sent (1 bit)
    PackedCounters m_tails;     //!< source -> endpoints whose last chunk of it arrived
    uint32_t m_tailEndpoints;   //!< endpoints that carry chunks: min(Endpoints, chunks)
    uint64_t m_total;           //!< chunks here (own shard included)
    uint64_t m_expected;        //!< chunks in the output
    uint32_t m_posted;          //!< own chunks posted so far
    uint32_t m_inFlight;        //!< own chunks posted, not yet completed
    uint32_t m_sent;            //!< own chunks completed
    bool m_active;
    bool m_dataOver;
    bool m_finSent;
    bool m_finAcked; //!< this rank's FIN to r+1 was acknowledged
    bool m_finIn;    //!< r-1's FIN was processed
    /** the data phase's timeout (EndDataPhase) */
    ProtocolTimer<McastAllgather, &McastAllgather::EndDataPhase> m_timer;
};

} // namespace mcsim
} // namespace ns3
