# SPDX-License-Identifier: GPL-2.0-only
"""Event engine speed: trivial events per second with N events pending, per scheduler.

N self-rescheduling events (each reschedules itself 100 ns to 1 us ahead, from a fixed LCG) run
for a fixed number of events under each scheduler. This is the ceiling for a model that spends
one event per packet-hop: every hop costs at least one of these.

Run: python benchmarks/event_rate.py [--pending 600] [--events 5000000]

Other benchmarks print their figures beside :func:`ceiling`, this rate under mcsim's scheduler
measured in a fresh process of the same run.
"""

import argparse
import subprocess
import sys
from pathlib import Path

CHAIN = r"""
#include "ns3/simulator.h"
#include "ns3/event-impl.h"
#include "ns3/object-factory.h"
namespace mcsim_bench {
struct Chain : public ns3::EventImpl {
    uint64_t state; uint64_t* left;
    Chain(uint64_t seed, uint64_t* l) : state(seed), left(l) {}
    void Notify() override {
        if (*left == 0) { return; }
        --*left;
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        ns3::Simulator::Schedule(ns3::PicoSeconds(100000 + (state >> 33) % 900000), ns3::Ptr<ns3::EventImpl>(this));
    }
};
double run_chain(const std::string& scheduler, uint32_t pending, uint64_t events) {
    ns3::Simulator::SetScheduler(ns3::ObjectFactory(scheduler));
    uint64_t left = events;
    std::vector<ns3::Ptr<Chain>> chains;
    for (uint32_t i = 0; i < pending; ++i) {
        chains.push_back(ns3::Create<Chain>(i + 1, &left));
        ns3::Simulator::Schedule(ns3::PicoSeconds(i), ns3::Ptr<ns3::EventImpl>(chains.back()));
    }
    auto t0 = std::chrono::steady_clock::now();
    ns3::Simulator::Run();
    auto t1 = std::chrono::steady_clock::now();
    ns3::Simulator::Destroy();
    return std::chrono::duration<double>(t1 - t0).count();
}
}
"""

SCHEDULERS = ("ns3::mcsim::WheelScheduler", "ns3::PriorityQueueScheduler", "ns3::MapScheduler")

_CEILING_CHILD = """
import sys
sys.path.insert(0, sys.argv[1])
import event_rate
from mcsim.native import runtime
runtime.load()
cppyy = runtime.cppyy_module()
cppyy.cppdef(event_rate.CHAIN)
pending, events = int(sys.argv[2]), int(sys.argv[3])
print(events / cppyy.gbl.mcsim_bench.run_chain("ns3::mcsim::WheelScheduler", pending, events))
"""


def ceiling(events: int = 5_000_000, pending: int = 600) -> float:
    """Trivial events per second under mcsim's scheduler, in a fresh process: the ceiling for a
    model that spends one event per packet-hop, to print a benchmark's figures beside."""
    argv = [sys.executable, "-c", _CEILING_CHILD, str(Path(__file__).resolve().parent), str(pending), str(events)]
    return float(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pending", type=int, default=600, help="events pending at any time (default 600)")
    parser.add_argument("--events", type=int, default=5_000_000, help="events to run (default 5000000)")
    args = parser.parse_args()
    from mcsim.native import runtime

    runtime.load()
    cppyy = runtime.cppyy_module()
    cppyy.cppdef(CHAIN)
    print(f"{args.events} trivial events, {args.pending} pending")
    print(f"{'scheduler':<34} {'run_s':>7} {'M_events_per_s':>15}")
    for name in SCHEDULERS:
        run_s = cppyy.gbl.mcsim_bench.run_chain(name, args.pending, args.events)
        print(f"{name:<34} {run_s:>7.2f} {args.events / run_s / 1e6:>15.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
