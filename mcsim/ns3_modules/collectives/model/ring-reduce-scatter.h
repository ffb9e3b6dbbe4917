// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "host-sum.h"
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
 * Rank r ends with block r summed over all ranks. Block b's partial sums travel
 * b+1 -> b+2 -> ... -> b: rank r starts block r-1 by WRITEing (with immediate = chunk id) its own
 * contribution to r+1; a rank receiving a chunk of block b adds its own contribution, which takes
 * ReducePsPerByte per byte on a reduction engine that works on one chunk at a time, and passes it
 * on, unless b is its own block, which is then complete. Every rank sends and receives N(P-1).
 *
 * Verify mode (the NIC has memory): the partial sums land in a landing zone of the same size
 * after the rank's buffer (at LandingOffset), the rank adds its own bytes to them there as 32-bit
 * little-endian integers (wrapping), forwards them from there, and copies its own block's sum
 * into its buffer. Without memory the WRITEs target the buffer itself (no bytes move).
 */
class RingReduceScatter : public RingRank
{
  public:
    static TypeId GetTypeId();
    RingReduceScatter();
    ~RingReduceScatter() override;

    void Start() override;
    void OnReceive(uint32_t host, const Completion& c) override;

  protected:
    /** Chunk id of this rank's block is summed (its bytes in the buffer): count it, finish. */
    virtual void OwnChunkReduced(uint32_t id);
    /** Where the landing zone starts (verify mode), else 0. */
    uint64_t LandingOffset() const;

    uint64_t m_completed; //!< chunks of this rank's block fully reduced

  private:
    /** The reduction of chunk id is done: sum its bytes (verify mode), pass it on or keep it. */
    void Reduced(uint32_t id);

    uint64_t m_reducePsPerByte; //!< "ReducePsPerByte": time to add one received byte
    Time m_reduceBusyUntil;     //!< the reduction engine is busy until then
};

} // namespace mcsim
} // namespace ns3
