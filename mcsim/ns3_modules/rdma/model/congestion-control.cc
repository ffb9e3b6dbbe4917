// SPDX-License-Identifier: GPL-2.0-only
#include "congestion-control.h"

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(CongestionControl);

TypeId
CongestionControl::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::mcsim::CongestionControl").SetParent<Object>().SetGroupName("Mcsim");
    return tid;
}

} // namespace mcsim
} // namespace ns3
