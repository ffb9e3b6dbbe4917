// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/make-event.h"
#include "ns3/mcsim/counter-table.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/event-order.h"
#include "ns3/mcsim/queue-pair.h"
#include "ns3/mcsim/rc-qp.h"
#include "ns3/mcsim/rdma-stack.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

namespace ns3
{
namespace mcsim
{

/** @brief Where a rank takes datagrams: its host and the QP number there. */
struct RankAddress
{
    uint32_t host;
    uint32_t qpn;
};

/**
 * @brief One rank of a collective: an application on one host that owns its QPs.
 *
 * A CollectiveTeam creates one per rank (hosts[rank]), wires them (Wire) and starts them.
 */
class CollectiveRank : public Object, public QpOwner
{
  public:
    static TypeId GetTypeId();
    CollectiveRank();
    ~CollectiveRank() override;

    /** Team setup: the stack, this rank, every rank's host, the bytes each rank contributes. */
    virtual void Setup(Ptr<RdmaStack> stack,
                       uint32_t rank,
                       const std::vector<uint32_t>& hosts,
                       uint64_t bytesPerRank);
    /**
     * Team wiring, after every rank's Setup and the ring of RC QP pairs: next talks to rank r+1,
     * prev to rank r-1. firstGroup is the first multicast group id of the team (a rank with
     * multicast endpoints joins firstGroup + e with endpoint e). Each rank type creates what else
     * it needs on its host's NIC.
     */
    virtual void Wire(uint32_t firstGroup, Ptr<RcQp> next, Ptr<RcQp> prev) = 0;
    /**
     * Distances d of further rings of RC QP pairs the rank wants besides r -> r+1 (default
     * none); the team asks rank 0 and gives every rank the same (WireRings).
     */
    virtual std::vector<uint32_t> GetRingDistances() const;
    /** After Wire: out[i] talks to rank r + d_i, in[i] to rank r - d_i (GetRingDistances). */
    virtual void WireRings(std::vector<Ptr<RcQp>> out, std::vector<Ptr<RcQp>> in);
    /** The QP other ranks send datagrams to (0 if the rank takes none); after Wire. */
    virtual uint32_t GetAddressQpn() const;
    /** After every rank's Wire: every rank's address, by rank (shared by the team). */
    virtual void Introduce(std::shared_ptr<const std::vector<RankAddress>> team);
    /** Begin at the current simulation time. */
    virtual void Start() = 0;
    /** Called once, when the rank is finished (its team counts them: CollectiveTeam::StartAfter).
     */
    void SetOnFinished(std::function<void()> onFinished);

    static constexpr uint64_t NEVER = NEVER_PS; //!< a time that did not happen
    /** "RegionOffsetBytes" at most: UD QPs take a local offset as int64_t (UdQp::PostSend). */
    static constexpr uint64_t MAX_REGION_OFFSET = std::numeric_limits<int64_t>::max();

    /**
     * Adds "RegionOffsetBytes" to the TypeId of a rank class that places its whole buffer at that
     * offset of its region (RingRank, McastAllgather, InnetReduction; their subclasses inherit it).
     * A class without it keeps its buffer at 0.
     */
    static TypeId AddRegionOffset(TypeId tid);
    /**
     * Adds a protocol's attributes to the TypeId of a rank class that runs NCCL's protocols
     * (mcsim.config.protocols; RingRank, TreeReduce): "LineBytes" and "LineDataBytes" (its lines on
     * the wire: CarryLines), "StepDelayNode", "StepDelayNet" and "GpusPerNode" (the time before
     * each chunk it sends: StepDelayTo).
     */
    static TypeId AddProtocol(TypeId tid);

    /**
     * The chunks a message of `bytes` is cut into, each at most `chunkBytes` (a rank's
     * "ChunkBytes", > 0) and only the last shorter: ceil(bytes / chunkBytes), 0 for no bytes. Every
     * rank class counts its WRITEs, SENDs and datagrams so.
     */
    static uint64_t ChunkCount(uint64_t bytes, uint64_t chunkBytes)
    {
        return (bytes + chunkBytes - 1) / chunkBytes;
    }

    /** The fields of CollectiveRank::Stats, in order: X(member, initial, python_name). */
#define MCSIM_RANK_STATS(X)                                                                        \
    /* every byte of the output is here (NEVER: not yet) */                                        \
    X(finishPs, NEVER, "finish_ps")                                                                \
    /* chunks received over the network in the data phase */                                       \
    X(chunksReceived, 0, "chunks_received")                                                        \
    /* chunks fetched by repair READs */                                                           \
    X(repairedChunks, 0, "repaired_chunks")                                                        \
    /* repair RDMA READs issued */                                                                 \
    X(repairReads, 0, "repair_reads")                                                              \
    /* NEED_FETCH requests sent */                                                                 \
    X(needFetches, 0, "need_fetches")                                                              \
    /* 1 if the data phase ended by its timeout */                                                 \
    X(dataTimeouts, 0, "data_timeouts")                                                            \
    /* chunks this rank put on the wire (own or forwarded) */                                      \
    X(chunksSent, 0, "chunks_sent")                                                                \
    /* when the data phase ended (multicast) or 0 */                                               \
    X(dataPhaseEndPs, 0, "data_phase_end_ps")                                                      \
    /* datagrams its receive queue dropped (no buffer posted) */                                   \
    X(receiveDrops, 0, "receive_drops")

    /** @brief What one rank did, read in bulk after the run. */
    struct Stats
    {
        MCSIM_COUNTERS(MCSIM_RANK_STATS)
    };

    static constexpr uint32_t NUM_STATS = Stats::COUNT;
    /** The stats, with the receive drops of the rank's QPs filled in. */
    Stats GetStats() const;

    /** What a protocol event was (ProtocolEvent::kind); the order is the Python names'
     * (EVENT_KINDS). */
    enum class EventKind : uint32_t
    {
        START,          //!< the rank began (Start)
        DATA_START,     //!< its data phase began (after the barriers)
        ACTIVATE,       //!< it began to multicast its own shard
        TOKEN_OUT,      //!< it sent the activation token to r+1
        TOKEN_IN,       //!< it received the token from r-1
        NEED_FETCH_OUT, //!< it asked r+1 for a source (value: -)
        NEED_FETCH_IN,  //!< r-1 asked it for a source
        FETCH_OK_OUT,   //!< it told r-1 that it holds a source
        FETCH_OK_IN,    //!< r+1 holds a source: repairs may start
        READ_OUT,       //!< a repair READ went out (value: its first chunk; count: chunks)
        READ_IN,        //!< a repair READ came back (value: its first chunk; count: chunks)
        FIN_OUT,        //!< it sent FIN to r+1
        FIN_IN,         //!< r-1's FIN arrived
        DATA_TIMEOUT,   //!< the data phase ended by its timeout
        FINISH,         //!< every byte of its output is here
    };

    /** @brief One protocol event of a rank, recorded when RecordEvents is on. */
    struct ProtocolEvent
    {
        int64_t timePs;
        EventKind kind;
        uint32_t source; //!< the source (shard) it concerns, or the rank itself
        uint32_t value;  //!< a chunk index, or 0
        uint32_t count;  //!< chunks, or 0
    };

    /** Record protocol events from now on (off by default: then a recording costs one branch). */
    void RecordEvents(bool on);
    const std::vector<ProtocolEvent>& GetEvents() const;

  protected:
    void DoDispose() override;
    /** Datagrams the rank's receive queues dropped (a multicast rank's UD QP); 0 by default. */
    virtual uint64_t GetReceiveDrops() const;
    /** The rank is complete: record the time (once). */
    void MarkFinished();

    /** A protocol event now, if recording. */
    void Note(EventKind kind, uint32_t source, uint32_t value = 0, uint32_t count = 0)
    {
        if (m_recording)
        {
            NoteNow(kind, source, value, count);
        }
    }

    /** The protocol's lines on qp's packets (RcQp::SetLines; nothing without lines): both QPs of a
     * pair, before their first post. */
    void CarryLines(const Ptr<RcQp>& qp) const;
    /** The protocol's time before a chunk this rank sends to `host`: StepDelayNode if it is in this
     * rank's node (hosts numbered node by node, GpusPerNode each), else StepDelayNet. */
    Time StepDelayTo(uint32_t host) const;
    /** The host at the other end of qp. */
    static uint32_t PeerHost(const Ptr<RcQp>& qp);

    /** (self->*Send)(args...) now if `delay` is 0 (no protocol), else `delay` from now as an event
     * of the rank's timer source: a protocol's step before a chunk goes out (StepDelayTo). Send is
     * a template argument, so the call without a delay is a direct one. */
    template <auto Send, typename T, typename... Args>
    void AfterStep(const Time& delay, T* self, Args... args)
    {
        if (delay.IsZero())
        {
            (self->*Send)(args...);
            return;
        }
        mcsim::Post(delay, Ptr<EventImpl>(MakeEvent(Send, self, args...), false), m_timerSource);
    }

    /** Where byte `at` of the team's buffer is in this rank's region: RegionOffsetBytes + at. */
    uint64_t InRegion(uint64_t at) const
    {
        return m_regionOffset + at;
    }

    /** Verify mode: n bytes of the team's buffer at offset (InRegion); null when the NIC has no
     * memory. */
    uint8_t* Bytes(uint64_t offset, uint64_t n) const;
    /** The distances 2, 4, 8, ... below P: the rings of the logarithmic schedules. */
    std::vector<uint32_t> PowerOfTwoDistances() const;

    Ptr<RdmaStack> m_stack;
    uint32_t m_rank;
    uint32_t m_nRanks;
    uint32_t m_host; //!< hosts[rank] (not the whole list: P ranks would keep P^2 entries)
    uint64_t m_bytesPerRank;
    uint64_t m_regionOffset;  //!< "RegionOffsetBytes" (AddRegionOffset; 0 in a class without it)
    uint32_t m_lineBytes = 0; //!< "LineBytes" (AddProtocol)
    uint32_t m_lineDataBytes = 0; //!< "LineDataBytes"
    Time m_stepDelayNode;         //!< "StepDelayNode"
    Time m_stepDelayNet;          //!< "StepDelayNet"
    uint32_t m_gpusPerNode = 0;   //!< "GpusPerNode"
    Stats m_stats;
    /** The order of the rank's own events (Setup places them at (host, unit::RANK + the number
     * of QPs its NIC had then, its first QP's number): two ranks on one host never share one). */
    EventSource m_timerSource;          //!< its timers: (TIMER, host, unit)
    EventSource m_computeSource;        //!< its host reductions: (COMPLETION, host, unit)
    std::function<void()> m_onFinished; //!< SetOnFinished's

  private:
    void NoteNow(EventKind kind, uint32_t source, uint32_t value, uint32_t count);

    bool m_recording = false;
    std::vector<ProtocolEvent> m_events;
};

} // namespace mcsim
} // namespace ns3
