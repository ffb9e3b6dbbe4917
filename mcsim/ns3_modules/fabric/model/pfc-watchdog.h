// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace ns3
{
namespace mcsim
{

class Port;

/**
 * @brief Detects a PFC deadlock: a cycle of ports, each paused by the next one's node, none of
 * which has started a frame for half its pause time while it has frames waiting (fabric.md,
 * "Priority Flow Control"). A port that re-sends an XOFF (its ingress queue stayed above XON that
 * long) asks it to look; on a cycle it keeps the cycle's ports and stops the simulation.
 */
class PfcWatchdog
{
  public:
    /** The fabric's ports, node by node (a node's ports in order). */
    void SetPorts(std::vector<std::vector<Port*>> byNode);
    /** Look for a cycle of stalled ports now; if one, keep it and stop the simulation. */
    void Check();
    /** The cycle found, as (node, port) in the order each waits on the next; empty: none. */
    const std::vector<std::pair<uint32_t, uint32_t>>& GetCycle() const;

  private:
    /** Depth-first search from port p (its index in m_all); true once a cycle is kept. */
    bool Visit(std::size_t p, std::vector<uint8_t>& state, std::vector<std::size_t>& path);

    std::vector<std::vector<Port*>> m_byNode;
    std::vector<Port*> m_all;         //!< every port, node by node
    std::vector<std::size_t> m_first; //!< node -> index of its first port in m_all
    std::vector<uint8_t> m_stalled;   //!< per port, at this check
    std::vector<std::pair<uint32_t, uint32_t>> m_cycle;
};

} // namespace mcsim
} // namespace ns3
