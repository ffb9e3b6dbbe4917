// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "block-split.h"
#include "collective-rank.h"

#include "ns3/mcsim/rc-qp.h"

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * @brief What the ring collectives share: RC QPs to r+1 and from r-1, data in P blocks, each cut
 * into the same number of ChunkBytes pieces, each piece moved by one RDMA WRITE with immediate
 * (the global chunk id, block * chunks per block + i, plus a phase's base) into the same place of
 * r+1's region (or of its landing zone). A piece with no bytes (a block shorter than the others)
 * is a 0-byte SEND with the same immediate, so every piece keeps its step in the ring.
 *
 * The blocks are BytesPerRank each at block * BytesPerRank (Allgather, Reduce-Scatter), or one
 * buffer of BytesPerRank split into P blocks (Allreduce: SplitBlocks), in 4-byte elements when
 * BytesPerRank is a multiple of 4, the first BytesPerRank mod P elements one longer.
 *
 * A protocol (NCCL's Simple, LL, LL128; mcsim.config.protocols) adds two things: lines on the
 * wire (LineBytes, LineDataBytes: RcQp::SetLines on both QPs), and a time before every chunk the
 * rank sends (StepDelayNode to a rank of its own node, StepDelayNet to another node's), so a
 * chunk that crosses k ranks waits k steps, as NCCL's latency model counts them.
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
    /** The blocks are one buffer of BytesPerRank split into P (before Connect). */
    void SplitBlocks();
    uint64_t BlockBytes(uint32_t b) const;   //!< bytes of block b
    uint64_t BlockOffset(uint32_t b) const;  //!< where block b starts in the region
    uint64_t ChunkBytes(uint32_t id) const;  //!< bytes of chunk id (0 past its block's end)
    uint64_t ChunkOffset(uint32_t id) const; //!< where chunk id starts in the region
    /** Send chunk id to r+1 at base + ChunkOffset(id) with immediate imm (after the step's delay).
     */
    void Write(uint32_t id, uint64_t base, uint32_t imm);
    void Write(uint32_t id); //!< Write(id, 0, id)

    uint32_t m_chunkBytes; //!< "ChunkBytes"
    uint32_t m_chunks;     //!< chunks per block
    Ptr<RcQp> m_next;
    Ptr<RcQp> m_prev;

  private:
    void Send(uint32_t id, uint64_t base, uint32_t imm); //!< Write's post, now

    Time m_stepDelay;    //!< the protocol's, to r+1 (StepDelayTo, at Connect)
    bool m_split;        //!< SplitBlocks()
    BlockSplit m_blocks; //!< split blocks (set at Connect)
};

} // namespace mcsim
} // namespace ns3
