// SPDX-License-Identifier: GPL-2.0-only
#include "wheel-scheduler.h"

#include "run-control.h"

#include "ns3/simulator.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(WheelScheduler);

TypeId
WheelScheduler::GetTypeId()
{
    static TypeId tid = TypeId("ns3::mcsim::WheelScheduler")
                            .SetParent<Scheduler>()
                            .SetGroupName("Mcsim")
                            .AddConstructor<WheelScheduler>();
    return tid;
}

WheelScheduler::WheelScheduler()
    : m_head(SLOTS, NONE),
      m_free(NONE),
      m_busy(SLOTS / 64, 0),
      m_summary(SLOTS / 64 / 64, 0),
      m_next(0),
      m_cursor(0),
      m_count(0)
{
    m_nodes.reserve(1024);
    m_current.reserve(64);
}

WheelScheduler::~WheelScheduler() = default;

void
WheelScheduler::Insert(const Event& ev)
{
    InsertQueued(QueuedEvent::Of(ev));
}

void
WheelScheduler::InsertQueued(const QueuedEvent& ev)
{
    ++m_count;
    const uint64_t slot = SlotOf(ev);
    if (slot <= m_cursor)
    {
        // the slot being run (or, after a PeekNext, an earlier one): keep m_current sorted. A
        // new event is at or after the one running, and mostly after every event queued: the
        // search from the back passes only the (few) later ones
        std::size_t i = m_current.size();
        while (i > m_next && EventBefore(ev, m_current[i - 1]))
        {
            --i;
        }
        m_current.insert(m_current.begin() + static_cast<std::ptrdiff_t>(i), ev);
        return;
    }
    if (slot - m_cursor >= SLOTS)
    {
        m_far.Push(ev);
        return;
    }
    int32_t node = m_free;
    if (node == NONE)
    {
        node = static_cast<int32_t>(m_nodes.size());
        m_nodes.push_back({ev, NONE});
    }
    else
    {
        m_free = m_nodes[node].next;
        m_nodes[node].ev = ev;
    }
    const uint64_t index = slot & MASK;
    m_nodes[node].next = m_head[index];
    if (m_head[index] == NONE)
    {
        MarkBusy(index);
    }
    m_head[index] = node;
}

bool
WheelScheduler::IsEmpty() const
{
    return m_count == 0;
}

Scheduler::Event
WheelScheduler::PeekNext() const
{
    auto* self = const_cast<WheelScheduler*>(this); // Select() only moves events, never reorders
    return (self->Select() ? m_current[m_next] : m_far.Top()).ToEvent();
}

namespace
{
std::optional<std::chrono::steady_clock::time_point> g_deadline; //!< run control: stop after it
uint32_t g_countdown = 0; //!< events until the next look at the clock
bool g_stopped = false;   //!< the deadline stopped the run
} // namespace

void
WheelScheduler::StopAt(std::optional<std::chrono::steady_clock::time_point> deadline)
{
    g_deadline = deadline;
    g_countdown = RunControl::CHECK_EVERY;
    g_stopped = false;
}

bool
WheelScheduler::Stopped()
{
    return g_stopped;
}

void
WheelScheduler::LookAtTheClock()
{
    g_countdown = RunControl::CHECK_EVERY;
    if (!g_stopped && std::chrono::steady_clock::now() >= *g_deadline)
    {
        g_stopped = true;
        Simulator::Stop(); // after the event being removed now has run
    }
}

Scheduler::Event
WheelScheduler::RemoveNext()
{
    return RemoveNextQueued().ToEvent();
}

QueuedEvent
WheelScheduler::RemoveNextQueued()
{
    if (g_deadline && --g_countdown == 0)
    {
        LookAtTheClock();
    }
    --m_count;
    if (Select())
    {
        return m_current[m_next++];
    }
    const QueuedEvent ev = m_far.Pop();
    m_cursor = std::max(m_cursor, SlotOf(ev));
    return ev;
}

void
WheelScheduler::Remove(const Event& event)
{
    const QueuedEvent ev = QueuedEvent::Of(event);
    const uint32_t uid = ev.uid;
    // only an event without a source can be removed (it has an EventId): match its order key too
    auto same = [uid](const QueuedEvent& q) { return q.Unsourced() && q.uid == uid; };
    for (std::size_t i = m_next; i < m_current.size(); ++i)
    {
        if (same(m_current[i]))
        {
            m_current.erase(m_current.begin() + static_cast<std::ptrdiff_t>(i));
            --m_count;
            return;
        }
    }
    const uint64_t slot = SlotOf(ev);
    if (slot > m_cursor && slot - m_cursor < SLOTS)
    {
        const uint64_t index = slot & MASK;
        for (int32_t* link = &m_head[index]; *link != NONE; link = &m_nodes[*link].next)
        {
            const int32_t node = *link;
            if (same(m_nodes[node].ev))
            {
                *link = m_nodes[node].next;
                m_nodes[node].next = m_free;
                m_free = node;
                if (m_head[index] == NONE)
                {
                    MarkIdle(index);
                }
                --m_count;
                return;
            }
        }
    }
    if (m_far.Remove(uid))
    {
        --m_count;
        return;
    }
    throw std::invalid_argument("WheelScheduler::Remove: event " + std::to_string(uid) +
                                " is not scheduled");
}

bool
WheelScheduler::Select()
{
    if (m_next == m_current.size())
    {
        m_current.clear();
        m_next = 0;
        uint64_t slot = 0;
        const bool busy = NextBusy(m_cursor + 1, slot);
        if (!busy || (!m_far.Empty() && SlotOf(m_far.Top()) < slot))
        {
            return false; // the heap has the earliest (the window's lists are empty before it)
        }
        Load(slot);
    }
    return m_far.Empty() || !EventBefore(m_far.Top(), m_current[m_next]);
}

void
WheelScheduler::Load(uint64_t slot)
{
    const uint64_t index = slot & MASK;
    for (int32_t node = m_head[index]; node != NONE;)
    {
        m_current.push_back(m_nodes[node].ev);
        const int32_t next = m_nodes[node].next;
        m_nodes[node].next = m_free;
        m_free = node;
        node = next;
    }
    m_head[index] = NONE;
    MarkIdle(index);
    // earliest first in the canonical order (EventBefore). The list holds the slot's events in
    // reverse order of insertion, which mostly follows the order: reversed, the slot is often in
    // order already. Insertion sort for a few (no moves when in order), else std::sort unless the
    // slot is in order already.
    std::reverse(m_current.begin(), m_current.end());
    const auto earlier = EventBefore;
    if (m_current.size() > INSERTION_SORT_MAX)
    {
        if (!std::is_sorted(m_current.begin(), m_current.end(), earlier))
        {
            std::sort(m_current.begin(), m_current.end(), earlier);
        }
    }
    else
    {
        for (std::size_t i = 1; i < m_current.size(); ++i)
        {
            const QueuedEvent ev = m_current[i];
            std::size_t j = i;
            while (j > 0 && earlier(ev, m_current[j - 1]))
            {
                m_current[j] = m_current[j - 1];
                --j;
            }
            m_current[j] = ev;
        }
    }
    m_cursor = slot;
}

void
WheelScheduler::MarkBusy(uint64_t index)
{
    m_busy[index >> 6] |= uint64_t{1} << (index & 63);
    m_summary[index >> 12] |= uint64_t{1} << ((index >> 6) & 63);
}

void
WheelScheduler::MarkIdle(uint64_t index)
{
    uint64_t& word = m_busy[index >> 6];
    word &= ~(uint64_t{1} << (index & 63));
    if (word == 0)
    {
        m_summary[index >> 12] &= ~(uint64_t{1} << ((index >> 6) & 63));
    }
}

bool
WheelScheduler::NextBusy(uint64_t from, uint64_t& slot) const
{
    // the first busy slot index >= lo, or SLOTS
    auto first = [this](uint64_t lo) -> uint64_t {
        if (lo >= SLOTS)
        {
            return SLOTS;
        }
        uint64_t w = lo >> 6;
        const uint64_t bits = m_busy[w] & (~uint64_t{0} << (lo & 63));
        if (bits != 0)
        {
            return (w << 6) | static_cast<uint64_t>(__builtin_ctzll(bits));
        }
        ++w; // the next non-zero word, through the summary
        for (uint64_t s = w >> 6; s < m_summary.size(); ++s)
        {
            uint64_t words = m_summary[s];
            if (s == (w >> 6))
            {
                words &= (w & 63) == 0 ? ~uint64_t{0} : ~uint64_t{0} << (w & 63);
            }
            if (words != 0)
            {
                const uint64_t word = (s << 6) | static_cast<uint64_t>(__builtin_ctzll(words));
                return (word << 6) | static_cast<uint64_t>(__builtin_ctzll(m_busy[word]));
            }
        }
        return SLOTS;
    };
    const uint64_t start = from & MASK;
    uint64_t index = first(start);
    if (index == SLOTS)
    {
        index = first(0);
        if (index >= start)
        {
            return false; // nothing anywhere on the wheel
        }
    }
    slot = from + ((index - start) & MASK);
    return true;
}

} // namespace mcsim
} // namespace ns3
