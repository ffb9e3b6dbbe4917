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
    /** A contribution that came in on inPort has been summed at `at`: its ingress buffer is free.
     */
    virtual void Consumed(uint32_t inPort, const Ptr<Packet>& packet, Time at) = 0;
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
 * A switch in aggregation tree t expects, for every sequence number of t, one contribution from
 * each of its tree children (hosts, or child switches sending their partial sums) and sends the
 * sum up to its parent port; the root sends it to the reduction's destination (FabricHeader's
 * flow of the contributions). Sums are 32-bit integers, element by element, wrapping (verify
 * mode: SetSumPayloads); otherwise only the timing is modelled and a sum is one of the
 * contributions' shared packets.
 *
 * ALU: one server per switch, first come first served: a contribution of b bytes (its whole
 * packet) occupies it b / Rate, starting no earlier than its arrival, and it is summed no earlier
 * than its last bit is in. Its ingress buffer frees then (the owner returns the credit); a sum
 * leaves when its last contribution is summed.
 *
 * Buffer: a tree holds `window` slots of partial sums (the switch's buffer split among its
 * trees). Slots go by sequence number: with base the lowest sequence number not yet complete, a
 * contribution for base <= s < base + window is summed into its slot; one for s >= base + window
 * waits, holding its ingress buffer (so a lossless upstream stalls), until base moves on. Every
 * contributor sends in sequence order over FIFO links, so the base's contributions are never
 * behind a waiting one and the reduction cannot deadlock (a window of 2 or more absorbs two sums
 * completing at one instant and leaving in either order).
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
