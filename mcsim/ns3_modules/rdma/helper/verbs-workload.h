// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "completion-processor.h"
#include "nic.h"
#include "queue-pair.h"
#include "rc-qp.h"
#include "rdma-stack.h"
#include "ud-qp.h"

#include "ns3/object.h"

#include <cstdint>
#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * @brief A verbs-level workload (like perftest): RC operations between host pairs and UD datagram
 * streams to hosts or multicast groups, with their completion times and every counter.
 *
 * It runs on an RdmaStack (a NIC with a completion processor on every host). Each RC operation
 * gets its own connected QP pair; each UD receiver its own UD QP.
 */
class VerbsWorkload : public Object, public QpOwner
{
  public:
    /** @brief RC operation kinds (AddRcOps verb codes). */
    enum RcVerb : uint32_t
    {
        SEND = 0,
        WRITE = 1,
        WRITE_IMM = 2,
        READ = 3,
    };

    static TypeId GetTypeId();
    VerbsWorkload();
    ~VerbsWorkload() override;

    /** Run on this stack (kept alive by the workload). */
    void Setup(Ptr<RdmaStack> stack);

    /**
     * Add n RC operations: src posts verb[i] (RcVerb) of bytes[i] toward dst at startPs; the
     * target of WRITE/READ is offset 0 of the peer's region.
     * @throws std::invalid_argument for a bad host, verb, size or start
     */
    void AddRcOps(const uint32_t* verb,
                  const uint32_t* src,
                  const uint32_t* dst,
                  const uint64_t* bytes,
                  const int64_t* startPs,
                  std::size_t n);

    /** Group g's members each get a UD QP that receives the group's datagrams. */
    void AddUdGroup(uint32_t group, const uint32_t* members, std::size_t n);

    /**
     * Add n UD streams: src sends count[i] datagrams of bytes[i] (<= MTU) to dst[i] (a host, or
     * a group | FabricHeader::GROUP_FLAG the source belongs to), posted at startPs[i].
     */
    void AddUdStreams(const uint32_t* src,
                      const uint32_t* dst,
                      const uint32_t* count,
                      const uint32_t* bytes,
                      const int64_t* startPs,
                      std::size_t n);

    void OnSendComplete(uint32_t host, uint32_t qpn, uint64_t wrId) override;
    void OnReceive(uint32_t host, const Completion& c) override;

    uint32_t GetNRcOps() const;
    uint32_t GetNUdQps() const;
    /** out[op * 4 + k]: requester done ps, responder done ps (NEVER_PS if none), requester QP,
     * responder QP. */
    void GetRcOpTimes(uint64_t* out, std::size_t n) const;
    /** out[op * 2 * RcQp::NUM_COUNTERS + side * NUM + k]: side 0 requester, 1 responder. */
    void GetRcQpCounters(uint64_t* out, std::size_t n) const;
    /** The group column of GetUdQpCounters for a host's unicast UD QP. */
    static constexpr uint32_t NO_GROUP = UINT32_MAX;
    /** out[row * (2 + UdQp::NUM_COUNTERS)]: host, group (or NO_GROUP), then UdQp::Counters. */
    void GetUdQpCounters(uint64_t* out, std::size_t n) const;

  protected:
    void DoDispose() override;

  private:
    struct RcOp
    {
        uint32_t verb;
        uint32_t src;
        uint32_t dst;
        uint64_t bytes;
        Ptr<RcQp> requester;
        Ptr<RcQp> responder;
        uint64_t donePs;          //!< NEVER_PS until the work request completes
        uint64_t responderDonePs; //!< NEVER_PS: no receive completion (WRITE, READ) or not yet
    };

    struct UdReceiver
    {
        uint32_t host;
        uint32_t group; //!< NO_GROUP for the host's unicast UD QP
        Ptr<UdQp> qp;
    };

    void StartRcOp(uint32_t op);
    void StartUdStream(uint32_t srcQp,
                       uint32_t dst,
                       uint32_t dstQpn,
                       uint32_t count,
                       uint32_t bytes);
    Ptr<UdQp> UnicastUdQp(uint32_t host);
    void CheckHost(uint32_t host, const char* what) const;

    Ptr<RdmaStack> m_stack;
    std::vector<RcOp> m_ops;
    std::vector<UdReceiver> m_udQps;
    std::vector<std::vector<uint32_t>> m_rcOpOf; //!< host -> qpn -> RC op index (or UINT32_MAX)
    std::vector<int64_t> m_unicastUd;            //!< host -> index in m_udQps, -1 if none
    std::vector<std::vector<int64_t>> m_groupUd; //!< group -> host -> index, -1 if not a member
};

} // namespace mcsim
} // namespace ns3
