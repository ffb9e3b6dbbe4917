// SPDX-License-Identifier: GPL-2.0-only
#include "quad-heap-scheduler.h"

#include <stdexcept>
#include <string>

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(QuadHeapScheduler);

TypeId
QuadHeapScheduler::GetTypeId()
{
    static TypeId tid = TypeId("ns3::mcsim::QuadHeapScheduler")
                            .SetParent<Scheduler>()
                            .SetGroupName("Mcsim")
                            .AddConstructor<QuadHeapScheduler>();
    return tid;
}

QuadHeapScheduler::QuadHeapScheduler()
{
    m_heap.reserve(1024);
}

QuadHeapScheduler::~QuadHeapScheduler() = default;

void
QuadHeapScheduler::Insert(const Event& ev)
{
    m_heap.emplace_back();
    SiftUp(m_heap.size() - 1, ev);
}

bool
QuadHeapScheduler::IsEmpty() const
{
    return m_heap.empty();
}

Scheduler::Event
QuadHeapScheduler::PeekNext() const
{
    return m_heap.front();
}

Scheduler::Event
QuadHeapScheduler::RemoveNext()
{
    const Event next = m_heap.front();
    const Event last = m_heap.back();
    m_heap.pop_back();
    if (!m_heap.empty())
    {
        FillHole(0, last);
    }
    return next;
}

void
QuadHeapScheduler::Remove(const Event& ev)
{
    for (std::size_t i = 0; i < m_heap.size(); ++i)
    {
        if (m_heap[i].key.m_uid == ev.key.m_uid)
        {
            const Event last = m_heap.back();
            m_heap.pop_back();
            if (i < m_heap.size())
            {
                FillHole(i, last);
            }
            return;
        }
    }
    throw std::invalid_argument("QuadHeapScheduler::Remove: event " + std::to_string(ev.key.m_uid) +
                                " is not scheduled");
}

void
QuadHeapScheduler::SiftUp(std::size_t i, const Event& ev)
{
    Event* heap = m_heap.data();
    while (i > 0)
    {
        const std::size_t parent = (i - 1) / ARITY;
        if (!Before(ev.key, heap[parent].key))
        {
            break;
        }
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = ev;
}

void
QuadHeapScheduler::FillHole(std::size_t i, const Event& ev)
{
    Event* heap = m_heap.data();
    const std::size_t n = m_heap.size();
    // move the hole down along the smallest children to a leaf (selects, not branches: which
    // child is smallest is a coin toss the branch predictor would lose)
    for (std::size_t first = ARITY * i + 1; first < n; first = ARITY * i + 1)
    {
        const std::size_t end = first + ARITY < n ? first + ARITY : n;
        std::size_t best = first;
        unsigned __int128 bestOrder = Order(heap[first].key);
        for (std::size_t c = first + 1; c < end; ++c)
        {
            const unsigned __int128 o = Order(heap[c].key);
            const bool smaller = o < bestOrder;
            best = smaller ? c : best;
            bestOrder = smaller ? o : bestOrder;
        }
        heap[i] = heap[best];
        i = best;
    }
    SiftUp(i, ev);
}

} // namespace mcsim
} // namespace ns3
