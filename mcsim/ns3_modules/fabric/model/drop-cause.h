// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * @brief Why a port dropped or lost a packet (its "Drop" trace source; LinkFaults::Decide). The
 * wire causes are listed in the order LinkFaults checks them.
 */
enum class DropCause : uint8_t
{
    NONE,      //!< not dropped (LinkFaults::Decide only; never traced)
    TAIL,      //!< tail drop: the output buffer was full (LOSSY)
    LINK_DOWN, //!< lost on the wire: it arrived while the link was down
    CHOSEN,    //!< lost on the wire: one of the chosen packets
    RANDOM,    //!< lost on the wire at random (LossProbability)
};

/** The cause's name in logs, as mcsim's results name it ("tail", "link_down", "chosen", "loss"). */
constexpr const char*
DropCauseName(DropCause cause)
{
    switch (cause)
    {
    case DropCause::TAIL:
        return "tail";
    case DropCause::LINK_DOWN:
        return "link_down";
    case DropCause::CHOSEN:
        return "chosen";
    case DropCause::RANDOM:
        return "loss";
    default:
        return "none";
    }
}

} // namespace mcsim
} // namespace ns3
