// SPDX-License-Identifier: GPL-2.0-only
#include "tree-reduce.h"

#include "host-sum.h"

#include "ns3/enum.h"
#include "ns3/integer.h"
#include "ns3/make-event.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/nic.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(TreeReduce);
NS_OBJECT_ENSURE_REGISTERED(ReduceChain);
NS_OBJECT_ENSURE_REGISTERED(ReduceBinomial);
NS_OBJECT_ENSURE_REGISTERED(TreeAllreduce);

TypeId
TreeReduce::GetTypeId()
{
    static TypeId tid = AddProtocol(
        TypeId("ns3::mcsim::TreeReduce")
            .SetParent<CollectiveRank>()
            .SetGroupName("Mcsim")
            .AddAttribute("ChunkBytes",
                          "Bytes per RDMA WRITE.",
                          UintegerValue(64 * 1024),
                          MakeUintegerAccessor(&TreeReduce::m_chunkBytes),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("BufferOffset",
                          "Where the rank's buffer begins in its region (bytes).",
                          UintegerValue(0),
                          MakeUintegerAccessor(&TreeReduce::m_bufferOffset),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute(
                "ScratchOffset",
                "Where its partial sum and its children's landing zones begin (bytes; the "
                "largest value: right after the buffer).",
                UintegerValue(AFTER_BUFFER),
                MakeUintegerAccessor(&TreeReduce::m_scratchOffset),
                MakeUintegerChecker<uint64_t>())
            .AddAttribute("Root",
                          "The rank that ends with the sum.",
                          IntegerValue(0),
                          MakeIntegerAccessor(&TreeReduce::m_root),
                          MakeIntegerChecker<int32_t>(0))
            .AddAttribute("ReducePsPerByte",
                          "Picoseconds to add one received byte (as RingReduceScatter's).",
                          UintegerValue(HOST_REDUCE_PS_PER_BYTE),
                          MakeUintegerAccessor(&TreeReduce::m_reducePsPerByte),
                          MakeUintegerChecker<uint64_t>()));
    return tid;
}

TreeReduce::TreeReduce()
    : m_chunkBytes(64 * 1024),
      m_bufferOffset(0),
      m_scratchOffset(AFTER_BUFFER),
      m_root(0),
      m_reducePsPerByte(HOST_REDUCE_PS_PER_BYTE),
      m_chunks(0),
      m_place{{}, -1, 0},
      m_ready(0),
      m_acked(0),
      m_down(0)
{
}

TreeReduce::~TreeReduce() = default;

void
TreeReduce::DoDispose()
{
    m_peers.Clear();
    m_toParent = nullptr;
    m_toChild.clear();
    CollectiveRank::DoDispose();
}

std::vector<uint32_t>
TreeReduce::Distances() const
{
    return {};
}

bool
TreeReduce::Broadcasts() const
{
    return false;
}

std::vector<uint32_t>
TreeReduce::GetRingDistances() const
{
    return Distances();
}

uint32_t
TreeReduce::Rank(uint32_t v) const
{
    return (v + static_cast<uint32_t>(m_root)) % m_nRanks;
}

void
TreeReduce::Wire(uint32_t /* firstGroup */, Ptr<RcQp> next, Ptr<RcQp> prev)
{
    if (static_cast<uint32_t>(m_root) >= m_nRanks)
    {
        throw std::invalid_argument("TreeReduce: Root=" + std::to_string(m_root) +
                                    " is not a rank of " + std::to_string(m_nRanks));
    }
    m_peers.Wire(next, prev, Distances());
    m_chunks = static_cast<uint32_t>(ChunkCount(m_bytesPerRank, m_chunkBytes));
    m_place = PlaceOf((m_rank + m_nRanks - static_cast<uint32_t>(m_root)) % m_nRanks);
    m_missing.assign(m_chunks, static_cast<uint32_t>(m_place.children.size()));
}

void
TreeReduce::WireRings(std::vector<Ptr<RcQp>> out, std::vector<Ptr<RcQp>> in)
{
    m_peers.WireRings(out, in);
}

uint64_t
TreeReduce::ChunkBytes(uint32_t i) const
{
    return std::min<uint64_t>(m_chunkBytes,
                              m_bytesPerRank - static_cast<uint64_t>(i) * m_chunkBytes);
}

uint64_t
TreeReduce::Buffer(uint64_t at) const
{
    return m_bufferOffset + at;
}

uint64_t
TreeReduce::Sum(uint64_t at) const
{
    return (m_scratchOffset == AFTER_BUFFER ? m_bufferOffset + m_bytesPerRank : m_scratchOffset) +
           at;
}

uint64_t
TreeReduce::Zone(uint32_t slot, uint64_t at) const
{
    return Sum((1 + uint64_t{slot}) * m_bytesPerRank + at);
}

void
TreeReduce::Start()
{
    for (uint32_t child : m_place.children)
    {
        const Ptr<RcQp> in = m_peers.For(Rank(child), m_rank, m_rank, m_nRanks);
        in->PostRecv(m_chunks);
        CarryLines(in);
        m_toChild.push_back(m_peers.For(m_rank, Rank(child), m_rank, m_nRanks));
        CarryLines(m_toChild.back());
        m_downDelay.push_back(StepDelayTo(PeerHost(m_toChild.back())));
    }
    if (m_place.parent >= 0)
    {
        const uint32_t parent = Rank(static_cast<uint32_t>(m_place.parent));
        m_toParent = m_peers.For(m_rank, parent, m_rank, m_nRanks);
        CarryLines(m_toParent);
        m_upDelay = StepDelayTo(PeerHost(m_toParent));
        const Ptr<RcQp> in = m_peers.For(parent, m_rank, m_rank, m_nRanks);
        CarryLines(in);
        if (Broadcasts())
        {
            in->PostRecv(m_chunks); // the sum
        }
    }
    const uint64_t n = m_bytesPerRank;
    if (uint8_t* sum = Bytes(Sum(0), n); sum != nullptr)
    {
        std::memcpy(sum, Bytes(Buffer(0), n), n); // the partial sum starts as the rank's own bytes
    }
    if (m_place.children.empty())
    {
        for (uint32_t i = 0; i < m_chunks; ++i)
        {
            Ready(i);
        }
    }
}

void
TreeReduce::OnReceive(uint32_t /* host */, const Completion& c)
{
    m_stats.chunksReceived++;
    if ((c.imm & DOWN) != 0)
    {
        Down(c.imm & ~DOWN);
        return;
    }
    const uint32_t slot = c.imm / m_chunks;
    const uint32_t i = c.imm % m_chunks;
    const Time done = ReduceUntil(m_reduceBusyUntil, m_reducePsPerByte, ChunkBytes(i));
    mcsim::Post(done - Simulator::Now(),
                Ptr<EventImpl>(MakeEvent(&TreeReduce::Reduced, this, slot, i), false),
                m_computeSource);
}

void
TreeReduce::Reduced(uint32_t slot, uint32_t i)
{
    const uint64_t n = ChunkBytes(i);
    const uint64_t at = static_cast<uint64_t>(i) * m_chunkBytes;
    if (uint8_t* sum = Bytes(Sum(at), n); sum != nullptr)
    {
        AddInt32(sum, Bytes(Zone(slot, at), n), n);
    }
    if (--m_missing[i] == 0)
    {
        Ready(i);
    }
}

void
TreeReduce::Ready(uint32_t i)
{
    ++m_ready;
    if (m_place.parent < 0 && Broadcasts())
    {
        const uint64_t at = static_cast<uint64_t>(i) * m_chunkBytes;
        if (uint8_t* out = Bytes(Buffer(at), ChunkBytes(i)); out != nullptr)
        {
            std::memcpy(out, Bytes(Sum(at), ChunkBytes(i)), ChunkBytes(i));
        }
        SendDown(i);
        if (m_ready == m_chunks)
        {
            MarkFinished();
        }
        return;
    }
    if (m_place.parent < 0)
    {
        if (m_ready == m_chunks)
        {
            const uint64_t n = m_bytesPerRank;
            if (uint8_t* out = Bytes(Buffer(0), n); out != nullptr)
            {
                std::memcpy(out, Bytes(Sum(0), n), n); // the root's buffer: the sum
            }
            MarkFinished();
        }
        return;
    }
    if (Pipelined())
    {
        SendUp(i);
    }
    else if (m_ready == m_chunks)
    {
        for (uint32_t k = 0; k < m_chunks; ++k)
        {
            SendUp(k);
        }
    }
}

void
TreeReduce::SendUp(uint32_t i)
{
    AfterStep<&TreeReduce::PostUp>(m_upDelay, this, i);
}

void
TreeReduce::PostUp(uint32_t i)
{
    const uint64_t at = static_cast<uint64_t>(i) * m_chunkBytes;
    m_toParent->PostSend(RcQp::Verb::WRITE,
                         ChunkBytes(i),
                         Zone(m_place.slot, at), // the parent's landing zone for it
                         i,
                         true,
                         m_place.slot * m_chunks + i,
                         Sum(at)); // from the partial sum
    m_stats.chunksSent++;
}

void
TreeReduce::SendDown(uint32_t i)
{
    for (uint32_t c = 0; c < m_toChild.size(); ++c)
    {
        AfterStep<&TreeReduce::PostDown>(m_downDelay[c], this, c, i);
    }
}

void
TreeReduce::PostDown(uint32_t child, uint32_t i)
{
    const uint64_t at = static_cast<uint64_t>(i) * m_chunkBytes;
    m_toChild[child]
        ->PostSend(RcQp::Verb::WRITE, ChunkBytes(i), Buffer(at), DOWN | i, true, DOWN | i);
    m_stats.chunksSent++;
}

void
TreeReduce::Down(uint32_t i)
{
    SendDown(i);
    if (++m_down == m_chunks)
    {
        MarkFinished();
    }
}

void
TreeReduce::OnSendComplete(uint32_t /* host */, uint32_t /* qpn */, uint64_t wrId)
{
    if ((wrId & DOWN) == 0 && ++m_acked == m_chunks && !Broadcasts())
    {
        MarkFinished(); // its part is in its parent's hands
    }
}

TypeId
ReduceChain::GetTypeId()
{
    static TypeId tid = TypeId("ns3::mcsim::ReduceChain")
                            .SetParent<TreeReduce>()
                            .SetGroupName("Mcsim")
                            .AddConstructor<ReduceChain>();
    return tid;
}

TreeReduce::Place
ReduceChain::PlaceOf(uint32_t v) const
{
    Place p{{}, v == 0 ? -1 : static_cast<int64_t>(v) - 1, 0};
    if (v + 1 < m_nRanks)
    {
        p.children.push_back(v + 1);
    }
    return p;
}

bool
ReduceChain::Pipelined() const
{
    return true;
}

TypeId
ReduceBinomial::GetTypeId()
{
    static TypeId tid = TypeId("ns3::mcsim::ReduceBinomial")
                            .SetParent<TreeReduce>()
                            .SetGroupName("Mcsim")
                            .AddConstructor<ReduceBinomial>();
    return tid;
}

std::vector<uint32_t>
ReduceBinomial::Distances() const
{
    return PowerOfTwoDistances();
}

TreeReduce::Place
ReduceBinomial::PlaceOf(uint32_t v) const
{
    const uint32_t low = v == 0 ? std::bit_ceil(m_nRanks) : (v & (~v + 1)); // its lowest set bit
    Place p{{}, v == 0 ? -1 : static_cast<int64_t>(v - low), 0};
    for (uint32_t d = 1; d < low && v + d < m_nRanks; d *= 2)
    {
        p.children.push_back(v + d); // slot k: the child v + 2^k
    }
    if (v != 0)
    {
        p.slot = std::countr_zero(low); // its slot at v - 2^j: j
    }
    return p;
}

bool
ReduceBinomial::Pipelined() const
{
    return false;
}

TypeId
TreeAllreduce::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::mcsim::TreeAllreduce")
            .SetParent<TreeReduce>()
            .SetGroupName("Mcsim")
            .AddConstructor<TreeAllreduce>()
            .AddAttribute(
                "Shape",
                "The tree: Heap (v's children 2v+1, 2v+2), InOrder or Second (the two trees "
                "of NCCL's double binary tree).",
                EnumValue(Shape::HEAP),
                MakeEnumAccessor<Shape>(&TreeAllreduce::m_shape),
                MakeEnumChecker(Shape::HEAP,
                                "Heap",
                                Shape::IN_ORDER,
                                "InOrder",
                                Shape::SECOND,
                                "Second"));
    return tid;
}

TreeReduce::Place
TreeAllreduce::InOrder(uint32_t r, uint32_t nRanks)
{
    uint32_t bit = 1; // r's lowest set bit (rank 0: the first power of 2 >= P)
    while (bit < nRanks && (r & bit) == 0)
    {
        bit <<= 1;
    }
    Place p{{}, -1, 0};
    if (r == 0)
    {
        if (nRanks > 1)
        {
            p.children.push_back(bit >> 1); // the root's one child
        }
        return p;
    }
    // its parent: r with that bit cleared and the next one set, or cleared only past the last rank
    const uint64_t up = (r ^ bit) | (uint64_t{bit} << 1);
    p.parent = up < nRanks ? static_cast<int64_t>(up) : static_cast<int64_t>(r ^ bit);
    const uint32_t low = bit >> 1;
    if (low == 0)
    {
        return p; // odd r: a leaf
    }
    p.children.push_back(r - low);
    for (uint32_t d = low; d > 0; d >>= 1) // r + low, halved until it is a rank
    {
        if (uint64_t{r} + d < nRanks)
        {
            p.children.push_back(r + d);
            break;
        }
    }
    return p;
}

TreeReduce::Place
TreeAllreduce::Second(uint32_t r) const
{
    const uint32_t n = m_nRanks;
    const bool mirror = n % 2 == 0;
    auto image = [&](uint32_t x) { return mirror ? n - 1 - x : (x + n - 1) % n; };
    auto back = [&](uint32_t x) { return mirror ? n - 1 - x : (x + 1) % n; };
    Place p = InOrder(image(r), n);
    for (uint32_t& c : p.children)
    {
        c = back(c);
    }
    if (p.parent >= 0)
    {
        p.parent = back(static_cast<uint32_t>(p.parent));
    }
    return p;
}

TreeReduce::Place
TreeAllreduce::PlaceOf(uint32_t v) const
{
    if (m_shape != Shape::HEAP) // the slot: the rank's index among its parent's children
    {
        Place p = m_shape == Shape::IN_ORDER ? InOrder(v, m_nRanks) : Second(v);
        if (p.parent >= 0)
        {
            const uint32_t parent = static_cast<uint32_t>(p.parent);
            const Place up =
                m_shape == Shape::IN_ORDER ? InOrder(parent, m_nRanks) : Second(parent);
            p.slot = static_cast<uint32_t>(std::find(up.children.begin(), up.children.end(), v) -
                                           up.children.begin());
        }
        return p;
    }
    Place p{{}, v == 0 ? -1 : static_cast<int64_t>(v - 1) / 2, v == 0 ? 0 : (v - 1) % 2};
    for (uint64_t c = 2 * uint64_t{v} + 1; c <= 2 * uint64_t{v} + 2 && c < m_nRanks; ++c)
    {
        p.children.push_back(static_cast<uint32_t>(c)); // slot 0: 2v+1, slot 1: 2v+2
    }
    return p;
}

bool
TreeAllreduce::Pipelined() const
{
    return true;
}

bool
TreeAllreduce::Broadcasts() const
{
    return true;
}

std::vector<uint32_t>
TreeAllreduce::Distances() const
{
    if (m_shape != Shape::HEAP)
    {
        return PowerOfTwoDistances(); // the in-order trees' edges join r and r +- 2^k
    }
    std::vector<uint32_t> d; // child - parent: v+1 and v+2 for every parent v
    for (uint64_t v = 0; 2 * v + 1 < m_nRanks; ++v)
    {
        for (uint64_t c = 2 * v + 1; c <= 2 * v + 2 && c < m_nRanks; ++c)
        {
            if (c - v > 1)
            {
                d.push_back(static_cast<uint32_t>(c - v));
            }
        }
    }
    std::sort(d.begin(), d.end());
    d.erase(std::unique(d.begin(), d.end()), d.end());
    return d;
}

} // namespace mcsim
} // namespace ns3
