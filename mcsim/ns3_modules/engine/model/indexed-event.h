// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/event-impl.h"

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * @brief An event that calls obj->*Method(index) and can be scheduled again and again: the
 * ReusableEvent of an object with many identical workers (one per DPA thread, say), each keeping
 * its own instance. Not cancellable: use it only for events that always run. The object must
 * outlive every scheduling.
 */
template <typename T, void (T::*Method)(uint32_t)>
class IndexedEvent : public EventImpl
{
  public:
    IndexedEvent(T* obj, uint32_t index)
        : m_obj(obj),
          m_index(index)
    {
    }

  private:
    void Notify() override
    {
        (m_obj->*Method)(m_index);
    }

    T* m_obj;         //!< not owned
    uint32_t m_index; //!< passed to Method
};

} // namespace mcsim
} // namespace ns3
