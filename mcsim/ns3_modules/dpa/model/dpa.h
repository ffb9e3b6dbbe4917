// SPDX-License-Identifier: GPL-2.0-only
#pragma once

#include "ns3/data-rate.h"
#include "ns3/event-impl.h"
#include "ns3/mcsim/completion-processor.h"
#include "ns3/mcsim/counter-table.h"
#include "ns3/mcsim/event-order.h"
#include "ns3/nstime.h"

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

namespace ns3
{
namespace mcsim
{

/** @brief Where the DPA's threads run: which core thread t is on. */
enum class ThreadPlacement
{
    SPREAD, //!< round-robin over the cores (t mod Cores): one thread per core first
    PACK,   //!< fill a core first (t / ThreadsPerCore)
};

/**
 * @brief A SmartNIC's data-path accelerator (BlueField-3 DPA) running the offloaded receive
 * progress engine: Cores cores of ThreadsPerCore hardware threads, Threads of them in use, each
 * serving its own endpoints: the completion of QP q goes to thread q mod Threads, which works
 * through its completions one at a time, in arrival order (a FIFO per thread).
 *
 * The model: dpa/doc/dpa.md, "Dpa".
 */
class Dpa : public CompletionProcessor
{
  public:
    static TypeId GetTypeId();
    Dpa();
    ~Dpa() override;

    /** c goes to its thread when it is visible (c.ready: the NIC's receive latency). */
    void Submit(const Completion& c, CompletionSink* sink) override;
    /** Its events' order: (COMPLETION, node, unit::DPA_ARRIVAL / DPA_LOOPBACK / DPA_CORE + core);
     * `unit` (the NIC's CPU unit) is not used. */
    void Place(uint32_t node, uint32_t unit) override;
    uint64_t GetProcessed() const override; //!< completions whose sink was told
    uint64_t GetBusyPs() const override;    //!< thread busy time, summed over threads

    /** The thread that serves QP qpn: qpn mod Threads. */
    uint32_t GetThreadOf(uint32_t qpn) const;
    /** The core that thread t runs on (Placement). */
    uint32_t GetCoreOf(uint32_t thread) const;
    /** f(n): a thread's speed, relative to running alone, with n busy threads on its core. */
    double GetSharingFactor(uint32_t n) const;
    /**
     * Thread time of one completion while activeOnCore threads of its core and activeCores cores
     * stay busy: ceil(cycles / ClockHz / r) with r = f(n) / (1 + CoreContention (A - 1)), in ps.
     * @throws std::invalid_argument for counts outside 1..ThreadsPerCore, 1..Cores
     */
    Time GetServiceTime(bool staged, uint32_t activeOnCore, uint32_t activeCores) const;
    /** Loopback write time of a staged payload of bytes: bytes * 8 / LoopbackRate, rounded up. */
    Time GetLoopbackTime(uint32_t bytes) const;

    /** The fields of ThreadCounters, in order: X(member, initial, python_name). */
#define MCSIM_DPA_THREAD_COUNTERS(X)                                                               \
    /* completions done */                                                                         \
    X(processed, 0, "processed")                                                                   \
    /* busy ps */                                                                                  \
    X(busyPs, 0, "busy_ps")                                                                        \
    /* longest queue (completions) */                                                              \
    X(maxQueue, 0, "max_queue")

    /** @brief Per-thread counters, read in bulk after the run. */
    struct ThreadCounters
    {
        MCSIM_COUNTERS(MCSIM_DPA_THREAD_COUNTERS)
    };

    static constexpr uint32_t NUM_THREAD_COUNTERS = ThreadCounters::COUNT;
    /** out[t * NUM_THREAD_COUNTERS + k] for t < Threads; throws if n is not Threads * 3. */
    void GetThreadCounters(uint64_t* out, std::size_t n) const;
    uint64_t GetLoopbackBytes() const;  //!< payload bytes copied by loopback writes
    uint64_t GetLoopbackBusyPs() const; //!< time the loopback resource was busy
    uint64_t GetCoreEvents() const;     //!< core events run (including early ones)

  protected:
    void DoDispose() override;
    void NotifyConstructionCompleted() override;

  private:
    /** One hardware thread: its FIFO of completions (the head is in service). */
    struct Thread : ThreadCounters
    {
        std::deque<std::pair<Completion, CompletionSink*>> queue;
        double remaining = 0; //!< lone-thread ps of work left on the head
        Time started;         //!< when the head started
        uint32_t core = 0;
    };

    /** One core: its busy threads progress together at Rate(). */
    struct Core
    {
        std::vector<uint32_t> busy;                 //!< busy threads (at most ThreadsPerCore)
        Time updated;                               //!< their remaining work is as of this time
        std::deque<Time> pending;                   //!< scheduled event times, ascending
        Ptr<EventImpl> event;                       //!< IndexedEvent calling CoreEvent(core)
        EventSource source{EventClass::COMPLETION}; //!< its order (Place)
    };

    /** A loopback write in flight: done at the given time. */
    struct LoopbackWrite
    {
        Time done;
        Completion completion;
        CompletionSink* sink;
    };

    void Check() const; //!< throws std::invalid_argument for inconsistent attributes
    void Build();       //!< threads, cores and f(n) from the attributes
    double LoneWorkPs(const Completion& c) const;
    double Rate(uint32_t core) const; //!< lone-ps of work per ps of each busy thread of core
    void Advance(uint32_t core);      //!< bring the core's busy threads' work up to now
    void AdvanceAll();                //!< every busy core (before the number of busy cores changes)
    void Arm(uint32_t core);          //!< make sure an event runs by the core's next finish
    void ArmAll();
    void CoreEvent(uint32_t core);
    void Done(const Completion& c, CompletionSink* sink);
    void LoopbackDone();
    /** A ready completion goes to its thread's queue. */
    void Accept(const Completion& c, CompletionSink* sink);
    void Arrive(); //!< the completions of m_arriving that are ready now

    static constexpr uint32_t DEFAULT_CORES = 16;
    static constexpr uint32_t DEFAULT_THREADS_PER_CORE = 16;
    static constexpr uint32_t DEFAULT_THREADS = 16;
    static constexpr uint64_t DEFAULT_CLOCK_HZ = 1'800'000'000;
    static constexpr uint32_t DEFAULT_ZERO_COPY_CYCLES = 577; //!< 1.8 GHz / 577 = 3.12 M/s
    static constexpr uint32_t DEFAULT_STAGING_CYCLES = 4 * DEFAULT_ZERO_COPY_CYCLES;
    // the SC'24 profile (mcsim/config/dpa.py): threads scale until a core's 16 fill its issue
    // slots, cores do not slow each other
    static constexpr double DEFAULT_ISSUE_SHARE = 1.0 / 16;
    static constexpr double DEFAULT_CORE_CONTENTION = 0.0;
    static constexpr uint64_t DEFAULT_LOOPBACK_BPS = 3'200'000'000'000ULL; //!< 3.2 Tbit/s
    static constexpr double DONE_PS = 1e-6; //!< work left that counts as none (rounding)

    uint32_t m_cores;            //!< "Cores"
    uint32_t m_threadsPerCore;   //!< "ThreadsPerCore"
    uint32_t m_nThreads;         //!< "Threads": threads in use
    ThreadPlacement m_placement; //!< "Placement"
    uint64_t m_clockHz;          //!< "ClockHz"
    uint32_t m_zeroCopyCycles;   //!< "ZeroCopyCycles"
    uint32_t m_stagingCycles;    //!< "StagingCycles"
    double m_issueShare;         //!< "IssueShare"
    double m_coreContention;     //!< "CoreContention"
    DataRate m_loopbackRate;     //!< "LoopbackRate"

    std::vector<Thread> m_threads; //!< empty until the first Submit
    std::vector<Core> m_coreState;
    std::vector<double> m_sharing; //!< f(n) for n = 0..ThreadsPerCore (f(0) unused)
    uint32_t m_busyCores;
    std::vector<std::pair<Completion, CompletionSink*>> m_finished; //!< scratch of CoreEvent
    std::deque<std::pair<Completion, CompletionSink*>> m_arriving;  //!< not yet ready, in order
    Ptr<EventImpl> m_arrivalEvent;        //!< when the head of m_arriving is ready
    EventSource m_arrivalSource;          //!< its order (Place)
    std::deque<LoopbackWrite> m_loopback; //!< FIFO; the head's event is scheduled
    Time m_loopbackBusyUntil;
    Ptr<EventImpl> m_loopbackEvent;
    EventSource m_loopbackSource; //!< its order (Place)
    uint32_t m_node;              //!< where it is (Place)
    uint64_t m_processed;
    uint64_t m_loopbackBytes;
    uint64_t m_loopbackBusyPs;
    uint64_t m_coreEvents;
};

} // namespace mcsim
} // namespace ns3
