// SPDX-License-Identifier: GPL-2.0-only
#include "completion-source.h"

#include "ns3/mcsim/bulk-output.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/reusable-event.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(CompletionSource);

TypeId
CompletionSource::GetTypeId()
{
    static TypeId tid = TypeId("ns3::mcsim::CompletionSource")
                            .SetParent<Object>()
                            .SetGroupName("Mcsim")
                            .AddConstructor<CompletionSource>();
    return tid;
}

CompletionSource::CompletionSource()
    : m_count(0),
      m_endpoints(1),
      m_bytes(0),
      m_staged(false),
      m_offered(0),
      m_offerEvent(Create<ReusableEvent<CompletionSource, &CompletionSource::Offer>>(this)),
      m_source(EventClass::TRANSMIT)
{
    m_source.Place(0, unit::SOURCE);
}

CompletionSource::~CompletionSource() = default;

void
CompletionSource::DoDispose()
{
    if (m_processor)
    {
        m_processor->Dispose();
    }
    m_processor = nullptr;
    m_offerEvent = nullptr;
    Object::DoDispose();
}

void
CompletionSource::Setup(ObjectFactory processorFactory)
{
    m_processor = processorFactory.Create<CompletionProcessor>();
    if (!m_processor)
    {
        throw std::invalid_argument("CompletionSource: the factory does not make a "
                                    "CompletionProcessor");
    }
}

Ptr<CompletionProcessor>
CompletionSource::GetProcessor() const
{
    return m_processor;
}

void
CompletionSource::Start(uint32_t count,
                        uint32_t endpoints,
                        uint32_t bytes,
                        bool staged,
                        Time interval)
{
    if (!m_processor || count == 0 || endpoints == 0 || interval.IsStrictlyNegative())
    {
        throw std::invalid_argument("CompletionSource::Start: needs Setup, count > 0 (got " +
                                    std::to_string(count) + "), endpoints > 0 (got " +
                                    std::to_string(endpoints) + ") and an interval >= 0");
    }
    m_count = count;
    m_endpoints = endpoints;
    m_bytes = bytes;
    m_staged = staged;
    m_interval = interval;
    m_offered = 0;
    m_donePs.reserve(count);
    m_doneImm.reserve(count);
    mcsim::Post(Time(0), m_offerEvent, m_source);
}

void
CompletionSource::Offer()
{
    do
    {
        Completion c;
        c.qpn = m_offered % m_endpoints;
        c.bytes = m_bytes;
        c.imm = m_offered;
        c.hasImm = true;
        c.staged = m_staged;
        c.opcode = Opcode::UD_SEND_ONLY_IMM;
        m_offered++;
        m_processor->Submit(c, this);
    } while (m_interval.IsZero() && m_offered < m_count);
    if (m_offered < m_count)
    {
        mcsim::Post(m_interval, m_offerEvent, m_source);
    }
}

void
CompletionSource::OnProcessed(const Completion& c)
{
    m_donePs.push_back(static_cast<uint64_t>(mcsim::Now().GetPicoSeconds()));
    m_doneImm.push_back(c.imm);
}

uint64_t
CompletionSource::GetOffered() const
{
    return m_offered;
}

uint64_t
CompletionSource::GetProcessed() const
{
    return m_donePs.size();
}

void
CompletionSource::GetProcessedPs(uint64_t* out, std::size_t n) const
{
    CheckOutputSize("CompletionSource::GetProcessedPs", n, m_donePs.size());
    std::copy(m_donePs.begin(), m_donePs.end(), out);
}

void
CompletionSource::GetProcessedImm(uint32_t* out, std::size_t n) const
{
    CheckOutputSize("CompletionSource::GetProcessedImm", n, m_doneImm.size());
    std::copy(m_doneImm.begin(), m_doneImm.end(), out);
}

} // namespace mcsim
} // namespace ns3
