// SPDX-License-Identifier: GPL-2.0-only
#include "dpa.h"

#include "ns3/double.h"
#include "ns3/enum.h"
#include "ns3/log.h"
#include "ns3/mcsim/bulk-output.h"
#include "ns3/mcsim/event-loop.h"
#include "ns3/mcsim/indexed-event.h"
#include "ns3/mcsim/invariant.h"
#include "ns3/mcsim/line-time.h"
#include "ns3/mcsim/reusable-event.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace ns3
{
namespace mcsim
{

NS_LOG_COMPONENT_DEFINE("McsimDpa");
NS_OBJECT_ENSURE_REGISTERED(Dpa);

namespace
{
const CounterTable g_threadTable("dpa_thread",
                                 CounterTable::Columns({}, Dpa::ThreadCounters::NAMES));
} // namespace

namespace
{
constexpr double PS_PER_S = 1e12;
} // namespace

TypeId
Dpa::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::mcsim::Dpa")
            .SetParent<CompletionProcessor>()
            .SetGroupName("Mcsim")
            .AddConstructor<Dpa>()
            .AddAttribute("Cores",
                          "Cores of the DPA (BlueField-3: 16).",
                          UintegerValue(DEFAULT_CORES),
                          MakeUintegerAccessor(&Dpa::m_cores),
                          MakeUintegerChecker<uint32_t>(1, 4096))
            .AddAttribute("ThreadsPerCore",
                          "Hardware threads per core (BlueField-3: 16).",
                          UintegerValue(DEFAULT_THREADS_PER_CORE),
                          MakeUintegerAccessor(&Dpa::m_threadsPerCore),
                          MakeUintegerChecker<uint32_t>(1, 4096))
            .AddAttribute("Threads",
                          "Threads in use by the receive engine, 1..Cores * ThreadsPerCore; the "
                          "completions of QP q go to thread q mod Threads.",
                          UintegerValue(DEFAULT_THREADS),
                          MakeUintegerAccessor(&Dpa::m_nThreads),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute(
                "Placement",
                "Which core each thread runs on: Spread (round-robin over the cores, "
                "one thread per core first) or Pack (fill a core first).",
                EnumValue(ThreadPlacement::SPREAD),
                MakeEnumAccessor<ThreadPlacement>(&Dpa::m_placement),
                MakeEnumChecker(ThreadPlacement::SPREAD, "Spread", ThreadPlacement::PACK, "Pack"))
            .AddAttribute("ClockHz",
                          "Core clock in cycles per second (BlueField-3 DPA: about 1.8 GHz).",
                          UintegerValue(DEFAULT_CLOCK_HZ),
                          MakeUintegerAccessor(&Dpa::m_clockHz),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("ZeroCopyCycles",
                          "Cycles of a lone thread per completion on the zero-copy (write-based) "
                          "receive path: check the CQE, read the immediate, update the CQ and RQ "
                          "doorbells, set the bitmap bit, check for a gap. 577 cycles at 1.8 GHz "
                          "= 3.12 M completions/s = 11.9 GiB/s of 4 KiB chunks.",
                          UintegerValue(DEFAULT_ZERO_COPY_CYCLES),
                          MakeUintegerAccessor(&Dpa::m_zeroCopyCycles),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("StagingCycles",
                          "Cycles of a lone thread per completion on the staging (datagram) "
                          "receive path: the zero-copy work plus posting the loopback RDMA write "
                          "of the payload; about 4x ZeroCopyCycles.",
                          UintegerValue(DEFAULT_STAGING_CYCLES),
                          MakeUintegerAccessor(&Dpa::m_stagingCycles),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("IssueShare",
                          "Fraction (0..1] of its core's issue slots a thread uses when it runs "
                          "alone (the rest of the time it waits on memory and the NIC); the "
                          "threads of one core queue for the slots (see the class doc).",
                          DoubleValue(DEFAULT_ISSUE_SHARE),
                          MakeDoubleAccessor(&Dpa::m_issueShare),
                          MakeDoubleChecker<double>(1e-9, 1.0))
            .AddAttribute("CoreContention",
                          "Extra cost of a completion, as a fraction of it, per other busy core "
                          "(the cores share the DPA's memory system and NIC interface); 0 makes "
                          "cores independent.",
                          DoubleValue(DEFAULT_CORE_CONTENTION),
                          MakeDoubleAccessor(&Dpa::m_coreContention),
                          MakeDoubleChecker<double>(0.0))
            .AddAttribute("LoopbackRate",
                          "Rate in bit/s of the NIC's loopback RDMA writes that copy staged "
                          "payloads to their place (one FIFO per DPA, payload bytes only). The "
                          "default, twice the fastest link, keeps it from limiting a 1.6 Tbit/s "
                          "link; set the PCIe or NIC rate to study that limit.",
                          DataRateValue(DataRate(DEFAULT_LOOPBACK_BPS)),
                          MakeDataRateAccessor(&Dpa::m_loopbackRate),
                          MakeDataRateChecker());
    return tid;
}

Dpa::Dpa()
    : m_busyCores(0),
      m_arrivalEvent(Create<ReusableEvent<Dpa, &Dpa::Arrive>>(this)),
      m_arrivalSource(EventClass::COMPLETION),
      m_loopbackEvent(Create<ReusableEvent<Dpa, &Dpa::LoopbackDone>>(this)),
      m_loopbackSource(EventClass::COMPLETION),
      m_node(0),
      m_processed(0),
      m_loopbackBytes(0),
      m_loopbackBusyPs(0),
      m_coreEvents(0)
{
    Place(0, 0); // until a NIC places it
}

Dpa::~Dpa() = default;

void
Dpa::Place(uint32_t node, uint32_t /* unit */)
{
    m_node = node;
    m_arrivalSource.Place(node, unit::DPA_ARRIVAL);
    m_loopbackSource.Place(node, unit::DPA_LOOPBACK);
    for (uint32_t c = 0; c < m_coreState.size(); ++c)
    {
        m_coreState[c].source.Place(node, unit::DPA_CORE + c);
    }
}

void
Dpa::DoDispose()
{
    m_threads.clear();
    m_coreState.clear();
    m_finished.clear();
    m_loopback.clear();
    m_loopbackEvent = nullptr;
    m_arrivalEvent = nullptr;
    m_arriving.clear();
    CompletionProcessor::DoDispose();
}

void
Dpa::NotifyConstructionCompleted()
{
    CompletionProcessor::NotifyConstructionCompleted();
    Check(); // a factory with inconsistent attributes fails at Create(), before any packet
}

void
Dpa::Check() const
{
    const uint64_t most = static_cast<uint64_t>(m_cores) * m_threadsPerCore;
    if (m_nThreads == 0 || m_nThreads > most)
    {
        throw std::invalid_argument("Dpa: Threads=" + std::to_string(m_nThreads) + " must be 1.." +
                                    std::to_string(most) + " (Cores " + std::to_string(m_cores) +
                                    " x ThreadsPerCore " + std::to_string(m_threadsPerCore) + ")");
    }
    if (!(m_issueShare > 0.0 && m_issueShare <= 1.0) || !(m_coreContention >= 0.0))
    {
        throw std::invalid_argument("Dpa: IssueShare must be in (0, 1] and CoreContention >= 0");
    }
}

void
Dpa::Build()
{
    Check();
    m_sharing.assign(m_threadsPerCore + 1, 1.0);
    for (uint32_t n = 1; n <= m_threadsPerCore; ++n)
    {
        m_sharing[n] = GetSharingFactor(n);
    }
    m_threads.assign(m_nThreads, Thread{});
    for (uint32_t t = 0; t < m_nThreads; ++t)
    {
        m_threads[t].core = GetCoreOf(t);
    }
    m_coreState.clear();
    m_coreState.resize(m_cores);
    for (uint32_t c = 0; c < m_cores; ++c)
    {
        m_coreState[c].busy.reserve(m_threadsPerCore);
        m_coreState[c].event = Create<IndexedEvent<Dpa, &Dpa::CoreEvent>>(this, c);
        m_coreState[c].source.Place(m_node, unit::DPA_CORE + c);
    }
    m_busyCores = 0;
}

double
Dpa::GetSharingFactor(uint32_t n) const
{
    // exact MVA of n threads cycling between waiting (1 - u) and the core's issue queue (u)
    const double u = m_issueShare;
    double q = 0.0;
    double x = 1.0;
    for (uint32_t k = 1; k <= n; ++k)
    {
        const double r = u * (1.0 + q);
        x = k / (1.0 - u + r);
        q = x * r;
    }
    return n == 0 ? 1.0 : x / n;
}

uint32_t
Dpa::GetThreadOf(uint32_t qpn) const
{
    return qpn % m_nThreads;
}

uint32_t
Dpa::GetCoreOf(uint32_t thread) const
{
    return m_placement == ThreadPlacement::SPREAD ? thread % m_cores : thread / m_threadsPerCore;
}

Time
Dpa::GetServiceTime(bool staged, uint32_t activeOnCore, uint32_t activeCores) const
{
    if (activeOnCore == 0 || activeOnCore > m_threadsPerCore || activeCores == 0 ||
        activeCores > m_cores)
    {
        throw std::invalid_argument(
            "Dpa::GetServiceTime: " + std::to_string(activeOnCore) + " busy threads on a core of " +
            std::to_string(m_threadsPerCore) + ", " + std::to_string(activeCores) +
            " busy cores of " + std::to_string(m_cores));
    }
    Completion c;
    c.staged = staged;
    const double rate =
        GetSharingFactor(activeOnCore) / (1.0 + m_coreContention * (activeCores - 1));
    return PicoSeconds(static_cast<int64_t>(std::ceil(LoneWorkPs(c) / rate)));
}

Time
Dpa::GetLoopbackTime(uint32_t bytes) const
{
    return LineTime(bytes, m_loopbackRate.GetBitRate());
}

double
Dpa::LoneWorkPs(const Completion& c) const
{
    const double cycles = c.staged ? m_stagingCycles : m_zeroCopyCycles;
    return cycles * PS_PER_S / static_cast<double>(m_clockHz);
}

double
Dpa::Rate(uint32_t core) const
{
    return m_sharing[m_coreState[core].busy.size()] / (1.0 + m_coreContention * (m_busyCores - 1));
}

void
Dpa::Advance(uint32_t core)
{
    Core& k = m_coreState[core];
    const Time now = mcsim::Now();
    if (!k.busy.empty() && now > k.updated)
    {
        const double work = static_cast<double>((now - k.updated).GetPicoSeconds()) * Rate(core);
        for (uint32_t t : k.busy)
        {
            m_threads[t].remaining -= work;
        }
    }
    k.updated = now;
}

void
Dpa::AdvanceAll()
{
    for (uint32_t c = 0; c < m_cores; ++c)
    {
        if (!m_coreState[c].busy.empty())
        {
            Advance(c);
        }
    }
}

void
Dpa::Arm(uint32_t core)
{
    Core& k = m_coreState[core];
    if (k.busy.empty())
    {
        return;
    }
    double least = m_threads[k.busy.front()].remaining;
    for (uint32_t t : k.busy)
    {
        least = std::min(least, m_threads[t].remaining);
    }
    const auto ps = least <= DONE_PS ? 0 : static_cast<int64_t>(std::ceil(least / Rate(core)));
    const Time at = mcsim::Now() + PicoSeconds(ps);
    if (k.pending.empty() || k.pending.front() > at)
    {
        k.pending.push_front(at); // earlier than every pending one: the deque stays ascending
        mcsim::Post(at - mcsim::Now(), k.event, k.source);
    }
}

void
Dpa::ArmAll()
{
    for (uint32_t c = 0; c < m_cores; ++c)
    {
        Arm(c);
    }
}

void
Dpa::Submit(const Completion& c, CompletionSink* sink)
{
    const Time now = mcsim::Now();
    if (c.ready <= now && m_arriving.empty())
    {
        Accept(c, sink);
        return;
    }
    // one NIC, one receive latency: completions become ready in the order they come
    MCSIM_ASSERT(m_arriving.empty() || m_arriving.back().first.ready <= c.ready,
                 "Dpa: completions must become ready in order");
    m_arriving.emplace_back(c, sink);
    if (m_arriving.size() == 1)
    {
        mcsim::Post(std::max(c.ready, now) - now, m_arrivalEvent, m_arrivalSource);
    }
}

void
Dpa::Arrive()
{
    const Time now = mcsim::Now();
    while (!m_arriving.empty() && m_arriving.front().first.ready <= now)
    {
        auto [c, sink] = std::move(m_arriving.front());
        m_arriving.pop_front();
        Accept(c, sink);
    }
    if (!m_arriving.empty())
    {
        mcsim::Post(m_arriving.front().first.ready - now, m_arrivalEvent, m_arrivalSource);
    }
}

void
Dpa::Accept(const Completion& c, CompletionSink* sink)
{
    if (m_threads.empty())
    {
        Build(); // attributes are final once the first completion arrives
    }
    const uint32_t t = c.qpn % m_nThreads;
    Thread& th = m_threads[t];
    th.queue.emplace_back(c, sink);
    th.maxQueue = std::max<uint64_t>(th.maxQueue, th.queue.size());
    if (th.queue.size() > 1)
    {
        return; // the thread is busy; it gets there in order
    }
    th.remaining = LoneWorkPs(c);
    th.started = mcsim::Now();
    Core& k = m_coreState[th.core];
    if (k.busy.empty())
    {
        AdvanceAll(); // one more busy core slows every busy thread
        m_busyCores++;
        k.updated = mcsim::Now();
        k.busy.push_back(t);
        ArmAll();
    }
    else
    {
        Advance(th.core); // one more busy thread slows its core's others
        k.busy.push_back(t);
        Arm(th.core);
    }
}

void
Dpa::CoreEvent(uint32_t core)
{
    m_coreEvents++;
    Core& k = m_coreState[core];
    MCSIM_ASSERT(!k.pending.empty() && k.pending.front() == mcsim::Now(), "core event order");
    k.pending.pop_front();
    Advance(core);
    const Time now = mcsim::Now();
    for (std::size_t i = 0; i < k.busy.size();)
    {
        Thread& th = m_threads[k.busy[i]];
        if (th.remaining > DONE_PS)
        {
            ++i;
            continue;
        }
        m_finished.push_back(th.queue.front());
        th.queue.pop_front();
        th.processed++;
        th.busyPs += static_cast<uint64_t>((now - th.started).GetPicoSeconds());
        if (!th.queue.empty())
        {
            th.remaining = LoneWorkPs(th.queue.front().first);
            th.started = now;
            ++i;
        }
        else
        {
            k.busy[i] = k.busy.back(); // idle now
            k.busy.pop_back();
        }
    }
    if (k.busy.empty() && !m_finished.empty())
    {
        AdvanceAll(); // one busy core fewer: every busy thread speeds up
        m_busyCores--;
        ArmAll();
    }
    else
    {
        Arm(core);
    }
    for (const auto& [c, sink] : m_finished)
    {
        Done(c, sink);
    }
    m_finished.clear();
}

void
Dpa::Done(const Completion& c, CompletionSink* sink)
{
    if (c.staged && c.bytes > 0)
    {
        const Time copy = GetLoopbackTime(c.bytes);
        m_loopbackBusyUntil = std::max(mcsim::Now(), m_loopbackBusyUntil) + copy;
        m_loopbackBusyPs += static_cast<uint64_t>(copy.GetPicoSeconds());
        m_loopbackBytes += c.bytes;
        m_loopback.push_back({m_loopbackBusyUntil, c, sink});
        if (m_loopback.size() == 1)
        {
            mcsim::Post(m_loopbackBusyUntil - mcsim::Now(), m_loopbackEvent, m_loopbackSource);
        }
        return;
    }
    m_processed++;
    sink->OnProcessed(c); // the sink may submit again
}

void
Dpa::LoopbackDone()
{
    const LoopbackWrite w = m_loopback.front();
    m_loopback.pop_front();
    if (!m_loopback.empty())
    {
        mcsim::Post(m_loopback.front().done - mcsim::Now(), m_loopbackEvent, m_loopbackSource);
    }
    m_processed++;
    w.sink->OnProcessed(w.completion);
}

uint64_t
Dpa::GetProcessed() const
{
    return m_processed;
}

uint64_t
Dpa::GetBusyPs() const
{
    uint64_t sum = 0;
    for (const Thread& th : m_threads)
    {
        sum += th.busyPs;
    }
    return sum;
}

void
Dpa::GetThreadCounters(uint64_t* out, std::size_t n) const
{
    CheckOutputSize("Dpa::GetThreadCounters",
                    n,
                    static_cast<std::size_t>(m_nThreads) * NUM_THREAD_COUNTERS);
    std::fill(out, out + n, 0);
    for (std::size_t t = 0; t < m_threads.size(); ++t)
    {
        m_threads[t].CopyTo(out + t * NUM_THREAD_COUNTERS);
    }
}

uint64_t
Dpa::GetLoopbackBytes() const
{
    return m_loopbackBytes;
}

uint64_t
Dpa::GetLoopbackBusyPs() const
{
    return m_loopbackBusyPs;
}

uint64_t
Dpa::GetCoreEvents() const
{
    return m_coreEvents;
}

} // namespace mcsim
} // namespace ns3
