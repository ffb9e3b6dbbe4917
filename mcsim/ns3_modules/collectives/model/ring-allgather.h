// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ring-rank.h"

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * @brief One rank of the ring Allgather over RC RDMA WRITEs, pipelined in chunks.
 *
 * Rank r WRITEs each chunk of its shard into rank r+1's output buffer, and forwards every chunk
 * it receives from r-1 the same way unless r+1 is that chunk's owner. Every rank sends N(P-1)
 * bytes and receives N(P-1) bytes.
 */
class RingAllgather : public RingRank
{
  public:
    static TypeId GetTypeId();
    RingAllgather();
    ~RingAllgather() override;

    void Start() override;
    void OnReceive(uint32_t host, const Completion& c) override;

  private:
    uint64_t m_received;
};

} // namespace mcsim
} // namespace ns3
