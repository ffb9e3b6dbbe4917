// SPDX-License-Identifier: GPL-2.0-only
// RcQp's attributes, construction and connection (rc-qp.cc: posting, sending, receiving, recovery).
#include "nic.h"
#include "rc-qp.h"

#include "ns3/uinteger.h"

#include <stdexcept>
#include <string>

namespace ns3
{
namespace mcsim
{

NS_OBJECT_ENSURE_REGISTERED(RcQp);

TypeId
RcQp::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::mcsim::RcQp")
            .SetParent<QueuePair>()
            .SetGroupName("Mcsim")
            .AddConstructor<RcQp>()
            .AddAttribute("AckInterval",
                          "The responder ACKs every this many packets (and every message's last).",
                          UintegerValue(16),
                          MakeUintegerAccessor(&RcQp::m_ackInterval),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("LocalAckTimeout",
                          "Time without progress after which the requester goes back to the "
                          "expected PSN (IB: 4.096 us x 2^timeout); 0: never.",
                          TimeValue(PicoSeconds(4096000LL << 14)), // IB timeout 14: 67.1 ms
                          MakeTimeAccessor(&RcQp::m_timeout),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("RetryCount",
                          "Retries (local ACK timeouts, sequence-error and implied NAKs) in a row "
                          "without progress before the QP goes to the error state (IB retry_cnt: "
                          "0..7; more is not an IB setting, 4294967295: retry for ever).",
                          UintegerValue(7),
                          MakeUintegerAccessor(&RcQp::m_retryCount),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("RnrRetry",
                          "RNR NAKs in a row without progress before the error state; 7: retry "
                          "for ever (IB rnr_retry).",
                          UintegerValue(7),
                          MakeUintegerAccessor(&RcQp::m_rnrRetry),
                          MakeUintegerChecker<uint32_t>(0, 7))
            .AddAttribute("MaxOutstandingReads",
                          "RDMA READs in flight at once (max_rd_atomic).",
                          UintegerValue(16),
                          MakeUintegerAccessor(&RcQp::m_maxReads),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("RnrDelay",
                          "How long the requester waits after a receiver-not-ready NAK (IB "
                          "min_rnr_timer; 12: 0.64 ms).",
                          TimeValue(MicroSeconds(640)),
                          MakeTimeAccessor(&RcQp::m_rnrDelay),
                          MakeTimeChecker(Time(0)));
    return tid;
}

RcQp::RcQp()
    : m_connected(false),
      m_remoteHost(0),
      m_remoteQpn(0),
      m_remoteRegion(0),
      m_nextPsn(0),
      m_txPsn(0),
      m_sentEnd(0),
      m_una(0),
      m_outstandingReads(0),
      m_retries(0),
      m_rnrRetries(0),
      m_retriedAt(0),
      m_error(false),
      m_timer(this, &m_timerSource),
      m_responder(this)
{
}

RcQp::~RcQp() = default;

void
RcQp::DoDispose()
{
    m_timer.Cancel();
    m_sq.clear();
    QueuePair::DoDispose();
}

void
RcQp::Connect(uint32_t remoteHost, uint32_t remoteQpn, uint64_t remoteRegionBytes)
{
    m_remoteHost = remoteHost;
    m_remoteQpn = remoteQpn;
    m_remoteRegion = remoteRegionBytes;
    m_connected = true;
}

uint32_t
RcQp::DataMtu() const
{
    const uint32_t mtu = m_nic->GetMtuBytes();
    return m_lines.bytes == 0 ? mtu : m_lines.PerPacket(mtu);
}

void
RcQp::SetLines(ProtocolLines lines)
{
    const std::string where = "RcQp " + std::to_string(m_qpn) + ": ";
    if (lines.bytes != 0 && (lines.data == 0 || lines.data >= lines.bytes))
    {
        throw std::invalid_argument(where + "a line of " + std::to_string(lines.bytes) +
                                    " bytes must carry 1 to " + std::to_string(lines.bytes - 1) +
                                    " bytes of data, not " + std::to_string(lines.data));
    }
    if (m_nic != nullptr && lines.bytes > m_nic->GetMtuBytes())
    {
        throw std::invalid_argument(where + "a line of " + std::to_string(lines.bytes) +
                                    " bytes is longer than the MTU of " +
                                    std::to_string(m_nic->GetMtuBytes()));
    }
    m_lines = lines;
}

uint32_t
RcQp::Packets(uint64_t bytes) const
{
    const uint32_t mtu = DataMtu();
    return bytes == 0 ? 1 : static_cast<uint32_t>((bytes + mtu - 1) / mtu);
}

} // namespace mcsim
} // namespace ns3
