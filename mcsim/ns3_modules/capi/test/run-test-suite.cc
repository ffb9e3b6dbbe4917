// SPDX-License-Identifier: GPL-2.0-only
//
// The test library's entry point for Python (mcsim.runtime.run_cxx_test_suite, through ctypes):
// run one ns-3 TestSuite by name, verbosely, its report on stdout.

#include "ns3/mcsim/abi.h"
#include "ns3/test.h"

#include <string>

/** 0 if the suite passed; non-zero if it failed or no suite has that name. */
MCSIM_ABI int64_t
mcsim_run_test_suite(const char* name)
{
    std::string a0 = "mcsim";
    std::string a1 = std::string("--suite=") + name;
    std::string a2 = "--verbose";
    char* argv[] = {a0.data(), a1.data(), a2.data(), nullptr};
    return ns3::TestRunner::Run(3, argv);
}
