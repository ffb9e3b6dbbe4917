// SPDX-License-Identifier: GPL-2.0-only
#include "rdma-stack.h"

#include "ns3/mcsim/bulk-output.h"
#include "ns3/uinteger.h"

#include <stdexcept>
#include <string>

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(RdmaStack);

namespace
{
const CounterTable g_nicTable("nic",
                              CounterTable::Columns({},
                                                    Nic::Counters::NAMES,
                                                    {"completions", "cpu_busy_ps", "tx_busy_ps"}));
const CounterTable g_ccTable("cc", CounterTable::Columns({}, CcCounters::NAMES));
} // namespace

TypeId
RdmaStack::GetTypeId()
{
    static TypeId tid = TypeId("ns3::mcsim::RdmaStack")
                            .SetParent<Object>()
                            .SetGroupName("Mcsim")
                            .AddConstructor<RdmaStack>()
                            .AddAttribute("RegionBytes",
                                          "Memory every host registers for WRITE and READ "
                                          "targets, in bytes.",
                                          UintegerValue(DEFAULT_REGION_BYTES),
                                          MakeUintegerAccessor(&RdmaStack::m_regionBytes),
                                          MakeUintegerChecker<uint64_t>(1));
    return tid;
}

RdmaStack::RdmaStack()
    : m_regionBytes(DEFAULT_REGION_BYTES)
{
}

RdmaStack::~RdmaStack() = default;

void
RdmaStack::DoDispose()
{
    for (auto& nic : m_nics)
    {
        nic->Dispose();
    }
    m_nics.clear();
    Object::DoDispose();
}

void
RdmaStack::Setup(Ptr<Fabric> fabric,
                 ObjectFactory nicFactory,
                 ObjectFactory processorFactory,
                 ObjectFactory rcFactory,
                 ObjectFactory udFactory)
{
    if (!m_nics.empty())
    {
        throw std::logic_error("RdmaStack::Setup called twice");
    }
    const Ptr<BlankPackets> blank = Create<BlankPackets>();
    for (uint32_t h = 0; h < fabric->GetNHosts(); ++h)
    {
        Ptr<Nic> nic = nicFactory.Create<Nic>();
        nic->ShareBlankPackets(blank);
        nic->SetCongestionControl(m_ccFactory);
        const bool separate = nic->GetSendCompletions() == SendCompletions::SEPARATE;
        nic->Attach(fabric->GetHost(h),
                    processorFactory.Create<CompletionProcessor>(),
                    separate ? processorFactory.Create<CompletionProcessor>() : nullptr);
        m_nics.push_back(nic);
    }
    m_rcFactory = rcFactory;
    m_udFactory = udFactory;
}

void
RdmaStack::SetCongestionControl(ObjectFactory factory)
{
    if (!m_nics.empty())
    {
        throw std::logic_error("RdmaStack::SetCongestionControl after Setup");
    }
    m_ccFactory = factory;
}

uint32_t
RdmaStack::GetNHosts() const
{
    return static_cast<uint32_t>(m_nics.size());
}

Ptr<Nic>
RdmaStack::GetNic(uint32_t host) const
{
    if (host >= m_nics.size())
    {
        throw std::out_of_range("RdmaStack: no host " + std::to_string(host) + " of " +
                                std::to_string(m_nics.size()));
    }
    return m_nics[host];
}

Ptr<RcQp>
RdmaStack::CreateRcQp() const
{
    return m_rcFactory.Create<RcQp>();
}

Ptr<UdQp>
RdmaStack::CreateUdQp() const
{
    return m_udFactory.Create<UdQp>();
}

uint64_t
RdmaStack::GetRegionBytes() const
{
    return m_regionBytes;
}

std::pair<Ptr<RcQp>, Ptr<RcQp>>
RdmaStack::Connect(uint32_t a, QpOwner* ownerA, uint32_t b, QpOwner* ownerB)
{
    Ptr<RcQp> qa = CreateRcQp();
    Ptr<RcQp> qb = CreateRcQp();
    const uint32_t na = GetNic(a)->AddQp(qa, ownerA);
    const uint32_t nb = GetNic(b)->AddQp(qb, ownerB);
    qa->Connect(b, nb, m_regionBytes);
    qb->Connect(a, na, m_regionBytes);
    return {qa, qb};
}

void
RdmaStack::GetHostCounters(uint64_t* out, std::size_t n) const
{
    static_assert(sizeof(Nic::Counters) == Nic::NUM_COUNTERS * sizeof(uint64_t));
    const std::size_t row = HOST_COUNTERS;
    CheckOutputSize("RdmaStack::GetHostCounters", n, m_nics.size() * row);
    for (std::size_t h = 0; h < m_nics.size(); ++h)
    {
        uint64_t* next = m_nics[h]->GetCounters().CopyTo(out + row * h);
        next[0] = m_nics[h]->GetProcessor()->GetProcessed(); // "completions"
        next[1] = m_nics[h]->GetProcessor()->GetBusyPs();    // "cpu_busy_ps"
        const Ptr<CompletionProcessor> tx = m_nics[h]->GetTxProcessor();
        next[2] = tx ? tx->GetBusyPs() : 0; // "tx_busy_ps"
    }
}

void
RdmaStack::GetCcCounters(uint64_t* out, std::size_t n) const
{
    CheckOutputSize("RdmaStack::GetCcCounters", n, m_nics.size() * CcCounters::COUNT);
    for (std::size_t h = 0; h < m_nics.size(); ++h)
    {
        m_nics[h]->GetCcCounters().CopyTo(out + CcCounters::COUNT * h);
    }
}

} // namespace mcsim
} // namespace ns3
