// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "queue-pair.h"
#include "transport-header.h"

#include "ns3/packet.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <deque>

namespace ns3
{
namespace mcsim
{

class RcQp;

/**
 * @brief The responder half of an RC QP: takes requests in PSN order and answers in PSN order.
 *
 * The model: rdma/doc/rdma.md, "RcResponder".
 */
class RcResponder
{
  public:
    explicit RcResponder(RcQp* qp);

    /** Post n receive work requests (consumed by SENDs and WRITEs with immediate). */
    void PostRecv(uint32_t n);
    /** An ACK, NAK or READ response is queued. */
    bool HasPacket() const;
    /** The next ACK, NAK or READ response packet (only when HasPacket()). */
    OutgoingPacket NextPacket();
    /** A request (SEND, WRITE or READ request packet) arrived. */
    void Receive(Ptr<Packet> packet, const TransportHeader& h, uint32_t payload);

  private:
    /** @brief What the responder sends next: an ACK/NAK (npkts 0) or a READ response stream. */
    struct Response
    {
        uint32_t psn;    //!< ACK/NAK: the PSN it names; READ: the first response's PSN
        uint32_t npkts;  //!< READ: response packets in the stream; 0 for an ACK or NAK
        uint32_t sent;   //!< READ: response packets sent so far
        uint8_t flags;   //!< ACK/NAK: TransportHeader flags
        uint64_t bytes;  //!< READ: bytes of the stream
        uint64_t offset; //!< READ: where the stream starts in this (the responder's) region
    };

    /** Queue an ACK (flags 0; coalesces with a queued ACK) or a NAK naming psn. */
    void QueueControl(uint32_t psn, uint8_t flags);
    /** A packet not at the expected PSN: a duplicate (ACKed again, a READ executed again) or one
     *  ahead of it (a NAK, once until the expected one arrives). */
    void OutOfSequence(const TransportHeader& h);
    /** Drop the queued responses the requester asks for again from psn on. */
    void AbandonFrom(uint32_t psn);
    /** The packet (accepted in order) completes a receive: submit its completion. */
    void Deliver(const TransportHeader& h);

    RcQp* m_qp;           //!< the QP this is part of (not owned)
    uint32_t m_ePsn;      //!< expected PSN
    bool m_nakSent;       //!< a NAK for m_ePsn is out
    uint32_t m_unacked;   //!< packets accepted since the last ACK
    uint64_t m_msgBytes;  //!< bytes of the message being received
    uint64_t m_msgOffset; //!< its place in the region (a WRITE's RETH)
    uint32_t m_postedRecvs;
    uint32_t m_int = 0; //!< HPCC: the newest data packet's INT handle, for the next ACK
    std::deque<Response> m_responses; //!< ACKs, NAKs and READ responses, in PSN order
};

} // namespace mcsim
} // namespace ns3
