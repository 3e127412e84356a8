// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/unit/test_sparse_reader_fuzz.cpp — fuzz-style robustness of the Matrix Market
// reader on a built-in text: thousands of random mutations (byte flips, truncations,
// line deletions/duplications/swaps, swapped numbers, odd values, junk bytes, damaged
// gzip) fed through the istream overload. Each must yield a valid lower CSC matrix or a
// stardiff::Error naming the input — never a crash or another exception (ASan build too).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "test_sparse_reader_support.hpp"

using namespace stardiff::sparse;
using namespace stardiff::sparse::testing;

namespace {
// A 12 x 12 symmetric file (banded, a few explicit zeros, one missing diagonal).
std::string builtin_text(const char* symmetry) {
  std::string body;
  int count = 0;
  bool general = std::string(symmetry) == "general";
  for (int j = 1; j <= 12; ++j)
    for (int i = j; i <= std::min(12, j + 3); ++i) {
      if (i == 7 && j == 7) continue;
      double v = i == j ? 4.0 + j : -1.0 / (i + j);
      if (i - j == 2 && j % 4 == 0) v = 0.0;
      char line[96];
      std::snprintf(line, sizeof line, "%d %d %.15g\n", i, j, v);
      body += line;
      ++count;
      if (general && i != j) {
        std::snprintf(line, sizeof line, "%d %d %.15g\n", j, i, v);
        body += line;
        ++count;
      }
    }
  return std::string("%%MatrixMarket matrix coordinate real ") + symmetry + "\n% built-in fuzz seed\n12 12 " +
         std::to_string(count) + "\n" + body;
}
}  // namespace

TEST(SparseReaderFuzz, BuiltinSymmetricSurvivesMutations) {
  const std::string text = builtin_text("symmetric");
  FuzzStats st = fuzz_reader(text, "builtin.mtx", 3000, 12345);
  std::printf("valid %d, errors %d\n", st.valid, st.errors);
  // The mutation mix must exercise both outcomes, or the test proves nothing.
  EXPECT_GT(st.valid, 100);
  EXPECT_GT(st.errors, 1000);
}

TEST(SparseReaderFuzz, BuiltinGeneralSurvivesMutations) {
  const std::string text = builtin_text("general");
  FuzzStats st = fuzz_reader(text, "general.mtx", 2000, 777);
  std::printf("valid %d, errors %d\n", st.valid, st.errors);
  EXPECT_GT(st.valid, 50);
  EXPECT_GT(st.errors, 500);
}

TEST(SparseReaderFuzz, BuiltinPatternSurvivesMutations) {
  std::string text = "%%MatrixMarket matrix coordinate pattern symmetric\n8 8 14\n";
  for (int j = 1; j <= 8; ++j) text += std::to_string(j) + " " + std::to_string(j) + "\n";
  for (int j = 1; j <= 6; ++j) text += std::to_string(j + 2) + " " + std::to_string(j) + "\n";
  FuzzStats st = fuzz_reader(text, "pattern.mtx", 1500, 99);
  std::printf("valid %d, errors %d\n", st.valid, st.errors);
  EXPECT_GT(st.valid, 20);
  EXPECT_GT(st.errors, 300);
}
