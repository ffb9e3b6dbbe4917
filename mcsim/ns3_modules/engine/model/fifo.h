// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <utility>

namespace ns3
{
namespace mcsim
{

/**
 * @brief A FIFO in a growable ring buffer: the subset of std::deque a hot path uses, without its
 * per-block allocations (a std::deque that is pushed at one end and popped at the other allocates
 * and frees a block every few hundred bytes; this allocates only when it grows, to a power of 2).
 * It takes 24 bytes (a std::vector and two indexes take 40), so a port's queues share fewer
 * cache lines; at most 2^31 elements.
 *
 * pop_front() resets the slot to T{}, so a queue of Ptr<> releases what it popped at once.
 * insert() shifts the elements behind the position one slot back: cheap near the back.
 */
template <typename T>
class Fifo
{
  public:
    bool empty() const
    {
        return m_size == 0;
    }

    std::size_t size() const
    {
        return m_size;
    }

    T& front()
    {
        return m_slots[m_head];
    }

    const T& front() const
    {
        return m_slots[m_head];
    }

    T& back()
    {
        return (*this)[m_size - 1];
    }

    /** The i-th element from the front. */
    T& operator[](std::size_t i)
    {
        return m_slots[(m_head + i) & m_mask];
    }

    const T& operator[](std::size_t i) const
    {
        return m_slots[(m_head + i) & m_mask];
    }

    void push_back(T value)
    {
        if (m_size == Capacity())
        {
            Grow();
        }
        (*this)[m_size] = std::move(value);
        ++m_size;
    }

    void pop_front()
    {
        m_slots[m_head] = T{};
        m_head = (m_head + 1) & m_mask;
        --m_size;
    }

    /** Insert value so that it becomes the i-th element from the front (i <= size()). */
    void insert(std::size_t i, T value)
    {
        push_back(std::move(value));
        for (std::size_t j = m_size - 1; j > i; --j)
        {
            std::swap((*this)[j], (*this)[j - 1]);
        }
    }

    void clear()
    {
        m_slots.reset();
        m_mask = 0;
        m_head = 0;
        m_size = 0;
    }

  private:
    static constexpr uint32_t INITIAL_SLOTS = 16;

    std::size_t Capacity() const
    {
        return m_slots ? std::size_t{m_mask} + 1 : 0;
    }

    void Grow()
    {
        const std::size_t capacity = m_slots ? 2 * Capacity() : INITIAL_SLOTS;
        if (capacity > (std::size_t{1} << 31))
        {
            throw std::length_error("Fifo: more than 2^31 elements");
        }
        auto slots = std::make_unique<T[]>(capacity);
        for (std::size_t i = 0; i < m_size; ++i)
        {
            slots[i] = std::move((*this)[i]);
        }
        m_slots = std::move(slots);
        m_mask = static_cast<uint32_t>(capacity - 1);
        m_head = 0;
    }

    std::unique_ptr<T[]> m_slots; //!< Capacity() slots: none or a power of 2
    uint32_t m_mask = 0;          //!< Capacity() - 1 (0 when there are no slots)
    uint32_t m_head = 0;          //!< slot of the front element
    uint32_t m_size = 0;
};

} // namespace mcsim
} // namespace ns3
