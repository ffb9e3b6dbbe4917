// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/mcsim/event-order.h"
#include "ns3/mcsim/int-store.h"
#include "ns3/object.h"

#include <cstdint>
#include <limits>

namespace ns3
{
namespace mcsim
{

/**
 * @brief A congestion control: one per QP of a NIC (rdma.md, "Congestion control"). The NIC tells
 * it what happened to its QP (a CE-marked packet in, a CNP in, an ACK with INT records, a packet
 * sent) and paces the QP to its rate; an RC QP keeps its bytes in flight below its window.
 *
 * The NIC makes one from its ObjectFactory (Nic::SetCongestionControl) per QP, the kind chosen by
 * TypeId as ns-3 chooses a TcpCongestionOps: Dcqcn and Hpcc derive from it and own their
 * attributes. Without one (the default) every QP sends at the line rate. The rate and the window
 * are read per packet, so they are fields of this class read inline; what happens is told through
 * the virtual calls, each a no-op unless the kind reacts to it.
 */
class CongestionControl : public Object
{
  public:
    static TypeId GetTypeId();
    /** GetWindowBytes when it keeps no window. */
    static constexpr uint64_t NO_WINDOW = std::numeric_limits<uint64_t>::max();

    /** Its settings as a whole (the NIC asks one at Attach); throws std::invalid_argument. */
    virtual void Check() const
    {
    }

    /** The NIC sends a CNP for CE-marked packets its QPs get (at most as OnCe says) and hands the
     * CNPs that arrive to their QPs' OnCnp (DCQCN): the fabric must mark ECN. */
    virtual bool UsesCnps() const
    {
        return false;
    }

    /** Its QP's data packets ask the switches for INT records, brought back by ACKs (HPCC). */
    virtual bool UsesInt() const
    {
        return false;
    }

    /** Take charge of one QP: at the line rate, its timers (if any) in the QP's order. */
    void Start(uint64_t lineBps, EventSource* source)
    {
        m_lineBps = lineBps;
        m_rateBps = lineBps;
        m_source = source;
        DoStart();
    }

    /** It paces its QP below the line rate. */
    bool Limited() const
    {
        return m_rateBps < m_lineBps;
    }

    /** The rate its QP is paced to while Limited(). */
    uint64_t GetRateBps() const
    {
        return m_rateBps;
    }

    /** Bytes an RC QP may have in flight (NO_WINDOW: no limit). */
    uint64_t GetWindowBytes() const
    {
        return m_windowBytes;
    }

    /** A CE-marked packet arrived for the QP (the receiver's side): whether to send its sender a
     * CNP now (UsesCnps). */
    virtual bool OnCe()
    {
        return false;
    }

    /** A CNP for the QP arrived (UsesCnps). */
    virtual void OnCnp()
    {
    }

    /**
     * An ACK brought back the INT records s (UsesInt); it acknowledged every PSN below ackedEnd;
     * nextPsn: one past the highest PSN sent.
     */
    virtual void OnAck(const IntStore::Stack& s, uint32_t ackedEnd, uint32_t nextPsn)
    {
    }

    /** The QP sent a packet of this many payload bytes (before the NIC reads the rate). */
    virtual void OnSent(uint32_t payloadBytes)
    {
    }

  protected:
    /** Start's work of a kind: its state at the line rate m_lineBps. */
    virtual void DoStart()
    {
    }

    uint64_t m_lineBps = 0;             //!< the QP's line rate
    uint64_t m_rateBps = 0;             //!< the rate in force (the line rate: not limited)
    uint64_t m_windowBytes = NO_WINDOW; //!< the window in force
    EventSource* m_source = nullptr;    //!< its timers' order: its QP's
};

} // namespace mcsim
} // namespace ns3
