// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/single_thread_blas.hpp — included once per test binary: OpenBLAS runs
// single-threaded for the whole binary, so LAPACK references are fast and predictable on
// a loaded machine.
#pragma once
#include <gtest/gtest.h>

extern "C" void openblas_set_num_threads(int) __attribute__((weak));

namespace stardiff::testing {
struct SingleThreadBlas : ::testing::Environment {
  void SetUp() override {
    if (openblas_set_num_threads) openblas_set_num_threads(1);
  }
};
[[maybe_unused]] inline auto* const single_thread_blas = ::testing::AddGlobalTestEnvironment(new SingleThreadBlas);
}  // namespace stardiff::testing
