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
 * @brief One rank of the binomial tree Broadcast (MPICH's): with v the rank's place counted from
 * the root, v receives the whole buffer from v - 2^j (2^j the lowest set bit of v), then sends
 * it to v + 2^k for k = j-1 down to 0 (the root: from ceil(log2 P) - 1), where v + 2^k < P, one
 * child after the other: the next child's RDMA WRITEs (ChunkBytes each, into the same place) are
 * posted when the last one of the previous child has completed (its ACK is back), as a blocking
 * send would. Its QPs: the ring's (distance 1) and rings at distances 2, 4, ... < P.
 */
class BroadcastBinomial : public CollectiveRank
{
  public:
    static TypeId GetTypeId();
    BroadcastBinomial();
    ~BroadcastBinomial() override;

    void Wire(uint32_t firstGroup, Ptr<RcQp> next, Ptr<RcQp> prev) override;
    std::vector<uint32_t> GetRingDistances() const override;
    void WireRings(std::vector<Ptr<RcQp>> out, std::vector<Ptr<RcQp>> in) override;
    void Start() override;
    void OnReceive(uint32_t host, const Completion& c) override;
    void OnSendComplete(uint32_t host, uint32_t qpn, uint64_t wrId) override;

  protected:
    void DoDispose() override;

  private:
    /** The rank has the buffer: send it to the next child, if any. */
    void SendToNextChild();

    uint32_t m_chunkBytes;          //!< "ChunkBytes"
    int32_t m_root;                 //!< "Root"
    uint32_t m_chunks;              //!< RDMA WRITEs per child
    uint64_t m_received;            //!< chunks in
    uint64_t m_completed;           //!< chunks to the current child whose ACK is back
    RingPeers m_peers;              //!< its QPs on the team's rings
    std::vector<uint32_t> m_toSend; //!< the children's k still to send to, next last
};

} // namespace mcsim
} // namespace ns3
