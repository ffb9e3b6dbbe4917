// SPDX-License-Identifier: GPL-2.0-only
#include "event-heap.h"

namespace ns3
{
namespace mcsim
{

void
EventHeap::Push(const QueuedEvent& ev)
{
    m_heap.emplace_back();
    SiftUp(m_heap.size() - 1, ev);
}

QueuedEvent
EventHeap::Pop()
{
    const QueuedEvent top = m_heap.front();
    const QueuedEvent last = m_heap.back();
    m_heap.pop_back();
    if (!m_heap.empty())
    {
        FillHole(0, last);
    }
    return top;
}

bool
EventHeap::Remove(uint32_t uid)
{
    for (std::size_t i = 0; i < m_heap.size(); ++i)
    {
        if (m_heap[i].Unsourced() && m_heap[i].uid == uid)
        {
            const QueuedEvent last = m_heap.back();
            m_heap.pop_back();
            if (i < m_heap.size())
            {
                FillHole(i, last);
            }
            return true;
        }
    }
    return false;
}

void
EventHeap::SiftUp(std::size_t i, const QueuedEvent& ev)
{
    QueuedEvent* heap = m_heap.data();
    while (i > 0)
    {
        const std::size_t parent = (i - 1) / ARITY;
        if (!EventBefore(ev, heap[parent]))
        {
            break;
        }
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = ev;
}

void
EventHeap::FillHole(std::size_t i, const QueuedEvent& ev)
{
    QueuedEvent* heap = m_heap.data();
    const std::size_t n = m_heap.size();
    for (std::size_t first = ARITY * i + 1; first < n; first = ARITY * i + 1)
    {
        const std::size_t end = first + ARITY < n ? first + ARITY : n;
        std::size_t best = first;
        for (std::size_t c = first + 1; c < end; ++c)
        {
            best = EventBefore(heap[c], heap[best]) ? c : best;
        }
        heap[i] = heap[best];
        i = best;
    }
    SiftUp(i, ev);
}

} // namespace mcsim
} // namespace ns3
