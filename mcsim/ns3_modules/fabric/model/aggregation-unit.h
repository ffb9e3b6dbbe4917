// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "fabric-header.h"

#include "ns3/mcsim/counter-table.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <deque>
#include <vector>

namespace ns3
{
namespace mcsim
{

/** @brief What an AggregationUnit asks of its switch. */
class AggregationOwner
{
  public:
    virtual ~AggregationOwner() = default;
    /** A contribution that came in on inPort (with these fields) has been summed at `at`: its
     * ingress buffer is free. */
    virtual void Consumed(uint32_t inPort,
                          const Ptr<Packet>& packet,
                          const FabricHeader::Fields& fields,
                          Time at) = 0;
    /**
     * A sum is complete at `ready`: send it to `parent` (a port), or, at the root (parent ==
     * AggregationUnit::ROOT), to fields.dst (a host, or a group).
     */
    virtual void Emit(const Ptr<Packet>& packet,
                      const FabricHeader::Fields& fields,
                      uint32_t parent,
                      Time ready) = 0;
};

/**
 * @brief A switch's in-network reduction engine (SHARP-style streaming aggregation).
 *
 * The model: fabric/doc/fabric.md, "AggregationUnit".
 */
class AggregationUnit
{
  public:
    static constexpr uint32_t ROOT = UINT32_MAX; //!< the parent port of a tree's root

    /** The fields of AggregationUnit::Counters, in order: X(member, initial, python_name). */
#define MCSIM_AGGREGATION_COUNTERS(X)                                                              \
    /* contributions summed */                                                                     \
    X(contributions, 0, "contributions")                                                           \
    /* sums sent (up the tree, or from the root) */                                                \
    X(sums, 0, "sums")                                                                             \
    /* contributions that waited for a slot */                                                     \
    X(waits, 0, "waits")                                                                           \
    /* most partial sums held at once (all trees) */                                               \
    X(peakSlots, 0, "peak_slots")                                                                  \
    /* time the ALU spent summing, in ps */                                                        \
    X(aluBusyPs, 0, "alu_busy_ps")

    /** @brief Counters of one switch's unit, read in bulk after the run. */
    struct Counters
    {
        MCSIM_COUNTERS(MCSIM_AGGREGATION_COUNTERS)
    };

    /** @param rateBps ALU throughput in bit/s (> 0) */
    AggregationUnit(AggregationOwner* owner, uint64_t rateBps);

    /**
     * Tree t on this switch: its parent port (ROOT at the root), the contributions per sequence
     * number (its tree children) and its slots (>= 1).
     * @throws std::invalid_argument for no children or no slot
     */
    void SetTree(uint32_t tree, uint32_t parent, uint32_t children, uint32_t window);
    bool HasTree(uint32_t tree) const;
    /** Sum payloads (verify mode): the packets carry 32-bit integers. */
    void SetSumPayloads(bool sum);

    /**
     * A contribution for a tree this switch has (HasTree) arrived now on inPort; its last bit
     * is in at lastBit.
     */
    void Receive(const Ptr<Packet>& packet,
                 const FabricHeader::Fields& fields,
                 uint32_t inPort,
                 Time lastBit);

    const Counters& GetCounters() const;

  private:
    /** @brief A partial sum. */
    struct Slot
    {
        uint64_t seq = UINT64_MAX; //!< the sequence number it holds (UINT64_MAX: none yet)
        uint32_t count = 0;        //!< contributions summed
        Ptr<Packet> packet;        //!< the first contribution (the sum's size and, no sums, itself)
        FabricHeader::Fields fields{};
        std::vector<uint32_t> sum; //!< verify mode: the running sum
    };

    /** @brief A contribution beyond its tree's window. */
    struct Waiting
    {
        Ptr<Packet> packet;
        FabricHeader::Fields fields;
        uint32_t inPort;
        Time lastBit;
    };

    /** @brief One tree's state on this switch. */
    struct Tree
    {
        uint32_t parent = ROOT;
        uint32_t children = 0;
        uint64_t base = 0;           //!< lowest sequence number not yet complete
        std::vector<Slot> slots;     //!< sequence number s lives in slots[s % window]
        std::deque<Waiting> waiting; //!< beyond the window, in arrival order
    };

    /** Sum one contribution into its slot (base <= seq < base + window). */
    void Sum(Tree& t,
             const Ptr<Packet>& packet,
             const FabricHeader::Fields& fields,
             uint32_t inPort,
             Time lastBit);
    /** Move t's base past complete slots and sum the waiting contributions now in the window. */
    void Advance(Tree& t);

    AggregationOwner* m_owner;
    uint64_t m_rateBps;
    bool m_sumPayloads;
    Time m_aluBusyUntil;
    std::vector<Tree> m_trees; //!< by tree id (children == 0: not on this switch)
    uint64_t m_open;           //!< partial sums held, all trees
    Counters m_counters;
};

} // namespace mcsim
} // namespace ns3
