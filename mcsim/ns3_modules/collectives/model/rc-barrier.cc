// SPDX-License-Identifier: GPL-2.0-only
#include "rc-barrier.h"

#include <utility>

namespace ns3
{
namespace mcsim
{

uint32_t
RcBarrier::Rounds(uint32_t ranks)
{
    uint32_t rounds = 0;
    while ((uint64_t{1} << rounds) < ranks)
    {
        rounds++;
    }
    return rounds;
}

void
RcBarrier::Setup(uint32_t barriers,
                 std::vector<Ptr<RcQp>> out,
                 std::vector<Ptr<RcQp>> in,
                 std::function<void()> done)
{
    m_out = std::move(out);
    m_in = std::move(in);
    m_done = std::move(done);
    m_total = barriers * static_cast<uint32_t>(m_out.size());
    m_arrived.assign(m_total, 0);
    for (const auto& q : m_in)
    {
        q->PostRecv(barriers);
    }
}

void
RcBarrier::Start()
{
    m_started = true;
    if (m_total == 0)
    {
        m_done();
        return;
    }
    Post();
}

void
RcBarrier::Post()
{
    m_acked = false;
    m_out[m_step % m_out.size()]->PostSend(RcQp::Verb::SEND, 0, 0, WR_TAG | m_step, true, m_step);
}

bool
RcBarrier::OnSendComplete(uint32_t qpn, uint64_t wrId)
{
    if ((wrId & ~uint64_t{0xFFFFFFFF}) != WR_TAG || m_step >= m_total ||
        qpn != m_out[m_step % m_out.size()]->GetQpn())
    {
        return false;
    }
    m_acked = true;
    Advance();
    return true;
}

bool
RcBarrier::OnReceive(const Completion& c)
{
    for (const auto& q : m_in)
    {
        if (q->GetQpn() == c.qpn)
        {
            if (c.imm < m_total)
            {
                m_arrived[c.imm] = 1;
            }
            Advance();
            return true;
        }
    }
    return false;
}

void
RcBarrier::Advance()
{
    if (!m_started || m_step >= m_total || !m_acked || !m_arrived[m_step])
    {
        return;
    }
    m_step++;
    if (m_step == m_total)
    {
        m_done();
        return;
    }
    Post();
}

uint32_t
RcBarrier::GetSteps() const
{
    return m_step;
}

void
RcBarrier::Dispose()
{
    m_out.clear();
    m_in.clear();
    m_done = nullptr;
}

} // namespace mcsim
} // namespace ns3
