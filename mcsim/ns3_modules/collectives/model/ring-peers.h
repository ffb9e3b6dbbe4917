// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/mcsim/rc-qp.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * @brief A rank's RC QPs on the team's rings (CollectiveTeam: the ring r -> r+1 and the rings at
 * the distances the rank asked for), and which of them joins two ranks: the ring at the distance
 * from the sender to the receiver if there is one, else the ring from the receiver to the sender.
 * Both ends of a transfer ask For(sender, receiver) and so pick the same QP pair.
 */
class RingPeers
{
  public:
    /** The ring (distance 1), and the distances of the rings WireRings will bring. */
    void Wire(Ptr<RcQp> next, Ptr<RcQp> prev, const std::vector<uint32_t>& distances)
    {
        m_out = {std::move(next)};
        m_in = {std::move(prev)};
        m_distance = {1};
        m_distance.insert(m_distance.end(), distances.begin(), distances.end());
    }

    /** out[i]: to rank r + distances[i]; in[i]: from rank r - distances[i]. */
    void WireRings(const std::vector<Ptr<RcQp>>& out, const std::vector<Ptr<RcQp>>& in)
    {
        m_out.insert(m_out.end(), out.begin(), out.end());
        m_in.insert(m_in.end(), in.begin(), in.end());
    }

    /** The QP that rank `me` (the sender or the receiver) uses, among P ranks. */
    Ptr<RcQp> For(uint32_t sender, uint32_t receiver, uint32_t me, uint32_t nRanks) const
    {
        const bool mine = sender == me;
        const uint32_t up = (receiver + nRanks - sender) % nRanks; // a ring from the sender
        const uint32_t down = nRanks - up;                         // ... or from the receiver
        for (std::size_t i = 0; i < m_distance.size(); ++i)
        {
            if (m_distance[i] == up)
            {
                return (mine ? m_out : m_in).at(i);
            }
        }
        for (std::size_t i = 0; i < m_distance.size(); ++i)
        {
            if (m_distance[i] == down)
            {
                return (mine ? m_in : m_out).at(i);
            }
        }
        throw std::logic_error("RingPeers: no ring joins ranks " + std::to_string(sender) +
                               " and " + std::to_string(receiver));
    }

    void Clear()
    {
        m_out.clear();
        m_in.clear();
    }

  private:
    std::vector<uint32_t> m_distance; //!< 1, then the further rings' distances
    std::vector<Ptr<RcQp>> m_out;     //!< m_out[i]: to rank r + m_distance[i]
    std::vector<Ptr<RcQp>> m_in;      //!< m_in[i]: from rank r - m_distance[i]
};

} // namespace mcsim
} // namespace ns3
