// SPDX-License-Identifier: GPL-2.0-only
#include "blank-packets.h"

namespace ns3
{
namespace mcsim
{

Ptr<Packet>
BlankPackets::Make(uint32_t size)
{
    Ptr<Packet>& p = m_store[size];
    if (!p)
    {
        p = Create<Packet>(size);
    }
    return p;
}

} // namespace mcsim
} // namespace ns3
