// SPDX-License-Identifier: GPL-2.0-only
#include "verbs-workload.h"

#include "ns3/make-event.h"
#include "ns3/mcsim/bulk-output.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/fabric-header.h"
#include "ns3/simulator.h"

#include <limits>
#include <stdexcept>
#include <string>

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(VerbsWorkload);

namespace
{
constexpr uint32_t NONE = std::numeric_limits<uint32_t>::max();
} // namespace

TypeId
VerbsWorkload::GetTypeId()
{
    static TypeId tid = TypeId("ns3::mcsim::VerbsWorkload")
                            .SetParent<Object>()
                            .SetGroupName("Mcsim")
                            .AddConstructor<VerbsWorkload>();
    return tid;
}

VerbsWorkload::VerbsWorkload() = default;

VerbsWorkload::~VerbsWorkload() = default;

void
VerbsWorkload::DoDispose()
{
    m_stack = nullptr;
    m_ops.clear();
    m_udQps.clear();
    Object::DoDispose();
}

void
VerbsWorkload::Setup(Ptr<RdmaStack> stack)
{
    m_stack = stack;
    m_rcOpOf.assign(stack->GetNHosts(), {});
    m_unicastUd.assign(stack->GetNHosts(), -1);
}

void
VerbsWorkload::CheckHost(uint32_t host, const char* what) const
{
    if (host >= m_stack->GetNHosts())
    {
        throw std::invalid_argument(std::string("VerbsWorkload::") + what + ": host " +
                                    std::to_string(host) + " of " +
                                    std::to_string(m_stack->GetNHosts()));
    }
}

void
VerbsWorkload::AddRcOps(const uint32_t* verb,
                        const uint32_t* src,
                        const uint32_t* dst,
                        const uint64_t* bytes,
                        const int64_t* startPs,
                        std::size_t n)
{
    for (std::size_t i = 0; i < n; ++i)
    {
        CheckHost(src[i], "AddRcOps");
        CheckHost(dst[i], "AddRcOps");
        if (verb[i] > READ || bytes[i] == 0 || startPs[i] < 0 || src[i] == dst[i])
        {
            throw std::invalid_argument("VerbsWorkload::AddRcOps: op " + std::to_string(i) +
                                        " has a bad verb, size, start or peer");
        }
        const auto op = static_cast<uint32_t>(m_ops.size());
        auto [req, resp] = m_stack->Connect(src[i], this, dst[i], this);
        for (auto [host, qpn] :
             {std::pair{src[i], req->GetQpn()}, std::pair{dst[i], resp->GetQpn()}})
        {
            m_rcOpOf[host].resize(qpn + 1, NONE);
            m_rcOpOf[host][qpn] = op;
        }
        if (verb[i] == SEND || verb[i] == WRITE_IMM)
        {
            resp->PostRecv(1);
        }
        m_ops.push_back({verb[i], src[i], dst[i], bytes[i], req, resp, NEVER_PS, NEVER_PS});
        mcsim::PostPlanned(PicoSeconds(startPs[i]), MakeEvent(&VerbsWorkload::StartRcOp, this, op));
    }
}

void
VerbsWorkload::StartRcOp(uint32_t op)
{
    const RcOp& o = m_ops[op];
    const RcQp::Verb verb = o.verb == SEND   ? RcQp::Verb::SEND
                            : o.verb == READ ? RcQp::Verb::READ
                                             : RcQp::Verb::WRITE;
    o.requester->PostSend(verb, o.bytes, 0, op, o.verb == WRITE_IMM, op);
}

void
VerbsWorkload::AddUdGroup(uint32_t group, const uint32_t* members, std::size_t n)
{
    if (group >= FabricHeader::GROUP_FLAG)
    {
        throw std::invalid_argument("VerbsWorkload::AddUdGroup: group id too large");
    }
    if (group >= m_groupUd.size())
    {
        m_groupUd.resize(group + 1);
    }
    m_groupUd[group].assign(m_stack->GetNHosts(), -1);
    for (std::size_t i = 0; i < n; ++i)
    {
        CheckHost(members[i], "AddUdGroup");
        Ptr<UdQp> qp = m_stack->CreateUdQp();
        const uint32_t qpn = m_stack->GetNic(members[i])->AddQp(qp, this);
        m_stack->GetNic(members[i])->AttachMulticast(group, qpn);
        m_groupUd[group][members[i]] = static_cast<int64_t>(m_udQps.size());
        m_udQps.push_back({members[i], group, qp});
    }
}

Ptr<UdQp>
VerbsWorkload::UnicastUdQp(uint32_t host)
{
    if (m_unicastUd[host] < 0)
    {
        Ptr<UdQp> qp = m_stack->CreateUdQp();
        m_stack->GetNic(host)->AddQp(qp, this);
        m_unicastUd[host] = static_cast<int64_t>(m_udQps.size());
        m_udQps.push_back({host, NO_GROUP, qp});
    }
    return m_udQps[m_unicastUd[host]].qp;
}

void
VerbsWorkload::AddUdStreams(const uint32_t* src,
                            const uint32_t* dst,
                            const uint32_t* count,
                            const uint32_t* bytes,
                            const int64_t* startPs,
                            std::size_t n)
{
    for (std::size_t i = 0; i < n; ++i)
    {
        CheckHost(src[i], "AddUdStreams");
        const bool group = (dst[i] & FabricHeader::GROUP_FLAG) != 0;
        const uint32_t g = dst[i] & ~FabricHeader::GROUP_FLAG;
        if (startPs[i] < 0 || count[i] == 0 || bytes[i] == 0 ||
            bytes[i] > m_stack->GetNic(src[i])->GetMtuBytes())
        {
            throw std::invalid_argument("VerbsWorkload::AddUdStreams: stream " + std::to_string(i) +
                                        " has a bad start, count or size (1..MTU bytes)");
        }
        Ptr<UdQp> from;
        uint32_t dstQpn = 0;
        if (group)
        {
            if (g >= m_groupUd.size() || m_groupUd[g][src[i]] < 0)
            {
                throw std::invalid_argument("VerbsWorkload::AddUdStreams: stream " +
                                            std::to_string(i) + ": host " + std::to_string(src[i]) +
                                            " is not a member of group " + std::to_string(g));
            }
            from = m_udQps[m_groupUd[g][src[i]]].qp;
        }
        else
        {
            CheckHost(dst[i], "AddUdStreams");
            from = UnicastUdQp(src[i]);
            dstQpn = UnicastUdQp(dst[i])->GetQpn();
        }
        mcsim::PostPlanned(PicoSeconds(startPs[i]),
                           MakeEvent(&VerbsWorkload::StartUdStream,
                                     this,
                                     from->GetQpn() | (src[i] << 16),
                                     dst[i],
                                     dstQpn,
                                     count[i],
                                     bytes[i]));
    }
}

void
VerbsWorkload::StartUdStream(uint32_t srcQp,
                             uint32_t dst,
                             uint32_t dstQpn,
                             uint32_t count,
                             uint32_t bytes)
{
    const uint32_t host = srcQp >> 16;
    Ptr<UdQp> qp = DynamicCast<UdQp>(m_stack->GetNic(host)->GetQp(srcQp & 0xFFFF));
    for (uint32_t k = 0; k < count; ++k)
    {
        qp->PostSend(dst, dstQpn, bytes, k, true, k);
    }
}

void
VerbsWorkload::OnSendComplete(uint32_t host, uint32_t qpn, uint64_t wrId)
{
    if (qpn < m_rcOpOf[host].size() && m_rcOpOf[host][qpn] != NONE)
    {
        m_ops[wrId].donePs = static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
    }
}

void
VerbsWorkload::OnReceive(uint32_t host, const Completion& c)
{
    if (c.qpn < m_rcOpOf[host].size() && m_rcOpOf[host][c.qpn] != NONE)
    {
        m_ops[m_rcOpOf[host][c.qpn]].responderDonePs =
            static_cast<uint64_t>(Simulator::Now().GetPicoSeconds());
    }
}

uint32_t
VerbsWorkload::GetNRcOps() const
{
    return static_cast<uint32_t>(m_ops.size());
}

uint32_t
VerbsWorkload::GetNUdQps() const
{
    return static_cast<uint32_t>(m_udQps.size());
}

namespace
{
const CounterTable g_rcQpTable("rc_qp", CounterTable::Columns({}, RcQp::Counters::NAMES));
const CounterTable g_udQpTable("ud_qp",
                               CounterTable::Columns({"host", "group"}, UdQp::Counters::NAMES));
} // namespace

void
VerbsWorkload::GetRcOpTimes(uint64_t* out, std::size_t n) const
{
    CheckOutputSize("VerbsWorkload::GetRcOpTimes", n, m_ops.size() * 4);
    for (std::size_t i = 0; i < m_ops.size(); ++i)
    {
        out[4 * i] = m_ops[i].donePs;
        out[4 * i + 1] = m_ops[i].responderDonePs;
        out[4 * i + 2] = m_ops[i].requester->GetQpn();
        out[4 * i + 3] = m_ops[i].responder->GetQpn();
    }
}

void
VerbsWorkload::GetRcQpCounters(uint64_t* out, std::size_t n) const
{
    static_assert(sizeof(RcQp::Counters) == RcQp::NUM_COUNTERS * sizeof(uint64_t));
    CheckOutputSize("VerbsWorkload::GetRcQpCounters", n, m_ops.size() * 2 * RcQp::NUM_COUNTERS);
    for (std::size_t i = 0; i < m_ops.size(); ++i)
    {
        m_ops[i].requester->GetCounters().CopyTo(out + (2 * i) * RcQp::NUM_COUNTERS);
        m_ops[i].responder->GetCounters().CopyTo(out + (2 * i + 1) * RcQp::NUM_COUNTERS);
    }
}

void
VerbsWorkload::GetUdQpCounters(uint64_t* out, std::size_t n) const
{
    static_assert(sizeof(UdQp::Counters) == UdQp::NUM_COUNTERS * sizeof(uint64_t));
    const std::size_t row = 2 + UdQp::NUM_COUNTERS;
    CheckOutputSize("VerbsWorkload::GetUdQpCounters", n, m_udQps.size() * row);
    for (std::size_t i = 0; i < m_udQps.size(); ++i)
    {
        out[row * i] = m_udQps[i].host;
        out[row * i + 1] = m_udQps[i].group;
        UdQp::Counters c = m_udQps[i].qp->GetCounters();
        if (c.rxPackets == 0 && c.overruns == 0)
        {
            c.minPosted = m_udQps[i].qp->GetPostedRecvs();
        }
        c.CopyTo(out + row * i + 2);
    }
}

} // namespace mcsim
} // namespace ns3
