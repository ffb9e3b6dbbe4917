// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include <cstdint>

namespace ns3
{
namespace mcsim
{

/** splitmix64 finalizer: a fixed, portable integer hash (never std::hash): ECMP's path choice and
 * ECN's marking draws. */
inline uint64_t
Mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

} // namespace mcsim
} // namespace ns3
