// SPDX-License-Identifier: GPL-2.0-only
#include "queue-pair.h"

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(QueuePair);

TypeId
QueuePair::GetTypeId()
{
    static TypeId tid = TypeId("ns3::mcsim::QueuePair").SetParent<Object>().SetGroupName("Mcsim");
    return tid;
}

QueuePair::QueuePair()
    : m_nic(nullptr),
      m_qpn(0),
      m_owner(nullptr)
{
}

QueuePair::~QueuePair() = default;

void
QueuePair::DoDispose()
{
    m_nic = nullptr;
    m_owner = nullptr;
    Object::DoDispose();
}

void
QueuePair::Bind(Nic* nic, uint32_t qpn, QpOwner* owner)
{
    m_nic = nic;
    m_qpn = qpn;
    m_owner = owner;
}

uint32_t
QueuePair::GetQpn() const
{
    return m_qpn;
}

} // namespace mcsim
} // namespace ns3
