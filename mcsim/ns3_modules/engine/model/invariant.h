// SPDX-License-Identifier: GPL-2.0-only
#pragma once

namespace ns3
{
namespace mcsim
{

/** A model's invariant does not hold: print where and what (as NS_ASSERT_MSG does), then
 * std::terminate. Out of line and cold, so that a check costs its hot path one branch. */
[[noreturn, gnu::cold, gnu::noinline]] void InvariantFailed(const char* condition,
                                                            const char* message,
                                                            const char* file,
                                                            int line);

} // namespace mcsim
} // namespace ns3

/**
 * Check a model's invariant in every build (engine/doc/engine.md, "Invariants"): mcsim compiles
 * without ns-3's NS3_ASSERT_ENABLE (NS_ASSERT in ns-3's headers is off: Ptr's, Time's and
 * Packet's inline checks cost every packet), so its own invariants use this instead of
 * NS_ASSERT_MSG. `message` is a string literal.
 */
#define MCSIM_ASSERT(condition, message)                                                           \
    do                                                                                             \
    {                                                                                              \
        if (!(condition)) [[unlikely]]                                                             \
        {                                                                                          \
            ::ns3::mcsim::InvariantFailed(#condition, message, __FILE__, __LINE__);                \
        }                                                                                          \
    } while (false)
