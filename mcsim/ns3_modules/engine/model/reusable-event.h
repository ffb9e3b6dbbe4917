// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/event-impl.h"
#include "ns3/ptr.h"

namespace ns3
{
namespace mcsim
{

/**
 * @brief An event that calls obj->*Method() and can be scheduled again and again.
 *
 * Simulator::Schedule(delay, &T::Method, obj) allocates an event object per call; a hot path that
 * schedules the same call once per packet keeps one of these instead (Simulator::Schedule(delay,
 * Ptr<EventImpl>) takes a reference per scheduling). Not cancellable: use it only for events
 * that always run. The object must outlive every scheduling.
 */
template <typename T, void (T::*Method)()>
class ReusableEvent : public EventImpl
{
  public:
    explicit ReusableEvent(T* obj)
        : m_obj(obj)
    {
    }

  private:
    void Notify() override
    {
        (m_obj->*Method)();
    }

    T* m_obj; //!< not owned
};

} // namespace mcsim
} // namespace ns3
