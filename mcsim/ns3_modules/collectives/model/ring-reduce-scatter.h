// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ring-rank.h"

#include "ns3/nstime.h"

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * @brief One rank of the ring Reduce-Scatter over RC RDMA WRITEs, pipelined in chunks.
 *
 * Rank r ends with block r (BytesPerRank) summed over all ranks. Block b's partial sums travel
 * b+1 -> b+2 -> ... -> b: rank r starts block r-1 by WRITEing (with immediate = chunk id) its own
 * contribution to r+1; a rank receiving a chunk of block b adds its own contribution, which takes
 * ReducePsPerByte per byte on a reduction engine that works on one chunk at a time, and passes it
 * on, unless b is its own block, which is then complete. Every rank sends and receives N(P-1).
 */
class RingReduceScatter : public RingRank
{
  public:
    static TypeId GetTypeId();
    RingReduceScatter();
    ~RingReduceScatter() override;

    void Start() override;
    void OnReceive(uint32_t host, const Completion& c) override;

  private:
    Time m_reducePerByte;   //!< "ReducePerByte": time to add one received byte
    uint64_t m_completed;   //!< chunks of this rank's block fully reduced
    Time m_reduceBusyUntil; //!< the reduction engine is busy until then
};

} // namespace mcsim
} // namespace ns3
