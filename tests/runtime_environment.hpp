// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/runtime_environment.hpp — one stardiff::Runtime for the whole test binary.
//
// Include once in a tests/starpu test file: it registers a gtest global environment that
// starts the runtime before the first test (STARPU_* variables apply) and shuts it down
// after the last. StarPU starts in tens of milliseconds: one per binary, not per test.
#pragma once
#include <gtest/gtest.h>

#include <memory>

#include "stardiff/runtime/runtime.hpp"

namespace stardiff::testing {
struct RuntimeEnvironment : ::testing::Environment {
  std::unique_ptr<Runtime> runtime;
  void SetUp() override { runtime = std::make_unique<Runtime>(); }
  void TearDown() override { runtime.reset(); }
};
[[maybe_unused]] inline auto* const runtime_environment =
    ::testing::AddGlobalTestEnvironment(new RuntimeEnvironment);
}  // namespace stardiff::testing
