// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "collective-rank.h"

#include "ns3/mcsim/rc-qp.h"

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * @brief One rank of the ring Allgather over RC RDMA WRITEs, pipelined in chunks.
 *
 * Rank r WRITEs (with immediate = global chunk id) each ChunkBytes piece of its shard into rank
 * r+1's output buffer, and forwards every chunk it receives from r-1 the same way unless r+1 is
 * that chunk's owner. Every rank sends N(P-1) bytes and receives N(P-1) bytes.
 */
class RingAllgather : public CollectiveRank
{
  public:
    static TypeId GetTypeId();
    RingAllgather();
    ~RingAllgather() override;

    /** Team wiring: RC QPs to r+1 and from r-1. */
    void Connect(Ptr<RcQp> next, Ptr<RcQp> prev);
    void Start() override;

    void OnSendComplete(uint32_t host, uint32_t qpn, uint64_t wrId) override;
    void OnReceive(uint32_t host, const Completion& c) override;

  protected:
    void DoDispose() override;

  private:
    void Write(uint32_t id);

    uint32_t m_chunkBytes; //!< "ChunkBytes"
    Ptr<RcQp> m_next;
    Ptr<RcQp> m_prev;
    uint32_t m_chunks;     //!< chunks per shard
    uint64_t m_received;
};

} // namespace mcsim
} // namespace ns3
