// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "packet-receiver.h"

#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/packet.h"

#include <cstdint>
#include <deque>

namespace ns3
{
namespace mcsim
{

/**
 * @brief The transmit side of one direction of a full-duplex link.
 *
 * A packet occupies the wire for (payload + HeaderBytes) * 8 bits at the data rate, which is the
 * signalling DataRate times EncodingDataBits / EncodingLineBits (FDR InfiniBand: 56 Gbit/s and
 * 64b/66b give 54.54 Gbit/s). The serialization time is computed in integer picoseconds and
 * rounded up, so it is never short by even 1 ps. Packets leave in FIFO order; a packet arrives at
 * the peer Delay after its last bit left. One event per packet: the transmit queue is a
 * busy-until time, and only the head of the in-flight FIFO has an arrival scheduled.
 */
class Port : public Object
{
  public:
    static TypeId GetTypeId();
    Port();
    ~Port() override;

    /**
     * Connect this port to the receiver at the far end of its link (a raw back-pointer: the
     * fabric owns both objects and keeps them alive for the whole run).
     * @param peer the receiver
     * @param peerPort the receiver's input port number
     */
    void Connect(PacketReceiver* peer, uint32_t peerPort);

    /**
     * Queue a packet behind those already sending.
     * @param packet the packet; its size is the payload, HeaderBytes are added on the wire
     * @return the time at which its last bit leaves this port
     * @throws std::logic_error if the port is not connected
     */
    Time Send(Ptr<Packet> packet);

    /** @return the serialization time of a packet of payloadBytes (plus HeaderBytes) */
    Time GetTxTime(uint64_t payloadBytes) const;
    /** @return the data rate after line encoding, in bit/s (rounded down) */
    uint64_t GetDataRateBps() const;
    /** @return the time the last queued bit leaves (<= Now() when idle) */
    Time GetBusyUntil() const;

    uint64_t GetTxPackets() const;   //!< packets sent
    uint64_t GetTxBytes() const;     //!< payload bytes sent (HeaderBytes excluded)
    uint64_t GetTxWireBytes() const; //!< bytes on the wire (HeaderBytes included)
    Time GetBusyTime() const;        //!< total serialization time

  protected:
    void DoDispose() override;

  private:
    /** Deliver the head of the in-flight FIFO and schedule the next arrival. */
    void Arrive();

    /** One packet on the wire or queued: when its last bit reaches the peer. */
    struct InFlight
    {
        Time arrival;
        Ptr<Packet> packet;
    };

    static constexpr uint32_t DEFAULT_HEADER_BYTES = 0;

    DataRate m_rate;              //!< "DataRate": signalling rate
    uint32_t m_encodingDataBits;  //!< "EncodingDataBits": data bits per code word
    uint32_t m_encodingLineBits;  //!< "EncodingLineBits": line bits per code word
    uint32_t m_headerBytes;       //!< "HeaderBytes": wire bytes per packet beyond the payload
    Time m_delay;                 //!< "Delay": propagation delay
    PacketReceiver* m_peer;       //!< far end (not owned)
    uint32_t m_peerPort;          //!< far end's input port
    Time m_busyUntil;             //!< last queued bit leaves at this time
    std::deque<InFlight> m_inFlight;
    uint64_t m_txPackets;
    uint64_t m_txBytes;
    uint64_t m_txWireBytes;
    Time m_busyTime;
};

} // namespace mcsim
} // namespace ns3
