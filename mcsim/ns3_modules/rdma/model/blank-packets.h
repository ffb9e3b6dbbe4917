// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/packet.h"
#include "ns3/ptr.h"
#include "ns3/simple-ref-count.h"

#include <array>
#include <cstdint>
#include <unordered_map>

namespace ns3
{
namespace mcsim
{

/**
 * @brief Read-only packets of given sizes, made once and shared by every NIC of a stack: an RDMA
 * packet outside verify mode is only its size (its header travels in its fields), so all packets
 * of one size can be one object. Shared by all NICs, the few objects stay in the cache, where a
 * set per NIC would not at 1,000 hosts.
 */
class BlankPackets : public SimpleRefCount<BlankPackets>
{
  public:
    /** The packet of size bytes (receivers must not change it). */
    const Ptr<Packet>& Get(uint32_t size)
    {
        Slot& slot = m_slots[size % SLOTS];
        if (slot.size != size)
        {
            slot = {size, Make(size)};
        }
        return slot.packet;
    }

  private:
    /** The packet of size bytes from the store, made on first use. */
    Ptr<Packet> Make(uint32_t size);

    static constexpr uint32_t SLOTS = 64; //!< direct-mapped by size: the hot path's lookup

    struct Slot
    {
        uint32_t size = UINT32_MAX; //!< no packet is this large
        Ptr<Packet> packet;
    };

    std::array<Slot, SLOTS> m_slots;
    std::unordered_map<uint32_t, Ptr<Packet>> m_store; //!< every size made so far
};

} // namespace mcsim
} // namespace ns3
