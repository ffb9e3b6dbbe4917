// SPDX-License-Identifier: GPL-2.0-only
#include "aggregation-unit.h"

#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/invariant.h"
#include "ns3/mcsim/line-time.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace ns3
{
namespace mcsim
{

AggregationUnit::AggregationUnit(AggregationOwner* owner, uint64_t rateBps)
    : m_owner(owner),
      m_rateBps(rateBps),
      m_sumPayloads(false),
      m_aluBusyUntil(0),
      m_open(0)
{
    MCSIM_ASSERT(rateBps > 0, "AggregationUnit: a rate of 0");
}

void
AggregationUnit::SetTree(uint32_t tree, uint32_t parent, uint32_t children, uint32_t window)
{
    if (children == 0 || window == 0)
    {
        throw std::invalid_argument("aggregation tree " + std::to_string(tree) +
                                    ": a switch in the tree needs >= 1 child and >= 1 slot");
    }
    if (tree >= m_trees.size())
    {
        m_trees.resize(tree + 1);
    }
    Tree& t = m_trees[tree];
    t = Tree();
    t.parent = parent;
    t.children = children;
    t.slots.resize(window);
}

bool
AggregationUnit::HasTree(uint32_t tree) const
{
    return tree < m_trees.size() && m_trees[tree].children != 0;
}

void
AggregationUnit::SetSumPayloads(bool sum)
{
    m_sumPayloads = sum;
}

void
AggregationUnit::Receive(const Ptr<Packet>& packet,
                         const FabricHeader::Fields& fields,
                         uint32_t inPort,
                         Time lastBit)
{
    Tree& t = m_trees[fields.GetTree()];
    MCSIM_ASSERT(fields.seq >= t.base, "a contribution for a sequence number already summed");
    if (fields.seq >= t.base + t.slots.size())
    {
        m_counters.waits++;
        t.waiting.push_back({packet, fields, inPort, lastBit});
        return;
    }
    Sum(t, packet, fields, inPort, lastBit);
    Advance(t);
}

void
AggregationUnit::Sum(Tree& t,
                     const Ptr<Packet>& packet,
                     const FabricHeader::Fields& fields,
                     uint32_t inPort,
                     Time lastBit)
{
    const uint32_t size = packet->GetSize();
    const Time work = LineTime(size, m_rateBps);
    const Time done = std::max(std::max(mcsim::Now(), m_aluBusyUntil) + work, lastBit);
    m_aluBusyUntil = done;
    m_counters.aluBusyPs += static_cast<uint64_t>(work.GetPicoSeconds());
    m_counters.contributions++;
    m_owner->Consumed(inPort, packet, fields, done);

    Slot& slot = t.slots[fields.seq % t.slots.size()];
    if (slot.seq != fields.seq)
    {
        MCSIM_ASSERT(slot.seq == UINT64_MAX || slot.seq < t.base, "a slot reused while open");
        slot.seq = fields.seq;
        slot.count = 0;
        slot.packet = packet;
        slot.fields = fields;
        if (m_sumPayloads)
        {
            slot.sum.assign(size / sizeof(uint32_t), 0);
        }
        m_open++;
        m_counters.peakSlots = std::max(m_counters.peakSlots, m_open);
    }
    MCSIM_ASSERT(size == slot.packet->GetSize(), "contributions of one sum differ in size");
    if (m_sumPayloads)
    {
        std::vector<uint8_t> bytes(size);
        packet->CopyData(bytes.data(), size);
        for (std::size_t i = 0; i < slot.sum.size(); ++i)
        {
            uint32_t x;
            std::memcpy(&x, bytes.data() + i * sizeof(uint32_t), sizeof(x));
            slot.sum[i] += x; // wraps: two's complement int32 sums
        }
    }
    if (++slot.count < t.children)
    {
        return;
    }
    Ptr<Packet> out = slot.packet;
    if (m_sumPayloads)
    {
        std::vector<uint8_t> bytes(size, 0); // the sum, then the contributions' zero padding
        std::memcpy(bytes.data(), slot.sum.data(), slot.sum.size() * sizeof(uint32_t));
        out = Create<Packet>(bytes.data(), size);
        slot.sum.clear();
    }
    slot.packet = nullptr;
    m_open--;
    m_counters.sums++;
    m_owner->Emit(out, slot.fields, t.parent, done);
}

void
AggregationUnit::Advance(Tree& t)
{
    const uint64_t window = t.slots.size();
    for (;;)
    {
        const uint64_t before = t.base;
        for (;;)
        {
            const Slot& b = t.slots[t.base % window];
            if (b.seq != t.base || b.count != t.children)
            {
                break;
            }
            t.base++;
        }
        if (t.base == before || t.waiting.empty())
        {
            return; // only a moving base lets a waiting contribution in
        }
        std::deque<Waiting> later;
        std::deque<Waiting> now;
        for (Waiting& w : t.waiting)
        {
            (w.fields.seq < t.base + window ? now : later).push_back(std::move(w));
        }
        t.waiting.swap(later);
        if (now.empty())
        {
            return;
        }
        for (const Waiting& w : now) // in arrival order
        {
            Sum(t, w.packet, w.fields, w.inPort, w.lastBit);
        }
    }
}

const AggregationUnit::Counters&
AggregationUnit::GetCounters() const
{
    return m_counters;
}

} // namespace mcsim
} // namespace ns3
