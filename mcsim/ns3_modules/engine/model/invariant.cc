// SPDX-License-Identifier: GPL-2.0-only
#include "invariant.h"

#include <exception>
#include <iostream>

namespace ns3
{
namespace mcsim
{

void
InvariantFailed(const char* condition, const char* message, const char* file, int line)
{
    std::cerr << "mcsim: invariant failed. cond=\"" << condition << "\", msg=\"" << message
              << "\", file=" << file << ", line=" << line << std::endl;
    std::terminate();
}

} // namespace mcsim
} // namespace ns3
