// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/nstime.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace ns3
{
namespace mcsim
{

/** A host's reduction, the default of every "ReducePsPerByte": one core adding 32-bit integers out
 * of cache, 14.7 GB/s (mcsim/config/collectives.py, HOST_REDUCE_PS_PER_BYTE). */
constexpr int64_t HOST_REDUCE_PS_PER_BYTE = 68;

/**
 * Verify mode's host reduction: into[k] += from[k] for the n / 4 little-endian 32-bit integers of
 * both, wrapping (two's complement), as the switches' ALUs sum (AggregationUnit).
 */
inline void
AddInt32(uint8_t* into, const uint8_t* from, uint64_t n)
{
    for (uint64_t k = 0; k + 4 <= n; k += 4)
    {
        uint32_t a;
        uint32_t b;
        std::memcpy(&a, into + k, 4);
        std::memcpy(&b, from + k, 4);
        a += b;
        std::memcpy(into + k, &a, 4);
    }
}

/**
 * A host's reduction engine, one chunk at a time: `bytes` queued now are summed once the engine is
 * free, in psPerByte each; advances busyUntil and returns when they are summed.
 */
inline Time
ReduceUntil(Time& busyUntil, uint64_t psPerByte, uint64_t bytes)
{
    const Time start = std::max(Simulator::Now(), busyUntil);
    busyUntil = start + PicoSeconds(static_cast<int64_t>(psPerByte * bytes));
    return busyUntil;
}

} // namespace mcsim
} // namespace ns3
