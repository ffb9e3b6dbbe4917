// SPDX-License-Identifier: GPL-2.0-only
#include "host.h"

#include "ns3/mcsim/event-loop.h"
#include "ns3/simulator.h"

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(Host);

TypeId
Host::GetTypeId()
{
    static TypeId tid = TypeId("ns3::mcsim::Host").SetParent<Object>().SetGroupName("Mcsim");
    return tid;
}

Host::Host()
    : m_id(0),
      m_upstream(nullptr),
      m_upper(nullptr)
{
}

Host::~Host() = default;

void
Host::DoDispose()
{
    m_port = nullptr;
    m_upstream = nullptr;
    m_upper = nullptr;
    Object::DoDispose();
}

void
Host::Setup(uint32_t id, Ptr<Port> port, Port* upstream)
{
    m_id = id;
    m_port = port;
    m_upstream = upstream;
}

Time
Host::Send(const Ptr<Packet>& packet, const FabricHeader::Fields& fields, PortWaker* waker)
{
    return m_port->Send(packet, fields, mcsim::Now(), CreditReturn{}, waker);
}

void
Host::Receive(const Ptr<Packet>& packet, const FabricHeader::Fields& fields, uint32_t inPort)
{
    const Time now = mcsim::Now();
    const auto nowPs = static_cast<uint64_t>(now.GetPicoSeconds());
    if (m_counters.rxPackets == 0)
    {
        m_counters.firstArrivalPs = nowPs;
    }
    m_counters.lastArrivalPs = nowPs;
    m_counters.rxPackets++;
    m_counters.rxBytes += packet->GetSize();
    if (m_upstream != nullptr && !fields.IsLossy()) // the lossy class holds no ingress (PFC)
    {
        m_upstream->ReturnCredit(now + m_upstream->GetDelay(),
                                 m_upstream->GetWireBytes(packet->GetSize()));
    }
    if (m_upper != nullptr)
    {
        m_upper->Receive(packet, fields, inPort);
    }
}

void
Host::SetUpperLayer(PacketReceiver* upper)
{
    m_upper = upper;
}

uint32_t
Host::GetId() const
{
    return m_id;
}

Ptr<Port>
Host::GetPort() const
{
    return m_port;
}

const Host::Counters&
Host::GetCounters() const
{
    return m_counters;
}

} // namespace mcsim
} // namespace ns3
