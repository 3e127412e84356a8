// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_powerflow_fuzz_builtin.cpp — fuzz-style robustness on the built-in pf6
// case (no shared data needed, so it also runs under the sanitizers): 600 random mutations,
// each a solve() result with a known status or a stardiff::Error naming the file.
#include <gtest/gtest.h>

#include "unit/test_powerflow_support.hpp"

using namespace stardiff::powerflow;

TEST(PowerflowFuzz, BuiltInCase) { pftest::fuzz("pf6.m", pftest::read_text(pftest::pf6_path()), 600, 1); }
