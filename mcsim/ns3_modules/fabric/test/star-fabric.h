// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/mcsim/fabric.h"
#include "ns3/object-factory.h"
#include "ns3/uinteger.h"

#include <cstdint>
#include <vector>

namespace ns3
{
namespace mcsim
{

/** A factory of ports that put `headerBytes` on the wire beyond each packet
 * (Fabric::SetPortFactory). */
inline ObjectFactory
PortsWithHeaderBytes(uint32_t headerBytes)
{
    ObjectFactory ports("ns3::mcsim::Port");
    ports.Set("HeaderBytes", UintegerValue(headerBytes));
    return ports;
}

/**
 * Test fixture: wire nHosts hosts to one switch (host h on switch port h; every link 100 Gbit/s,
 * no encoding overhead, 100 ns); the switch sends host h's packets to port h. Set the fabric's
 * attributes before calling it: Build reads them.
 */
inline void
BuildStarFabric(Ptr<Fabric> fabric, uint32_t nHosts)
{
    const uint32_t switchPorts[1] = {nHosts};
    std::vector<uint32_t> links;
    for (uint32_t h = 0; h < nHosts; ++h)
    {
        links.insert(links.end(), {h, 0, nHosts, h});
    }
    const std::vector<uint64_t> rate(nHosts, 100000000000ULL);
    const std::vector<uint32_t> encoding(2 * nHosts, 1);
    const std::vector<int64_t> delay(nHosts, 100000);
    fabric->Build(nHosts,
                  switchPorts,
                  1,
                  links.data(),
                  rate.data(),
                  encoding.data(),
                  delay.data(),
                  nHosts);
    // every host is the switch's own: its table (per destination switch) has one empty slice
    const uint32_t offsets[2] = {0, 0};
    const uint32_t none[1] = {0};
    fabric->SetUnicastTable(nHosts, offsets, 2, none, 0);
}

} // namespace mcsim
} // namespace ns3
