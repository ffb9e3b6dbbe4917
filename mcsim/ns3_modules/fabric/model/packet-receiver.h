// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "fabric-header.h"

#include "ns3/packet.h"
#include "ns3/ptr.h"

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * @brief Anything at the far end of a link: a sink, a switch, a NIC.
 *
 * Port::Arrive() hands each packet to the receiver of the link's far end, naming the receiver's
 * input port, after the packet's last bit has arrived.
 */
class PacketReceiver
{
  public:
    virtual ~PacketReceiver() = default;

    /**
     * Take a packet whose last bit arrived now.
     * @param packet the packet, read-only: a multicast switch hands the same Packet object to
     * every copy, and senders share one packet per size (raw flows, RDMA outside verify mode), so
     * a receiver must Copy() before changing it
     * @param fields its FabricHeader fields and the upper layer's header, as the sender gave them
     * @param inPort the receiver's port number on which it arrived
     */
    virtual void Receive(const Ptr<Packet>& packet,
                         const FabricHeader::Fields& fields,
                         uint32_t inPort) = 0;
};

} // namespace mcsim
} // namespace ns3
