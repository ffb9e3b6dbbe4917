// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "collective-rank.h"

#include "ns3/mcsim/ud-qp.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * @brief One rank of a Reduce-Scatter or an Allreduce summed by the switches (in-network
 * reduction; Switch, AggregationUnit).
 *
 * The model: collectives/doc/collectives.md, "InnetReduction".
 */
class InnetReduction : public CollectiveRank
{
  public:
    static TypeId GetTypeId();
    InnetReduction();
    ~InnetReduction() override;

    /** Creates the rank's UD QP (an Allreduce's in the groups firstGroup .. + Trees - 1). */
    void Wire(uint32_t firstGroup, Ptr<RcQp> next, Ptr<RcQp> prev) override;
    uint32_t GetAddressQpn() const override;
    void Introduce(std::shared_ptr<const std::vector<RankAddress>> team) override;
    void Start() override;

    void OnSendComplete(uint32_t host, uint32_t qpn, uint64_t wrId) override;
    void OnReceive(uint32_t host, const Completion& c) override;

  protected:
    void DoDispose() override;
    uint64_t GetReceiveDrops() const override;

  private:
    uint32_t ChunkSize(uint32_t i) const; //!< bytes of chunk i of a block
    void PostMore();

    uint32_t m_chunkBytes; //!< "ChunkBytes"
    uint32_t m_batch;      //!< "Batch"
    uint32_t m_firstTree;  //!< "FirstTree"
    uint32_t m_trees;      //!< "Trees"
    bool m_allreduce;      //!< "Allreduce"

    uint32_t m_group; //!< an Allreduce's first result group
    Ptr<UdQp> m_ud;
    std::shared_ptr<const std::vector<RankAddress>> m_team;
    uint32_t m_chunks;   //!< chunks per block
    uint64_t m_total;    //!< contributions this rank sends
    uint64_t m_posted;   //!< contributions posted so far
    uint32_t m_inFlight; //!< posted, not yet sent
    uint64_t m_received; //!< sums here
};

} // namespace mcsim
} // namespace ns3
