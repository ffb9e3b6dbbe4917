// SPDX-License-Identifier: GPL-2.0-only
#include "queue-pair.h"

#include "nic.h"

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
      m_owner(nullptr),
      m_timerSource(EventClass::TIMER)
{
}

QueuePair::~QueuePair() = default;

void
QueuePair::DoDispose()
{
    m_nic = nullptr;
    m_owner = nullptr;
    if (cc)
    {
        cc->Dispose();
        cc = nullptr;
    }
    Object::DoDispose();
}

void
QueuePair::Bind(Nic* nic, uint32_t node, uint32_t qpn, QpOwner* owner)
{
    m_nic = nic;
    m_qpn = qpn;
    m_owner = owner;
    m_timerSource.Place(node, unit::QP + qpn);
}

uint32_t
QueuePair::GetQpn() const
{
    return m_qpn;
}

void
QueuePair::CompleteSend(uint64_t wrId, bool signalled)
{
    if (m_owner == nullptr)
    {
        return;
    }
    if (!signalled || !m_nic->ProcessesSendCompletions())
    {
        m_owner->OnSendComplete(m_nic->GetHostId(), m_qpn, wrId);
        return;
    }
    Completion c;
    c.qpn = m_qpn;
    c.srcHost = m_nic->GetHostId();
    c.send = true;
    c.wrId = wrId;
    m_nic->CompleteSend(c, this);
}

void
QueuePair::OnProcessed(const Completion& c)
{
    if (!c.send)
    {
        OnReceiveProcessed(c);
    }
    else if (m_owner != nullptr)
    {
        m_owner->OnSendComplete(m_nic->GetHostId(), m_qpn, c.wrId);
    }
}

bool
QueuePair::Deferrable(const Completion& c, const QueuedAhead& ahead) const
{
    return !c.send && ReceiveDeferrable(c, ahead);
}

} // namespace mcsim
} // namespace ns3
