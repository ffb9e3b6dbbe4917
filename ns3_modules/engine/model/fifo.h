// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * @brief A FIFO in a growable ring buffer: the subset of std::deque a hot path uses, without its
 * per-block allocations (a std::deque that is pushed at one end and popped at the other allocates
 * and frees a block every few hundred bytes; this allocates only when it grows, to a power of 2).
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
        return m_slots[(m_head + i) & (m_slots.size() - 1)];
    }

    const T& operator[](std::size_t i) const
    {
        return m_slots[(m_head + i) & (m_slots.size() - 1)];
    }

    void push_back(T value)
    {
        if (m_size == m_slots.size())
        {
            Grow();
        }
        (*this)[m_size] = std::move(value);
        ++m_size;
    }

    void pop_front()
    {
        m_slots[m_head] = T{};
        m_head = (m_head + 1) & (m_slots.size() - 1);
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
        m_slots.clear();
        m_head = 0;
        m_size = 0;
    }

  private:
    static constexpr std::size_t INITIAL_SLOTS = 16;

    void Grow()
    {
        std::vector<T> slots(m_slots.empty() ? INITIAL_SLOTS : 2 * m_slots.size());
        for (std::size_t i = 0; i < m_size; ++i)
        {
            slots[i] = std::move((*this)[i]);
        }
        m_slots = std::move(slots);
        m_head = 0;
    }

    std::vector<T> m_slots; //!< capacity: 0 or a power of 2
    std::size_t m_head = 0; //!< slot of the front element
    std::size_t m_size = 0;
};

} // namespace mcsim
} // namespace ns3
