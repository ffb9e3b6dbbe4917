// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "nic.h"
#include "rc-qp.h"
#include "ud-qp.h"

#include "ns3/mcsim/fabric.h"
#include "ns3/object-factory.h"
#include "ns3/object.h"

#include <cstdint>
#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * @brief The RDMA layer of a whole fabric: a NIC with a completion processor on every host, and
 * the factories of the QPs that applications create on them.
 */
class RdmaStack : public Object
{
  public:
    static TypeId GetTypeId();
    RdmaStack();
    ~RdmaStack() override;

    /**
     * Put a NIC (nicFactory) with a completion processor (processorFactory) on every host, and a
     * second one for its send completions if the NIC's SendCompletions is Separate; QPs come from
     * rcFactory and udFactory; every host registers RegionBytes for WRITE/READ.
     */
    void Setup(Ptr<Fabric> fabric,
               ObjectFactory nicFactory,
               ObjectFactory processorFactory,
               ObjectFactory rcFactory,
               ObjectFactory udFactory);

    /** Every NIC's QPs get a congestion control of this factory's (a CongestionControl: Dcqcn,
     * Hpcc, ...); before Setup. Without it every QP sends at the line rate. */
    void SetCongestionControl(ObjectFactory factory);

    uint32_t GetNHosts() const;
    Ptr<Nic> GetNic(uint32_t host) const; //!< throws std::out_of_range
    Ptr<RcQp> CreateRcQp() const;
    Ptr<UdQp> CreateUdQp() const;
    uint64_t GetRegionBytes() const;

    /**
     * Create and connect an RC QP pair between hosts a and b.
     * @return the pair (a's QP, b's QP)
     */
    std::pair<Ptr<RcQp>, Ptr<RcQp>> Connect(uint32_t a,
                                            QpOwner* ownerA,
                                            uint32_t b,
                                            QpOwner* ownerB);

    /** A host's row of GetHostCounters: Nic::Counters and 3 more. */
    static constexpr uint32_t HOST_COUNTERS = Nic::NUM_COUNTERS + 3;
    /** out[host * HOST_COUNTERS]: Nic::Counters, completions processed, busy ps, and the
     * Separate send completion processor's busy ps (0 without one). */
    void GetHostCounters(uint64_t* out, std::size_t n) const;
    /** Every NIC's CcCounters (congestion control), host by host. */
    void GetCcCounters(uint64_t* out, std::size_t n) const;

  protected:
    void DoDispose() override;

  private:
    static constexpr uint64_t DEFAULT_REGION_BYTES = uint64_t{1} << 30; //!< 1 GiB per host

    std::vector<Ptr<Nic>> m_nics;
    ObjectFactory m_rcFactory;
    ObjectFactory m_udFactory;
    ObjectFactory m_ccFactory; //!< no TypeId: no congestion control
    uint64_t m_regionBytes;    //!< "RegionBytes"
};

} // namespace mcsim
} // namespace ns3
