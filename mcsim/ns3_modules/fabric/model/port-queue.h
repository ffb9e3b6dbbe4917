// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "credit-account.h"
#include "fabric-header.h"
#include "owned-packet.h"

#include "ns3/mcsim/fifo.h"
#include "ns3/nstime.h"

#include <cstddef>
#include <cstdint>
#include <utility>

namespace ns3
{
namespace mcsim
{

class Port;
class PortWaker;

/**
 * @brief The output queue of one port: packets waiting for credits or a pause's end (FIFO per
 * traffic class: the lossless class's and the lossy class's), then committed packets in flight
 * (FIFO by arrival) until they are handed to the peer.
 *
 * A committed packet departs (its last bit leaves) one link delay before it arrives; the queue
 * counts the wire bytes of the committed packets that have not departed yet lazily, when asked
 * (Occupancy, QueuedBytes), from the delay the port passes in.
 */
class PortQueue
{
  public:
    /** A packet blocked on credits. */
    struct Waiting
    {
        OwnedPacket packet;
        FabricHeader::Fields fields;
        Time earliest;
        CreditReturn credit;
        PortWaker* waker = nullptr;
    };

    /**
     * A committed packet, from its commit to its handover to the peer: when its last bit arrives
     * (it departs at arrival - Delay), or earlier, when its first bytes have arrived, if the peer
     * is a cut-through switch.
     */
    struct InFlight
    {
        Time handover; //!< when the peer gets it (its arrival event)
        Time arrival;  //!< when its last bit arrives
        OwnedPacket packet;
        FabricHeader::Fields fields;
        Port* creditDue = nullptr; //!< an upstream port whose credit for it is due at handover
        uint32_t wireBytes = 0;    //!< its bytes on the wire
    };

    PortQueue();

    /** Wire bytes committed and not departed by now (packets depart at arrival - delay). */
    uint64_t QueuedBytes(Time now, Time delay)
    {
        Release(now, delay);
        return m_queuedBytes;
    }

    /**
     * Commit a packet (appended in flight, in arrival order).
     * @return the occupancy: wire bytes queued (not departed by now) plus waiting
     */
    uint64_t Commit(InFlight packet, Time now, Time delay)
    {
        Release(now, delay);
        m_queuedBytes += packet.wireBytes;
        if (packet.fields.IsLossy())
        {
            LossyCommitted(packet.arrival, packet.wireBytes);
        }
        m_inFlightBytes += packet.wireBytes;
        m_inFlight.push_back(std::move(packet));
        return m_queuedBytes + m_waitingBytes;
    }

    /** Remove the first packet in flight: it is handed over now. */
    InFlight PopArrival()
    {
        InFlight head = std::move(m_inFlight.front());
        m_inFlightBytes -= head.wireBytes;
        if (m_departed > 0)
        {
            --m_departed;
        }
        else
        {
            m_queuedBytes -= head.wireBytes; // it departed, uncounted yet
            if (head.fields.IsLossy())
            {
                LossyHandedOver(head.arrival);
            }
        }
        m_inFlight.pop_front();
        return head;
    }

    /** Wire bytes queued (committed and not departed by now) and waiting. */
    uint64_t Occupancy(Time now, Time delay)
    {
        Release(now, delay);
        return m_queuedBytes + m_waitingBytes;
    }

    /** Wire bytes of the lossy class queued (committed and not departed by now) and waiting. */
    uint64_t LossyOccupancy(Time now, Time delay)
    {
        // its departures counted apart from the others' (Release): the lossy class's accounting
        // costs the rest nothing on their way
        const int64_t by = DepartedArrival(now, delay);
        while (!m_lossyInFlight.empty() && m_lossyInFlight.front().arrival.GetTimeStep() <= by)
        {
            m_lossyQueuedBytes -= m_lossyInFlight.front().wireBytes;
            m_lossyInFlight.pop_front();
        }
        return m_lossyQueuedBytes + m_lossyWaitingBytes;
    }

    /**
     * Occupancy(at, delay), changing nothing (a reader between events: a queue trace); `at` no
     * earlier than any time the queue was asked at before.
     */
    uint64_t OccupancyAt(Time at, Time delay) const
    {
        uint64_t departed = 0;
        DepartedBy(at, delay, departed);
        return m_queuedBytes - departed + m_waitingBytes;
    }

    /** Wire bytes committed and not handed over yet. */
    uint64_t InFlightBytes() const
    {
        return m_inFlightBytes;
    }

    bool HasInFlight() const
    {
        return !m_inFlight.empty();
    }

    std::size_t InFlightCount() const
    {
        return m_inFlight.size();
    }

    /** Handover time of the first packet in flight (there must be one). */
    Time FirstHandover() const
    {
        return m_inFlight.front().handover;
    }

    /** Handover time of the last packet in flight, the one committed last (there must be one). */
    Time LastHandover() const
    {
        return m_inFlight[m_inFlight.size() - 1].handover;
    }

    /**
     * The packet in flight that is handed over at `handover` (there must be one) carries to's
     * credit.
     */
    void AttachCreditDue(Time handover, Port* to);

    /** Whether a packet of the class waits (the lossless class: the only one with credits). */
    bool HasWaiting(bool lossy = false) const
    {
        return !m_waiting[lossy].empty();
    }

    Waiting& FrontWaiting(bool lossy = false)
    {
        return m_waiting[lossy].front();
    }

    /**
     * Append a packet blocked on credits or a pause to its class's waiting packets (`lossy`:
     * the lossy class's, PFC only), of wireBytes on the wire.
     * @return the occupancy: wire bytes queued (not departed by now) plus waiting
     */
    uint64_t PushWaiting(Waiting packet, uint32_t wireBytes, Time now, Time delay, bool lossy);

    /** Remove the first waiting packet of the class, of wireBytes on the wire. */
    Waiting PopWaiting(uint32_t wireBytes, bool lossy = false)
    {
        m_waitingBytes -= wireBytes;
        if (lossy)
        {
            m_lossyWaitingBytes -= wireBytes;
        }
        Waiting head = std::move(m_waiting[lossy].front());
        m_waiting[lossy].pop_front();
        return head;
    }

    /** Drop every packet (DoDispose). */
    void Clear();

  private:
    /** Count the packets in flight that have departed by now out of the queued bytes. */
    [[gnu::always_inline]] void Release(Time now, Time delay)
    {
        uint64_t departed = 0;
        m_departed = DepartedBy(now, delay, departed);
        m_queuedBytes -= departed;
    }

    /** A packet in flight has departed by `at` when its arrival, in time steps, is at most this:
     * it departs at arrival - delay (the loops compare time steps: no Time temporaries). */
    static int64_t DepartedArrival(Time at, Time delay)
    {
        return at.GetTimeStep() + delay.GetTimeStep();
    }

    /** The packets in flight that have departed by `at`: one past the last of them (from
     * m_departed), their wire bytes added to `bytes`. Departures are in commit order, at
     * arrival - delay. */
    std::size_t DepartedBy(Time at, Time delay, uint64_t& bytes) const
    {
        const int64_t by = DepartedArrival(at, delay);
        std::size_t i = m_departed;
        for (; i < m_inFlight.size() && m_inFlight[i].arrival.GetTimeStep() <= by; ++i)
        {
            bytes += m_inFlight[i].wireBytes;
        }
        return i;
    }

    /** A lossy-class packet committed and not yet counted as departed. */
    struct LossyInFlight
    {
        Time arrival; //!< its InFlight's (it departs at arrival - delay)
        uint32_t wireBytes;
    };

    /** A lossy packet was committed (out of line: the hot path keeps only its test). */
    [[gnu::noinline]] void LossyCommitted(Time arrival, uint32_t wireBytes)
    {
        m_lossyInFlight.push_back({arrival, wireBytes});
        m_lossyQueuedBytes += wireBytes;
    }

    /** The lossy packet in flight that arrives at `arrival` was handed over before it was counted
     * as departed (a cut-through peer's): it leaves the queue now, as Release's count does. */
    [[gnu::noinline]] void LossyHandedOver(Time arrival)
    {
        if (!m_lossyInFlight.empty() && m_lossyInFlight.front().arrival == arrival)
        {
            m_lossyQueuedBytes -= m_lossyInFlight.front().wireBytes;
            m_lossyInFlight.pop_front();
        }
    }

    // what every packet reads first (a port embeds the queue after its own hot fields)
    Fifo<InFlight> m_inFlight;  //!< committed, FIFO by arrival (and so by handover)
    std::size_t m_departed;     //!< the first m_departed packets in flight have departed ...
    uint64_t m_queuedBytes;     //!< ... and the others, with these wire bytes, are queued
    uint64_t m_inFlightBytes;   //!< wire bytes of m_inFlight
    uint64_t m_waitingBytes;    //!< wire bytes of m_waiting, both classes
    Fifo<Waiting> m_waiting[2]; //!< blocked, FIFO per class: [0] lossless, [1] lossy
    Fifo<LossyInFlight> m_lossyInFlight; //!< the lossy class's committed, by arrival ...
    uint64_t m_lossyQueuedBytes = 0;     //!< ... and their wire bytes
    uint64_t m_lossyWaitingBytes = 0;    //!< of m_waitingBytes, the lossy class's
};

inline uint64_t
PortQueue::PushWaiting(Waiting packet, uint32_t wireBytes, Time now, Time delay, bool lossy)
{
    m_waiting[lossy].push_back(std::move(packet));
    m_waitingBytes += wireBytes;
    if (lossy)
    {
        m_lossyWaitingBytes += wireBytes;
    }
    Release(now, delay);
    return m_queuedBytes + m_waitingBytes;
}

} // namespace mcsim
} // namespace ns3
