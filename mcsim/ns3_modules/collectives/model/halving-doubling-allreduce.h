// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "block-split.h"
#include "collective-rank.h"
#include "ring-peers.h"

#include "ns3/mcsim/rc-qp.h"

#include <cstdint>
#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * @brief One rank of Rabenseifner's Allreduce (P a power of 2): a Reduce-Scatter by recursive
 * halving, then an Allgather by recursive doubling, over the buffer split into P blocks
 * (BlockSplit).
 *
 * Halving, mask = P/2 down to 1: the rank keeps the half of its window of blocks on its side of
 * the partner r XOR mask, WRITEs its partial sums of the other half into the partner's landing zone
 * for that step, and adds the partner's (ReducePsPerByte per byte, one chunk at a time) into its
 * buffer; it ends with block r summed. Doubling, mask = 1 up to P/2: it WRITEs its window of sums
 * into the partner's buffer and receives the partner's. A step starts once the last one's chunks
 * are in (and summed) and its own WRITEs are acknowledged. Immediates: step x 2^24 + the chunk's
 * number in the step. Verify mode's region: the buffer, then one landing zone of N per halving
 * step.
 */
class HalvingDoublingAllreduce : public CollectiveRank
{
  public:
    static TypeId GetTypeId();
    HalvingDoublingAllreduce();
    ~HalvingDoublingAllreduce() override;

    void Wire(uint32_t firstGroup, Ptr<RcQp> next, Ptr<RcQp> prev) override;
    std::vector<uint32_t> GetRingDistances() const override;
    void WireRings(std::vector<Ptr<RcQp>> out, std::vector<Ptr<RcQp>> in) override;
    void Start() override;
    void OnReceive(uint32_t host, const Completion& c) override;
    void OnSendComplete(uint32_t host, uint32_t qpn, uint64_t wrId) override;

    static constexpr uint32_t CHUNK_BITS = 24; //!< the immediate: step << CHUNK_BITS | chunk

  protected:
    void DoDispose() override;

  private:
    /** @brief One step: the partner, the blocks sent [sendLo, sendHi), received [recvLo, recvHi).
     */
    struct Step
    {
        uint32_t partner;
        uint32_t sendLo, sendHi, recvLo, recvHi;
        bool reduce; //!< a halving step: the received blocks are summed
    };

    uint64_t Chunks(uint32_t lo, uint32_t hi) const; //!< WRITEs that carry blocks [lo, hi)
    uint64_t Landing(uint32_t k) const;              //!< step k's landing zone (0: the buffer)
    void Send(uint32_t k);
    void Reduced(uint32_t k, uint64_t at, uint64_t n);
    void Advance();

    uint32_t m_chunkBytes;      //!< "ChunkBytes"
    uint64_t m_reducePsPerByte; //!< "ReducePsPerByte"
    BlockSplit m_blocks;
    std::vector<Step> m_steps;
    std::vector<uint64_t> m_done;  //!< per step: chunks in (and summed, in a halving step)
    std::vector<uint64_t> m_acked; //!< per step: own WRITEs acknowledged
    uint32_t m_step;
    Time m_reduceBusyUntil;
    RingPeers m_peers; //!< its QPs on the team's rings
};

} // namespace mcsim
} // namespace ns3
