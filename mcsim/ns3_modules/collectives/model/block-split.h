// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include <algorithm>
#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * @brief One buffer of `bytes` split into `parts` blocks (an Allreduce's): in 4-byte elements when
 * `bytes` is a multiple of 4 (else bytes), the first (elements mod parts) blocks one element
 * longer. Python's mirror: mcsim.config.collectives.ring_blocks (the largest block).
 */
class BlockSplit
{
  public:
    BlockSplit(uint64_t bytes, uint32_t parts)
        : m_granule(bytes % 4 == 0 ? 4 : 1),
          m_quotient(bytes / m_granule / parts),
          m_longer(bytes / m_granule % parts)
    {
    }

    uint64_t Bytes(uint32_t b) const //!< bytes of block b
    {
        return (m_quotient + (b < m_longer ? 1 : 0)) * m_granule;
    }

    uint64_t Offset(uint32_t b) const //!< where block b starts (b = parts: the buffer's end)
    {
        return (b * m_quotient + std::min<uint64_t>(b, m_longer)) * m_granule;
    }

  private:
    uint64_t m_granule;
    uint64_t m_quotient;
    uint64_t m_longer;
};

} // namespace mcsim
} // namespace ns3
