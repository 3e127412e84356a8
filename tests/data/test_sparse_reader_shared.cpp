// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/data/test_sparse_reader_shared.cpp — the Matrix Market reader on every matrix in
// $STARDIFF_SHARED_DATA/matrices: sizes, stored counts and inserted diagonal zeros as
// documented in SOURCES.md, every value equal to an independent iostream parse, read time
// well under a second, and a fuzz run over mutations of nos4 and bcsstk04.
#include <gtest/gtest.h>
#include <zlib.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <unordered_map>

#include "stardiff/sparse/matrix_market.hpp"
#include "unit/test_sparse_reader_support.hpp"

using namespace stardiff::sparse;
using namespace stardiff::sparse::testing;

namespace {

std::string matrices_dir() {
  const char* d = std::getenv("STARDIFF_SHARED_DATA");
  return d ? std::string(d) + "/matrices" : std::string();
}

std::string gunzip_file(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr) << path;
  if (!f) return {};
  std::string s;
  char buf[1 << 16];
  int got;
  while ((got = gzread(f, buf, sizeof buf)) > 0) s.append(buf, std::size_t(got));
  gzclose(f);
  return s;
}

struct Known {
  const char* file;
  int n;
  int stored;        // entries in the file (SOURCES.md "stored")
  int missing_diag;  // diagonal entries absent from the file (SOURCES.md)
  int stored_zeros;  // explicit zeros stored in the file
};

const Known kKnown[] = {
    {"1138_bus.mtx.gz", 1138, 2596, 0, 0},       {"aug3dcqp.mtx.gz", 35543, 77829, 8000, 0},
    {"bcsstk04.mtx.gz", 132, 1890, 0, 0},        {"bcsstk14.mtx.gz", 1806, 32630, 0, 0},
    {"bcsstk18.mtx.gz", 11948, 80519, 0, 0},     {"bfw398b.mtx.gz", 398, 1654, 0, 0},
    {"bloweybq.mtx.gz", 10001, 39996, 0, 9996},  {"bodyy4.mtx.gz", 17546, 69742, 0, 194},
    {"fv1.mtx.gz", 9604, 47434, 0, 0},           {"nos4.mtx.gz", 100, 347, 0, 0},
    {"s3rmt3m3.mtx.gz", 5357, 106526, 0, 286},   {"sqd_aug2d_2x2_K0.mtx.gz", 30200, 70200, 0, 0},
    {"sqd_cvxqp3_m_2x2_K10.mtx.gz", 5750, 14981, 0, 0}, {"stokes64.mtx.gz", 12546, 74242, 4096, 0},
    {"ted_B.mtx.gz", 10605, 77592, 0, 0},        {"tuma2.mtx.gz", 12992, 28440, 5477, 0},
};

}  // namespace

TEST(SparseReaderShared, EveryMatrixMatchesSourcesAndAnIndependentParse) {
  const std::string dir = matrices_dir();
  if (dir.empty() || !std::filesystem::exists(dir)) GTEST_SKIP() << "no $STARDIFF_SHARED_DATA/matrices";
  for (const Known& k : kKnown) {
    SCOPED_TRACE(k.file);
    const std::string path = dir + "/" + k.file;
    auto t0 = std::chrono::steady_clock::now();
    CscMatrix32 A = read_matrix_market(path);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(secs, 1.0) << "reading took " << secs << " s";
    expect_valid_lower_csc(A);
    EXPECT_EQ(A.n_cols, k.n);
    EXPECT_EQ(A.nnz(), k.stored + k.missing_diag);
    EXPECT_EQ(A.name, path);
    // Independent parse with iostreams: every stored value at its place, bitwise.
    std::istringstream in(gunzip_file(path));
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line) && (line.empty() || line[0] == '%')) {
    }
    long m = 0, n = 0, cnt = 0;
    std::istringstream(line) >> m >> n >> cnt;
    ASSERT_EQ(cnt, k.stored);
    std::unordered_map<long long, double> ref;
    int zeros = 0;
    for (long e = 0; e < cnt; ++e) {
      long i, j;
      double v;
      ASSERT_TRUE(in >> i >> j >> v);
      if (i < j) std::swap(i, j);
      ref[(i - 1) * (long long)n + (j - 1)] += v;
      zeros += v == 0.0;
    }
    EXPECT_EQ(zeros, k.stored_zeros);
    int found = 0, diag_zeros_added = 0;
    for (int j = 0; j < A.n_cols; ++j)
      for (int p = A.col_ptr[j]; p < A.col_ptr[j + 1]; ++p) {
        auto it = ref.find((long long)A.row_idx[p] * n + j);
        if (it == ref.end()) {
          EXPECT_EQ(A.row_idx[p], j) << "entry not in the file off the diagonal";
          EXPECT_EQ(A.values[p], 0.0);
          ++diag_zeros_added;
        } else {
          EXPECT_EQ(A.values[p], it->second) << "(" << A.row_idx[p] + 1 << ", " << j + 1 << ")";
          ++found;
        }
      }
    EXPECT_EQ(found, int(ref.size()));
    EXPECT_EQ(diag_zeros_added, k.missing_diag);
  }
}

TEST(SparseReaderShared, FuzzedRealFilesGiveMatrixOrError) {
  const std::string dir = matrices_dir();
  if (dir.empty() || !std::filesystem::exists(dir)) GTEST_SKIP() << "no $STARDIFF_SHARED_DATA/matrices";
  int seed = 1;
  for (const char* f : {"nos4.mtx.gz", "bcsstk04.mtx.gz", "bfw398b.mtx.gz"}) {
    SCOPED_TRACE(f);
    const std::string text = gunzip_file(dir + "/" + f);
    ASSERT_FALSE(text.empty());
    FuzzStats st = fuzz_reader(text, f, 600, std::uint64_t(seed++) * 1000003);
    std::printf("%s: valid %d, errors %d\n", f, st.valid, st.errors);
    EXPECT_GT(st.valid, 30);
    EXPECT_GT(st.errors, 200);
  }
}
