// SPDX-License-Identifier: GPL-2.0-only
#include "deferred-work.h"

namespace ns3
{
namespace mcsim
{

void
DeferredWorks::Add(DeferredWork* w, uint32_t node)
{
    if (w->m_listed)
    {
        return;
    }
    if (node >= m_at.size())
    {
        m_at.resize(static_cast<std::size_t>(node) + 1, nullptr);
    }
    w->m_node = node;
    w->m_nextAtNode = m_at[node];
    w->m_listed = true;
    m_at[node] = w;
    m_listed++;
}

void
DeferredWorks::Remove(DeferredWork* w)
{
    if (!w->m_listed)
    {
        return;
    }
    DeferredWork** link = &m_at[w->m_node];
    while (*link != w)
    {
        link = &(*link)->m_nextAtNode;
    }
    *link = w->m_nextAtNode;
    w->m_nextAtNode = nullptr;
    w->m_listed = false;
    m_listed--;
}

void
DeferredWorks::CatchUpNode(uint32_t node, uint64_t ts, uint64_t order)
{
    DeferredWork* w = m_at[node];
    while (w != nullptr)
    {
        DeferredWork* next = w->m_nextAtNode;
        if (!w->CatchUp(ts, order))
        {
            Remove(w);
        }
        w = next;
    }
}

void
DeferredWorks::CatchUpAll(uint64_t ts, uint64_t order)
{
    for (std::size_t node = 0; node < m_at.size() && m_listed != 0; ++node)
    {
        if (m_at[node] != nullptr)
        {
            CatchUpNode(static_cast<uint32_t>(node), ts, order);
        }
    }
}

void
DeferredWorks::Clear()
{
    for (DeferredWork* first : m_at)
    {
        for (DeferredWork* w = first; w != nullptr;)
        {
            DeferredWork* next = w->m_nextAtNode;
            w->m_nextAtNode = nullptr;
            w->m_listed = false;
            w = next;
        }
    }
    m_at.clear();
    m_listed = 0;
}

} // namespace mcsim
} // namespace ns3
