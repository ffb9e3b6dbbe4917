// SPDX-License-Identifier: GPL-2.0-only
// A QueueSampler's part of the C ABI (ns3/mcsim/abi.h; fabric/helper/queue-sampler.h): the
// output queue occupancy of some ports, sampled without events, read in bulk after the run.
#include "abi.h"

#include "ns3/mcsim/bulk-output.h"
#include "ns3/mcsim/fabric.h"
#include "ns3/mcsim/queue-sampler.h"

using namespace ns3;
using namespace ns3::mcsim;

/** Sample port `port` of node `node` of the fabric too (before start). */
MCSIM_ABI int64_t
mcsim_queue_sampler_attach(void* sampler, void* fabric, uint32_t node, uint32_t port)
{
    return capi::Do([&] {
        const auto& fab = capi::As<Fabric>(fabric);
        capi::As<QueueSampler>(sampler).Attach(fab.GetPort(fab.GetPortIndex(node, port)));
    });
}

/** Sample from time 0 (before the run). */
MCSIM_ABI int64_t
mcsim_queue_sampler_start(void* sampler)
{
    return capi::Do([&] { capi::As<QueueSampler>(sampler).Start(); });
}

/** Take the samples up to the run's end; out[0] samples kept per port, out[1] left out. */
MCSIM_ABI int64_t
mcsim_queue_sampler_finish(void* sampler, uint64_t* out, uint64_t n)
{
    return capi::Do([&] {
        auto& s = capi::As<QueueSampler>(sampler);
        s.Finish();
        CheckOutputSize("mcsim_queue_sampler_finish", n, 2);
        out[0] = s.GetKept();
        out[1] = s.GetLeftOut();
    });
}

/** Every port's samples, port after port (n: ports x samples kept). */
MCSIM_ABI int64_t
mcsim_queue_sampler_samples(void* sampler, uint64_t* out, uint64_t n)
{
    return capi::Do([&] { capi::As<QueueSampler>(sampler).CopySamples(out, n); });
}

/** Per port, its RED thresholds in force: Kmin, Kmax (0, 0: it marks nothing); n: 2 x ports. */
MCSIM_ABI int64_t
mcsim_queue_sampler_ecn_thresholds(void* sampler, uint64_t* out, uint64_t n)
{
    return capi::Do([&] { capi::As<QueueSampler>(sampler).CopyEcnThresholds(out, n); });
}
