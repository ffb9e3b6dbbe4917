// SPDX-License-Identifier: GPL-2.0-only
#pragma once

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
 * @brief What the logarithmic Allgathers share: ceil(log2 P) steps; in each the rank WRITEs some
 * of the shards it holds (ranges of shard numbers, each at its place s x BytesPerRank, in
 * ChunkBytes pieces, immediate = the step) to one rank and receives others from one rank; step k+1
 * starts once step k's shards are in and its own WRITEs are acknowledged (as MPI_Sendrecv). QPs:
 * the ring and rings at distances 2, 4, ... < P; a pair of ranks uses the ring at the distance from
 * the sender to the receiver if that is a power of 2, else the one from the receiver to the sender.
 */
class StepAllgather : public CollectiveRank
{
  public:
    static TypeId GetTypeId();
    StepAllgather();
    ~StepAllgather() override;

    void Wire(uint32_t firstGroup, Ptr<RcQp> next, Ptr<RcQp> prev) override;
    std::vector<uint32_t> GetRingDistances() const override;
    void WireRings(std::vector<Ptr<RcQp>> out, std::vector<Ptr<RcQp>> in) override;
    void Start() override;
    void OnReceive(uint32_t host, const Completion& c) override;
    void OnSendComplete(uint32_t host, uint32_t qpn, uint64_t wrId) override;

  protected:
    /** @brief Shards first .. first + count - 1 (no wrap). */
    struct Range
    {
        uint32_t first;
        uint32_t count;
    };

    /** @brief One step: the shards sent to `to`, and the rank the step's shards come from. */
    struct Step
    {
        uint32_t to;
        std::vector<Range> send;
        uint32_t from;
        std::vector<Range> receive;
    };

    /** The algorithm's steps for this rank (after Setup: m_rank, m_nRanks). */
    virtual std::vector<Step> PlanSteps() const = 0;
    /** Shards first, first+1, ... (count of them, modulo P) as ranges that do not wrap. */
    std::vector<Range> Wrapped(uint32_t first, uint32_t count) const;

    void DoDispose() override;

  private:
    uint64_t Chunks(const std::vector<Range>& ranges) const; //!< WRITEs that carry them
    void Send(uint32_t k);
    void Advance();

    uint32_t m_chunkBytes; //!< "ChunkBytes"
    std::vector<Step> m_steps;
    std::vector<uint64_t> m_got;   //!< chunks received in each step
    std::vector<uint64_t> m_acked; //!< WRITEs of each step acknowledged
    uint32_t m_step;               //!< the step in progress
    RingPeers m_peers;             //!< its QPs on the team's rings
};

/** @brief Recursive doubling (P a power of 2): in step k rank r and r XOR 2^k swap the 2^k shards
 * each holds (its aligned group of 2^k). */
class RecursiveDoublingAllgather : public StepAllgather
{
  public:
    static TypeId GetTypeId();

  protected:
    std::vector<Step> PlanSteps() const override;
};

/** @brief Bruck's Allgather (any P): in step k (d = 2^k) rank r sends the min(d, P-d) shards
 * r, r+1, ... it holds to r - d and receives r+d, r+d+1, ... from r + d, every shard written at
 * its own place (no final rotation). */
class BruckAllgather : public StepAllgather
{
  public:
    static TypeId GetTypeId();

  protected:
    std::vector<Step> PlanSteps() const override;
};

} // namespace mcsim
} // namespace ns3
