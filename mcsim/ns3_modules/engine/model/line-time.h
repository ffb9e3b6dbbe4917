// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/nstime.h"

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/**
 * Time to move `bytes` at `rateBps` bit/s through a line code of dataBits data bits per lineBits
 * line bits (1 and 1: none; 64 and 66: 64b/66b), rounded up to a whole picosecond. Exact, in
 * 128-bit integers: no double, no truncated ps-per-byte (at 1.6 Tbit/s a 4 KiB packet takes
 * 20.56 ns; a per-byte rounding would be off by up to 2.7 %). rateBps and dataBits must be > 0.
 */
inline Time
LineTime(uint64_t bytes, uint64_t rateBps, uint32_t dataBits = 1, uint32_t lineBits = 1)
{
    const unsigned __int128 num =
        static_cast<unsigned __int128>(bytes) * 8 * 1'000'000'000'000ULL * lineBits;
    const unsigned __int128 den = static_cast<unsigned __int128>(dataBits) * rateBps;
    return PicoSeconds(static_cast<int64_t>((num + den - 1) / den));
}

/** LineTime's inverse: the bytes a line of `rateBps` bit/s (data rate) moves in `t`, rounded up. */
inline uint64_t
LineBytes(Time t, uint64_t rateBps)
{
    const unsigned __int128 num = static_cast<unsigned __int128>(t.GetPicoSeconds()) * rateBps;
    const unsigned __int128 den = 8 * 1'000'000'000'000ULL;
    return static_cast<uint64_t>((num + den - 1) / den);
}

/** LineBytes(PicoSeconds(ps), rateBps) > bytes, without its division (a hot path's test):
 * ceil(x / D) > B holds exactly when x > B D. */
inline bool
LineBytesExceed(uint64_t ps, uint64_t rateBps, uint64_t bytes)
{
    return static_cast<unsigned __int128>(ps) * rateBps >
           static_cast<unsigned __int128>(bytes) * (8 * 1'000'000'000'000ULL);
}

} // namespace mcsim
} // namespace ns3
