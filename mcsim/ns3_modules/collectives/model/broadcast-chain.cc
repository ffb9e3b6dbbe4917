// SPDX-License-Identifier: GPL-2.0-only
#include "broadcast-chain.h"

#include "ns3/integer.h"

#include <stdexcept>
#include <string>

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(BroadcastChain);

TypeId
BroadcastChain::GetTypeId()
{
    static TypeId tid = TypeId("ns3::mcsim::BroadcastChain")
                            .SetParent<RingRank>()
                            .SetGroupName("Mcsim")
                            .AddConstructor<BroadcastChain>()
                            .AddAttribute("Root",
                                          "The rank whose buffer every rank gets.",
                                          IntegerValue(0),
                                          MakeIntegerAccessor(&BroadcastChain::m_root),
                                          MakeIntegerChecker<int32_t>(0));
    return tid;
}

BroadcastChain::BroadcastChain()
    : m_root(0),
      m_received(0)
{
}

BroadcastChain::~BroadcastChain() = default;

uint32_t
BroadcastChain::Position() const
{
    return (m_rank + m_nRanks - static_cast<uint32_t>(m_root)) % m_nRanks;
}

void
BroadcastChain::Wire(uint32_t /* firstGroup */, Ptr<RcQp> next, Ptr<RcQp> prev)
{
    if (static_cast<uint32_t>(m_root) >= m_nRanks)
    {
        throw std::invalid_argument("BroadcastChain: Root=" + std::to_string(m_root) +
                                    " is not a rank of " + std::to_string(m_nRanks));
    }
    Connect(next, prev); // posts more receives than the chain's chunks: the ring's, unused
}

void
BroadcastChain::Start()
{
    if (Position() != 0)
    {
        return;
    }
    MarkFinished(); // the root holds the buffer
    for (uint32_t i = 0; i < m_chunks; ++i)
    {
        Write(i);
    }
}

void
BroadcastChain::OnReceive(uint32_t /* host */, const Completion& c)
{
    m_stats.chunksReceived++;
    if (Position() != m_nRanks - 1)
    {
        Write(c.imm);
    }
    if (++m_received == m_chunks)
    {
        MarkFinished();
    }
}

} // namespace mcsim
} // namespace ns3
