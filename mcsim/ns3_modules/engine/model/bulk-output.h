// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace ns3
{
namespace mcsim
{

/**
 * Check the size of an output array handed in from Python (a numpy array) before filling it.
 * @throws std::invalid_argument naming where, the size given and the size needed
 */
inline void
CheckOutputSize(const char* where, std::size_t given, std::size_t needed)
{
    if (given != needed)
    {
        throw std::invalid_argument(std::string(where) + ": output has " + std::to_string(given) +
                                    " entries, needs " + std::to_string(needed));
    }
}

} // namespace mcsim
} // namespace ns3
