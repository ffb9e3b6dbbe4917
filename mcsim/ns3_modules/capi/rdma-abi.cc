// SPDX-License-Identifier: GPL-2.0-only
// The RDMA module's part of the C ABI (ns3/mcsim/abi.h): an RdmaStack's and a VerbsWorkload's
// calls, one each.
#include "abi.h"

#include "ns3/mcsim/bulk-output.h"
#include "ns3/mcsim/fabric.h"
#include "ns3/mcsim/pcap-writer.h"
#include "ns3/mcsim/rc-qp.h"
#include "ns3/mcsim/rdma-stack.h"
#include "ns3/mcsim/verbs-workload.h"

using namespace ns3;
using namespace ns3::mcsim;

namespace
{
/** mcsim.config.rdma declares them too (tests/native/test_constants.py compares). */
const capi::Constants g_rdmaConstants({
    {"NO_GROUP", VerbsWorkload::NO_GROUP},
    {"RETRY_FOREVER", RcQp::RETRY_FOREVER},
    {"INT_HEADER_B", IntStore::HEADER_BYTES},
});

/** The stack's NICs' counters and a verbs workload's QPs' (rdma/helper), read by mcsim_counters. */
const capi::CounterReaders g_rdmaReaders({
    {"nic", capi::ReadWith<RdmaStack, &RdmaStack::GetHostCounters>},
    {"cc", capi::ReadWith<RdmaStack, &RdmaStack::GetCcCounters>},
    {"rc_qp", capi::ReadWith<VerbsWorkload, &VerbsWorkload::GetRcQpCounters>},
    {"ud_qp", capi::ReadWith<VerbsWorkload, &VerbsWorkload::GetUdQpCounters>},
});
} // namespace

MCSIM_ABI int64_t
mcsim_stack_setup(void* stack,
                  void* fabric,
                  void* nicFactory,
                  void* processorFactory,
                  void* rcFactory,
                  void* udFactory)
{
    return capi::Do([&] {
        capi::As<RdmaStack>(stack).Setup(&capi::As<Fabric>(fabric),
                                         capi::FactoryAt(nicFactory),
                                         capi::FactoryAt(processorFactory),
                                         capi::FactoryAt(rcFactory),
                                         capi::FactoryAt(udFactory));
    });
}

/** Every NIC's QPs get a congestion control of this factory's (before mcsim_stack_setup). */
MCSIM_ABI int64_t
mcsim_stack_set_congestion(void* stack, void* factory)
{
    return capi::Do(
        [&] { capi::As<RdmaStack>(stack).SetCongestionControl(capi::FactoryAt(factory)); });
}

/** Verify mode: host's NIC gets `bytes` of real memory (Nic::EnableMemory). */
MCSIM_ABI int64_t
mcsim_stack_enable_memory(void* stack, uint32_t host, uint64_t bytes)
{
    return capi::Do([&] { capi::As<RdmaStack>(stack).GetNic(host)->EnableMemory(bytes); });
}

MCSIM_ABI int64_t
mcsim_stack_write_memory(void* stack,
                         uint32_t host,
                         uint64_t offset,
                         const uint8_t* data,
                         uint64_t n)
{
    return capi::Do([&] { capi::As<RdmaStack>(stack).GetNic(host)->WriteMemory(offset, data, n); });
}

MCSIM_ABI int64_t
mcsim_stack_read_memory(void* stack, uint32_t host, uint64_t offset, uint8_t* out, uint64_t n)
{
    return capi::Do([&] { capi::As<RdmaStack>(stack).GetNic(host)->ReadMemory(offset, out, n); });
}

MCSIM_ABI int64_t
mcsim_verbs_setup(void* workload, void* stack)
{
    return capi::Do([&] { capi::As<VerbsWorkload>(workload).Setup(&capi::As<RdmaStack>(stack)); });
}

MCSIM_ABI int64_t
mcsim_verbs_add_ud_group(void* workload, uint32_t group, const uint32_t* members, uint64_t n)
{
    return capi::Do([&] { capi::As<VerbsWorkload>(workload).AddUdGroup(group, members, n); });
}

MCSIM_ABI int64_t
mcsim_verbs_add_rc_ops(void* workload,
                       const uint32_t* verb,
                       const uint32_t* src,
                       const uint32_t* dst,
                       const uint64_t* bytes,
                       const int64_t* startPs,
                       uint64_t n)
{
    return capi::Do(
        [&] { capi::As<VerbsWorkload>(workload).AddRcOps(verb, src, dst, bytes, startPs, n); });
}

MCSIM_ABI int64_t
mcsim_verbs_add_ud_streams(void* workload,
                           const uint32_t* src,
                           const uint32_t* dst,
                           const uint32_t* count,
                           const uint32_t* bytes,
                           const int64_t* startPs,
                           uint64_t n)
{
    return capi::Do([&] {
        capi::As<VerbsWorkload>(workload).AddUdStreams(src, dst, count, bytes, startPs, n);
    });
}

MCSIM_ABI int64_t
mcsim_verbs_n_ud_qps(void* workload)
{
    return capi::Call([&] { return capi::As<VerbsWorkload>(workload).GetNUdQps(); });
}

MCSIM_ABI int64_t
mcsim_verbs_rc_op_times(void* workload, uint64_t* out, uint64_t n)
{
    return capi::Do([&] { capi::As<VerbsWorkload>(workload).GetRcOpTimes(out, n); });
}

// ---------------------------------------------------------------------------------------------
// a PcapWriter (rdma/helper/pcap-writer.h): the frames of some NICs and ports in one pcap file

/** Create the file, its frames in the stack's wire format, whole if its NICs carry payloads. */
MCSIM_ABI int64_t
mcsim_pcap_open(void* writer, void* stack, const char* path)
{
    return capi::Do([&] {
        const Ptr<Nic> nic = capi::As<RdmaStack>(stack).GetNic(0);
        capi::As<PcapWriter>(writer).Open(path, nic->GetWireFormat(), nic->HasMemory());
    });
}

MCSIM_ABI int64_t
mcsim_pcap_attach(void* writer, void* stack, uint32_t host)
{
    return capi::Do(
        [&] { capi::As<PcapWriter>(writer).Attach(capi::As<RdmaStack>(stack).GetNic(host)); });
}

/** Trace port `port` of node `node`: the frames it sends and those that arrive at it. */
MCSIM_ABI int64_t
mcsim_pcap_attach_port(void* writer, void* fabric, uint32_t node, uint32_t port)
{
    return capi::Do([&] {
        const auto& fab = capi::As<Fabric>(fabric);
        const uint32_t g = fab.GetPortIndex(node, port);
        capi::As<PcapWriter>(writer).AttachPort(fab.GetPort(g), fab.GetPeerPort(g));
    });
}

/** Close the file; out[0] frames written, out[1] frames over a cap. */
MCSIM_ABI int64_t
mcsim_pcap_close(void* writer, uint64_t* out, uint64_t n)
{
    return capi::Do([&] {
        auto& w = capi::As<PcapWriter>(writer);
        w.Close();
        CheckOutputSize("mcsim_pcap_close", n, 2);
        out[0] = w.GetWritten();
        out[1] = w.GetSkipped();
    });
}
