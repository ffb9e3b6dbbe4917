// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "collective-rank.h"
#include "host-sum.h"
#include "ring-peers.h"

#include "ns3/mcsim/rc-qp.h"

#include <cstdint>
#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * @brief What the Reduce baselines share: rank v (counted from Root) adds what its children send
 * to its own buffer and sends the sum to its parent; the root ends with the sum of every rank's
 * BytesPerRank bytes. Chunks of ChunkBytes travel as RDMA WRITEs with immediate (slot x chunks +
 * i, the slot the child has at its parent) into the parent's landing zone for that child; a
 * received chunk goes on the host's reduction engine (ReducePsPerByte per byte, one chunk at a
 * time). Verify mode's region: the rank's buffer [B, B + N) (B: BufferOffset), its partial sum
 * [S, S + N) (S: ScratchOffset, default B + N; the buffer stays as it was on every rank but the
 * root, which ends with the sum in it), then a landing zone of N per child slot. QPs: the ring and
 * the rings of Distances().
 */
class TreeReduce : public CollectiveRank
{
  public:
    static TypeId GetTypeId();
    TreeReduce();
    ~TreeReduce() override;

    void Wire(uint32_t firstGroup, Ptr<RcQp> next, Ptr<RcQp> prev) override;
    std::vector<uint32_t> GetRingDistances() const override;
    void WireRings(std::vector<Ptr<RcQp>> out, std::vector<Ptr<RcQp>> in) override;
    void Start() override;
    void OnReceive(uint32_t host, const Completion& c) override;
    void OnSendComplete(uint32_t host, uint32_t qpn, uint64_t wrId) override;

  protected:
    /** @brief A rank's place: its children (their slot = the index) and its parent (none: root). */
    struct Place
    {
        std::vector<uint32_t> children; //!< places v of the children
        int64_t parent;                 //!< place of the parent, -1 for the root
        uint32_t slot;                  //!< this rank's slot at its parent
    };

    /** The tree: the place of v (0 = the root) among P. */
    virtual Place PlaceOf(uint32_t v) const = 0;
    /** Send each chunk as soon as its sum is complete (a chain), or the whole buffer once complete.
     */
    virtual bool Pipelined() const = 0;
    /** Ring distances the tree's edges need besides 1. */
    virtual std::vector<uint32_t> Distances() const;
    /** An Allreduce: the root sends every summed chunk back down the tree, and every rank is done
     * once it has them all (false, a Reduce: a rank is done once its sums are acknowledged). */
    virtual bool Broadcasts() const;

    /** The immediate of a chunk on its way down: DOWN | its number. */
    static constexpr uint32_t DOWN = 1U << 31;
    /** ScratchOffset's default: right after the buffer. */
    static constexpr uint64_t AFTER_BUFFER = UINT64_MAX;

    void DoDispose() override;
    uint32_t Rank(uint32_t v) const; //!< the rank at place v

  private:
    uint64_t ChunkBytes(uint32_t i) const;
    uint64_t Buffer(uint64_t at) const;              //!< region offset of the buffer's byte at
    uint64_t Sum(uint64_t at) const;                 //!< ... of the partial sum's
    uint64_t Zone(uint32_t slot, uint64_t at) const; //!< ... of a child slot's landing zone's
    void Reduced(uint32_t slot, uint32_t i);
    void Ready(uint32_t i);    //!< chunk i's sum is complete
    void SendDown(uint32_t i); //!< chunk i of the sum, from the buffer to every child
    void Down(uint32_t i);     //!< chunk i of the sum is in the buffer
    void SendUp(uint32_t i); //!< chunk i of the partial sum to the parent (after the step's delay)
    void PostUp(uint32_t i); //!< SendUp's post, now
    void PostDown(uint32_t child, uint32_t i); //!< SendDown's post to one child slot, now

    uint32_t m_chunkBytes;            //!< "ChunkBytes"
    uint64_t m_bufferOffset;          //!< "BufferOffset"
    uint64_t m_scratchOffset;         //!< "ScratchOffset"
    int32_t m_root;                   //!< "Root"
    uint64_t m_reducePsPerByte;       //!< "ReducePsPerByte"
    uint32_t m_chunks;                //!< chunks of the buffer
    Place m_place;                    //!< this rank's
    std::vector<uint32_t> m_missing;  //!< per chunk: children whose part is not added yet
    uint64_t m_ready;                 //!< chunks whose sum is complete
    uint64_t m_acked;                 //!< chunks sent up and acknowledged
    uint64_t m_down;                  //!< chunks of the sum received from the parent
    Time m_reduceBusyUntil;           //!< the reduction engine is busy until then
    RingPeers m_peers;                //!< its QPs on the team's rings
    Ptr<RcQp> m_toParent;             //!< the QP it sends up on (Start: looked up once)
    std::vector<Ptr<RcQp>> m_toChild; //!< the QP it sends down on, per child slot
    Time m_upDelay;                   //!< the protocol's, to the parent (StepDelayTo, at Start)
    std::vector<Time> m_downDelay;    //!< the protocol's, per child slot
};

/** @brief The pipelined chain Reduce: place P-1 sends to P-2, ..., 1 to the root; each chunk is
 * passed on as soon as its partial sum is complete. */
class ReduceChain : public TreeReduce
{
  public:
    static TypeId GetTypeId();

  protected:
    Place PlaceOf(uint32_t v) const override;
    bool Pipelined() const override;
};

/** @brief MPICH's binomial tree Reduce (MPIR_Reduce_binomial): v receives from v + 2^k for every
 * 2^k below its lowest set bit (the root: below P), adds them, and once the whole buffer is summed
 * sends it to v - 2^j (2^j its lowest set bit). */
class ReduceBinomial : public TreeReduce
{
  public:
    static TypeId GetTypeId();

  protected:
    Place PlaceOf(uint32_t v) const override;
    bool Pipelined() const override;
    std::vector<uint32_t> Distances() const override;
};

/** @brief A pipelined binary tree Allreduce: each chunk is summed up the tree as in ReduceChain
 * and, once the root has it, sent back down, every rank passing it to its children as soon as it is
 * in. Shape: HEAP (place v's children are 2v+1 and 2v+2), or one of the two trees of NCCL's double
 * binary tree: IN_ORDER (rank r below r -/+ its lowest set bit, rank 0 the root with one child) or
 * SECOND (the same tree of P-1-r for even P, its mirror; of r-1 for odd P, shifted by one), so that
 * for even P a rank is inside one tree and a leaf of the other. The double tree runs one team of
 * each on half the buffer (BufferOffset, ScratchOffset keep their regions apart). */
class TreeAllreduce : public TreeReduce
{
  public:
    enum class Shape
    {
        HEAP,
        IN_ORDER,
        SECOND,
    };

    static TypeId GetTypeId();

  protected:
    Place PlaceOf(uint32_t v) const override;
    bool Pipelined() const override;
    bool Broadcasts() const override;
    std::vector<uint32_t> Distances() const override;

  private:
    /** Rank r's parent (-1: the root) and children in the in-order tree over P ranks. */
    static Place InOrder(uint32_t r, uint32_t nRanks);
    Place Second(uint32_t r) const; //!< SECOND: InOrder of r's image, mapped back

    Shape m_shape{Shape::HEAP}; //!< "Shape"
};

} // namespace mcsim
} // namespace ns3
