// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ring-reduce-scatter.h"

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * @brief One rank of the ring Allreduce: a ring Reduce-Scatter of the rank's buffer (BytesPerRank)
 * split into P blocks, then a ring Allgather of the summed blocks, pipelined chunk by chunk: a
 * chunk of the rank's own block goes round the ring again as soon as its sum is complete.
 *
 * The Allgather's immediates are the chunk ids plus P x chunks per block (one QP carries both
 * phases). Every rank sends and receives 2 N (P-1) / P bytes (N a multiple of P: the blocks are
 * equal), in 2 (P-1) steps of a chunk.
 */
class RingAllreduce : public RingReduceScatter
{
  public:
    static TypeId GetTypeId();
    RingAllreduce();
    ~RingAllreduce() override;

    /** The ring's QPs, with receives posted for both phases. */
    void Wire(uint32_t firstGroup, Ptr<RcQp> next, Ptr<RcQp> prev) override;
    void OnReceive(uint32_t host, const Completion& c) override;

  protected:
    /** The chunk's sum is in the buffer: send it round the ring (the Allgather). */
    void OwnChunkReduced(uint32_t id) override;

  private:
    void FinishIfDone();

    uint64_t m_gathered; //!< Allgather chunks received
};

} // namespace mcsim
} // namespace ns3
