// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/mcsim/queue-pair.h"
#include "ns3/mcsim/rc-qp.h"
#include "ns3/mcsim/rdma-stack.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include <cstdint>
#include <vector>

namespace ns3
{
namespace mcsim
{

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
                       uint64_t shardBytes);
    /**
     * Team wiring, after every rank's Setup and the ring of RC QP pairs: next talks to rank r+1,
     * prev to rank r-1. firstGroup is the first multicast group id of the team (a rank with
     * multicast endpoints joins firstGroup + e with endpoint e). Each rank type creates what else
     * it needs on its host's NIC.
     */
    virtual void Wire(uint32_t firstGroup, Ptr<RcQp> next, Ptr<RcQp> prev) = 0;
    /** Begin at the current simulation time. */
    virtual void Start() = 0;

    static constexpr uint64_t NEVER = UINT64_MAX; //!< a time that did not happen

    /** @brief What one rank did, read in bulk after the run. */
    struct Stats
    {
        uint64_t finishPs = NEVER;   //!< every byte of the output is here (NEVER: not yet)
        uint64_t chunksReceived = 0; //!< chunks received over the network in the data phase
        uint64_t repairedChunks = 0; //!< chunks fetched by repair READs
        uint64_t repairReads = 0;    //!< repair RDMA READs issued
        uint64_t needFetches = 0;    //!< NEED_FETCH requests sent
        uint64_t dataTimeouts = 0;   //!< 1 if the data phase ended by its timeout
        uint64_t chunksSent = 0;     //!< chunks this rank put on the wire (own or forwarded)
        uint64_t dataPhaseEndPs = 0; //!< when the data phase ended (multicast) or 0
        uint64_t receiveDrops = 0;   //!< datagrams its receive queue dropped (no buffer posted)
    };

    static constexpr uint32_t NUM_STATS = 9;
    /** The stats, with the receive drops of the rank's QPs filled in. */
    Stats GetStats() const;

  protected:
    void DoDispose() override;
    /** Datagrams the rank's receive queues dropped (a multicast rank's UD QP); 0 by default. */
    virtual uint64_t GetReceiveDrops() const;
    /** The rank is complete: record the time (once). */
    void MarkFinished();

    Ptr<RdmaStack> m_stack;
    uint32_t m_rank;
    uint32_t m_nRanks;
    std::vector<uint32_t> m_hosts;
    uint64_t m_shardBytes;
    Stats m_stats;
};

} // namespace mcsim
} // namespace ns3
