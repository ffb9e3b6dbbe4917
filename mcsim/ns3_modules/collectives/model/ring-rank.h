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
 * @brief What the ring collectives share: RC QPs to r+1 and from r-1, data cut into ChunkBytes
 * pieces, each moved by one RDMA WRITE with immediate (= the global chunk id, block * chunks per
 * block + i) into the same place of r+1's buffer.
 */
class RingRank : public CollectiveRank
{
  public:
    static TypeId GetTypeId();
    RingRank();
    ~RingRank() override;

    /** Team wiring: RC QPs to r+1 and from r-1; posts a receive for every chunk r-1 will send. */
    void Connect(Ptr<RcQp> next, Ptr<RcQp> prev);
    /** Connect(next, prev): a ring uses no multicast group. */
    void Wire(uint32_t firstGroup, Ptr<RcQp> next, Ptr<RcQp> prev) override;

    void OnSendComplete(uint32_t host, uint32_t qpn, uint64_t wrId) override;

  protected:
    void DoDispose() override;
    uint64_t ChunkSize(uint32_t i) const; //!< bytes of chunk i of a block
    void Write(uint32_t id);              //!< WRITE chunk id to r+1, immediate = id

    uint32_t m_chunkBytes; //!< "ChunkBytes"
    uint32_t m_chunks;     //!< chunks per block (shard)
    Ptr<RcQp> m_next;
    Ptr<RcQp> m_prev;
};

} // namespace mcsim
} // namespace ns3
