// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * @brief n small unsigned counters, each in the fewest bits (1, 2, 4, 8, 16 or 32) that hold the
 * largest value it may take, packed into 64-bit words (a power-of-2 width never straddles two).
 *
 * For per-rank state that grows with P x P: a multicast Allgather rank keeps a few counters per
 * source rank, so at 27,648 ranks each byte per counter is 764 MB over the run; a bit is 95 MB.
 * The caller keeps every value within the largest it declared (Increment does not check).
 */
class PackedCounters
{
  public:
    /** n counters, all 0, each able to hold 0..maxValue (maxValue < 2^32). */
    void Assign(std::size_t n, uint64_t maxValue)
    {
        if (maxValue > UINT32_MAX)
        {
            throw std::invalid_argument("PackedCounters: " + std::to_string(maxValue) +
                                        " needs more than 32 bits");
        }
        uint32_t log2Bits = 0;
        while ((1ULL << (1U << log2Bits)) <= maxValue)
        {
            ++log2Bits;
        }
        m_log2Bits = log2Bits;
        m_log2PerWord = 6 - log2Bits;
        m_mask = (1ULL << (1U << log2Bits)) - 1;
        m_size = n;
        m_words.assign((n + (1ULL << m_log2PerWord) - 1) >> m_log2PerWord, 0);
    }

    std::size_t Size() const
    {
        return m_size;
    }

    /** Bits each counter takes. */
    uint32_t Bits() const
    {
        return 1U << m_log2Bits;
    }

    uint32_t Get(std::size_t i) const
    {
        return static_cast<uint32_t>((m_words[i >> m_log2PerWord] >> Shift(i)) & m_mask);
    }

    /** Counter i plus one (it must stay within the declared maximum); returns the new value. */
    uint32_t Increment(std::size_t i)
    {
        uint64_t& word = m_words[i >> m_log2PerWord];
        word += 1ULL << Shift(i);
        return static_cast<uint32_t>((word >> Shift(i)) & m_mask);
    }

    void Set(std::size_t i, uint32_t value)
    {
        uint64_t& word = m_words[i >> m_log2PerWord];
        word =
            (word & ~(m_mask << Shift(i))) | ((static_cast<uint64_t>(value) & m_mask) << Shift(i));
    }

  private:
    uint32_t Shift(std::size_t i) const
    {
        return static_cast<uint32_t>(i & ((1ULL << m_log2PerWord) - 1)) << m_log2Bits;
    }

    std::vector<uint64_t> m_words;
    std::size_t m_size = 0;
    uint64_t m_mask = 1;
    uint32_t m_log2Bits = 0;    //!< log2 of the bits per counter
    uint32_t m_log2PerWord = 6; //!< log2 of the counters per 64-bit word
};

} // namespace mcsim
} // namespace ns3
