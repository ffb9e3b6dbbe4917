// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/traced-callback.h"

#include <cstdint>
#include <string>

namespace ns3
{
namespace mcsim
{

/**
 * @brief A trace source (ns3::TracedCallback) that keeps a bit of its owner's flag word set while
 * it has a sink, so that a per-packet path tests one byte of its hot cache line instead of each
 * trace's list head ("trace emptiness as one flag word").
 *
 * Declare it as the member of MakeTraceSourceAccessor(&Owner::m_trace): ns-3's accessor calls the
 * member's own Connect and Disconnect, which these hide. The owner never moves (an ns3::Object).
 */
/** The bits of an owner's flag word for its packet traces: "Tx" and "Rx" have sinks. */
constexpr uint8_t TRACED_TX = 1;
constexpr uint8_t TRACED_RX = 2;

template <typename... Ts>
class FlaggedTrace : public TracedCallback<Ts...>
{
  public:
    /** Keep `bit` of `*flags` equal to !IsEmpty(). */
    FlaggedTrace(uint8_t* flags, uint8_t bit)
        : m_flags(flags),
          m_bit(bit)
    {
    }

    void ConnectWithoutContext(const CallbackBase& callback)
    {
        TracedCallback<Ts...>::ConnectWithoutContext(callback);
        Update();
    }

    void Connect(const CallbackBase& callback, std::string path)
    {
        TracedCallback<Ts...>::Connect(callback, path);
        Update();
    }

    void DisconnectWithoutContext(const CallbackBase& callback)
    {
        TracedCallback<Ts...>::DisconnectWithoutContext(callback);
        Update();
    }

    void Disconnect(const CallbackBase& callback, std::string path)
    {
        TracedCallback<Ts...>::Disconnect(callback, path);
        Update();
    }

  private:
    void Update()
    {
        *m_flags = this->IsEmpty() ? (*m_flags & ~m_bit) : (*m_flags | m_bit);
    }

    uint8_t* m_flags;
    uint8_t m_bit;
};

} // namespace mcsim
} // namespace ns3
