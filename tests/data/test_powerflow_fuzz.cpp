// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/data/test_powerflow_fuzz.cpp — fuzz-style robustness: random mutations of real
// MATPOWER case files (characters, numbers, lines, truncation); the built-in pf6 case is
// fuzzed by tests/unit/test_powerflow_fuzz_builtin.cpp.
// Every outcome must be a parsed case whose solve() returns (converged or a numerical
// status, with or without Q limits) or a stardiff::Error whose message names the file —
// never a crash, a hang or another exception type. Skips the shared cases if absent.
#include <gtest/gtest.h>

#include "stardiff/powerflow.hpp"
#include "unit/test_powerflow_support.hpp"

using namespace stardiff;
using namespace stardiff::powerflow;

TEST(PowerflowFuzz, RealCaseFiles) {
  const std::string dir = pftest::matpower_dir();
  if (dir.empty()) GTEST_SKIP() << "no ../shared/data/matpower";
  unsigned seed = 10;
  for (const char* name : {"case9", "case14", "case30", "case57", "case118"})
    pftest::fuzz(std::string(name) + ".m", pftest::read_text(dir + "/" + name + ".m"), 300, seed++);
}
