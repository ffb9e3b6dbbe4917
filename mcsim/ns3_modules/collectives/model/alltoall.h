// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "collective-rank.h"

#include "ns3/mcsim/rc-qp.h"

#include <cstdint>
#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * @brief One rank of an Alltoall over RC RDMA WRITEs with immediate: rank r's region holds a send
 * buffer of P blocks of BytesPerRank (block j for rank j) and after it a receive buffer of P
 * blocks (block i from rank i); block j goes to rank j's receive block r in ChunkBytes WRITEs
 * (immediate: r x chunks + i), r's own block is copied locally.
 *
 * Pairwise (MPICH's pairwise exchange): in step s = 1 .. P-1 rank r sends to r+s and receives
 * from r-s; step s+1 starts once step s's WRITEs are acknowledged and r-s's block is in. Else all
 * at once: every destination's WRITEs are posted at the start (r+1, r+2, ...), so every rank's
 * link receives from P-1 senders at once (incast). QPs: one RC pair for every distance 1 .. P-1.
 */
class Alltoall : public CollectiveRank
{
  public:
    static TypeId GetTypeId();
    Alltoall();
    ~Alltoall() override;

    void Wire(uint32_t firstGroup, Ptr<RcQp> next, Ptr<RcQp> prev) override;
    std::vector<uint32_t> GetRingDistances() const override;
    void WireRings(std::vector<Ptr<RcQp>> out, std::vector<Ptr<RcQp>> in) override;
    void Start() override;
    void OnReceive(uint32_t host, const Completion& c) override;
    void OnSendComplete(uint32_t host, uint32_t qpn, uint64_t wrId) override;

  protected:
    void DoDispose() override;

  private:
    void SendTo(uint32_t distance); //!< block r+distance, to rank r+distance
    void Advance();                 //!< pairwise: start the steps whose predecessors are done
    uint64_t ChunkBytes(uint32_t i) const;

    uint32_t m_chunkBytes;        //!< "ChunkBytes"
    bool m_pairwise;              //!< "Pairwise"
    uint32_t m_chunks;            //!< WRITEs per block
    uint64_t m_received;          //!< chunks in, from every sender
    uint32_t m_step;              //!< pairwise: the step in progress (1 .. P-1; P: done)
    uint32_t m_stepAcked;         //!< pairwise: the step's WRITEs acknowledged
    std::vector<uint32_t> m_from; //!< chunks in from each distance d (rank r - d)
    std::vector<Ptr<RcQp>> m_out; //!< m_out[d - 1]: to rank r + d
};

} // namespace mcsim
} // namespace ns3
