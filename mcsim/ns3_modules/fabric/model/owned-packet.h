// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/packet.h"
#include "ns3/ptr.h"

#include <utility>

namespace ns3
{
namespace mcsim
{

/**
 * @brief One counted reference to a packet, for the queues of the hot path.
 *
 * ns-3's Ptr has no move: every copy into or out of a queue changes the reference count (an
 * out-of-line call). This handle takes its reference once, moves without touching the count, and
 * hands the reference to a Ptr at the end (Release), so a packet's hop costs one Ref and one Unref.
 */
class OwnedPacket
{
  public:
    OwnedPacket() = default;

    /** Take a reference to packet (may be null). */
    explicit OwnedPacket(const Ptr<Packet>& packet)
        : m_packet(PeekPointer(packet))
    {
        if (m_packet != nullptr)
        {
            m_packet->Ref();
        }
    }

    OwnedPacket(OwnedPacket&& other) noexcept
        : m_packet(std::exchange(other.m_packet, nullptr))
    {
    }

    OwnedPacket& operator=(OwnedPacket&& other) noexcept
    {
        if (this != &other)
        {
            Reset();
            m_packet = std::exchange(other.m_packet, nullptr);
        }
        return *this;
    }

    OwnedPacket(const OwnedPacket&) = delete;
    OwnedPacket& operator=(const OwnedPacket&) = delete;

    ~OwnedPacket()
    {
        Reset();
    }

    /** The packet, still owned by this handle. */
    Packet* Get() const
    {
        return m_packet;
    }

    /** Hand this handle's reference over to a Ptr (no count change); the handle is then empty. */
    Ptr<Packet> Release()
    {
        return Ptr<Packet>(std::exchange(m_packet, nullptr), false);
    }

  private:
    // Most handles end empty (moved from, or released): the test is inlined, the release is not
    // (it may delete the packet, too large to inline everywhere).
    [[gnu::always_inline]] void Reset()
    {
        if (m_packet != nullptr)
        {
            Drop();
        }
    }

    [[gnu::noinline]] void Drop()
    {
        std::exchange(m_packet, nullptr)->Unref();
    }

    Packet* m_packet = nullptr;
};

} // namespace mcsim
} // namespace ns3
