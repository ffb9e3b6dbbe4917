// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/mcsim/port.h"
#include "ns3/mcsim/watcher.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <vector>

namespace ns3
{
namespace mcsim
{

/**
 * @brief A queue trace: the output queue occupancy of some ports (wire bytes, as ECN's RED reads
 * it), sampled every Interval from time 0 to the run's end, without an event of its own (a
 * Watcher: fabric.md, "Queue trace"); at most MaxSamples per port are kept, the rest counted.
 */
class QueueSampler : public Object, public Watcher
{
  public:
    /** "Interval": 1 us, tens of samples per DCQCN timer period (rdma.md, "DCQCN"). */
    static constexpr int64_t DEFAULT_INTERVAL_PS = 1000000;
    /** "MaxSamples": a million per port, 8 MB each (a run of 1 s at the default interval). */
    static constexpr uint64_t DEFAULT_MAX_SAMPLES = 1000000;

    static TypeId GetTypeId();
    QueueSampler();
    ~QueueSampler() override;

    /** Sample this port's output queue too (setup, before Start). */
    void Attach(Ptr<Port> port);
    /**
     * Take the first sample at time 0 and one every Interval after it (setup, before the run).
     * @throws std::invalid_argument if the simulator is not the EventLoop, the run has begun, or
     *         no port is attached
     */
    void Start();
    /** Take the samples up to the clock's time (the run is over) and stop sampling. */
    void Finish();

    uint64_t Look(uint64_t ts) override;

    uint64_t GetKept() const;    //!< samples kept per port
    uint64_t GetLeftOut() const; //!< samples per port past MaxSamples, not kept (after Finish)
    /**
     * Every port's samples, port by port in the order attached: out[p * GetKept() + k] is port
     * p's queue bytes at k * Interval.
     * @throws std::invalid_argument unless n == ports x GetKept()
     */
    void CopySamples(uint64_t* out, std::size_t n) const;
    /**
     * Per port in the order attached, its RED thresholds in force: out[2p] Kmin, out[2p + 1]
     * Kmax (both 0 if the port marks nothing).
     * @throws std::invalid_argument unless n == 2 x ports
     */
    void CopyEcnThresholds(uint64_t* out, std::size_t n) const;

  protected:
    void DoDispose() override;

  private:
    Time m_interval;                              //!< "Interval"
    uint64_t m_maxSamples;                        //!< "MaxSamples": kept per port
    std::vector<Ptr<Port>> m_ports;               //!< in the order attached
    std::vector<std::vector<uint64_t>> m_samples; //!< per port, queue bytes per look
    uint64_t m_endTs = 0;                         //!< when Finish looked last
    bool m_watching = false;
};

} // namespace mcsim
} // namespace ns3
