// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ring-rank.h"

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * @brief One rank of the pipelined chain Broadcast: root -> root+1 -> ... -> root-1 over the ring's
 * RC QPs, in ChunkBytes chunks (RDMA WRITEs with immediate = the chunk's number, into the same
 * place); a rank passes each chunk on as soon as it is in. The root holds the buffer from the
 * start.
 */
class BroadcastChain : public RingRank
{
  public:
    static TypeId GetTypeId();
    BroadcastChain();
    ~BroadcastChain() override;

    void Wire(uint32_t firstGroup, Ptr<RcQp> next, Ptr<RcQp> prev) override;
    void Start() override;
    void OnReceive(uint32_t host, const Completion& c) override;

  private:
    uint32_t Position() const; //!< the rank's place in the chain: 0 for the root

    int32_t m_root;      //!< "Root"
    uint64_t m_received; //!< chunks in
};

} // namespace mcsim
} // namespace ns3
