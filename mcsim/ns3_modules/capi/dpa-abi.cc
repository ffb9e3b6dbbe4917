// SPDX-License-Identifier: GPL-2.0-only
// The DPA module's part of the C ABI (ns3/mcsim/abi.h): a CompletionSource's calls, one each.
#include "abi.h"

#include "ns3/mcsim/completion-source.h"
#include "ns3/mcsim/dpa.h"
#include "ns3/nstime.h"

using namespace ns3;
using namespace ns3::mcsim;

namespace
{
/** A completion source's processor's thread counters (Dpa::GetThreadCounters); fails if it is no
 * Dpa. */
void
ReadDpaThreads(void* source, uint64_t* out, uint64_t n)
{
    Ptr<Dpa> dpa = DynamicCast<Dpa>(capi::As<CompletionSource>(source).GetProcessor());
    if (!dpa)
    {
        throw std::invalid_argument("the completion source's processor is not a Dpa");
    }
    dpa->GetThreadCounters(out, n);
}

/** The DPA's counter table (dpa/model/dpa.cc), read by mcsim_counters from a CompletionSource. */
const capi::CounterReaders g_dpaReaders({{"dpa_thread", ReadDpaThreads}});
} // namespace

MCSIM_ABI int64_t
mcsim_source_setup(void* source, void* processorFactory)
{
    return capi::Do(
        [&] { capi::As<CompletionSource>(source).Setup(capi::FactoryAt(processorFactory)); });
}

/** Offer the completions, one every intervalPs, from now. */
MCSIM_ABI int64_t
mcsim_source_start(void* source,
                   uint32_t count,
                   uint32_t endpoints,
                   uint32_t bytes,
                   uint32_t staged,
                   int64_t intervalPs)
{
    return capi::Do([&] {
        capi::As<CompletionSource>(source).Start(count,
                                                 endpoints,
                                                 bytes,
                                                 staged != 0,
                                                 PicoSeconds(intervalPs));
    });
}

MCSIM_ABI int64_t
mcsim_source_processed(void* source)
{
    return capi::Call([&] { return capi::As<CompletionSource>(source).GetProcessed(); });
}

MCSIM_ABI int64_t
mcsim_source_processed_ps(void* source, uint64_t* out, uint64_t n)
{
    return capi::Do([&] { capi::As<CompletionSource>(source).GetProcessedPs(out, n); });
}

/** The source's processor's busy time (CompletionProcessor::GetBusyPs). */
MCSIM_ABI int64_t
mcsim_source_busy_ps(void* source)
{
    return capi::Call(
        [&] { return capi::As<CompletionSource>(source).GetProcessor()->GetBusyPs(); });
}
