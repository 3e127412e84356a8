// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/data/test_sparse_ldlt_analysis_hash.cpp — the symbolic analysis is bitwise what it
// was: for every matrix of $STARDIFF_SHARED_DATA/matrices (skipped when absent) and the 50^3
// Laplacian, under orderings auto|amd|metis x pairing none|defer|compress (and defer without
// fill limit), a hash of the whole sparse::detail::Symbolic (order, its inverse, pairing counts,
// supernodes, assembly tree, row structures, permuted triangle and its assembly map,
// flop counts, task plan, simplicial data) equals the one recorded in
// tests/data/ldlt_analysis_hashes.txt. A changed analysis (another order, another tree,
// another plan) changes its line. STARDIFF_WRITE_ANALYSIS_HASHES=FILE writes the table
// instead of comparing (to record a deliberate change).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sparse/ldlt_internal.hpp"
#include "sparse_laplacian.hpp"
#include "stardiff/sparse/csc_matrix.hpp"
#include "stardiff/sparse/ldlt.hpp"
#include "stardiff/sparse/matrix_market.hpp"

using namespace stardiff;
using namespace stardiff::sparse;
namespace fs = std::filesystem;

namespace {
// FNV-1a over bytes, each vector preceded by its length.
struct Hasher {
  std::uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t k = 0; k < n; ++k) h = (h ^ b[k]) * 1099511628211ull;
  }
  template <class T>
  void value(const T& v) {
    bytes(&v, sizeof v);
  }
  template <class T>
  void vec(const std::vector<T>& v) {
    value(std::uint64_t(v.size()));
    if (!v.empty()) bytes(v.data(), v.size() * sizeof(T));
  }
};

std::uint64_t symbolic_hash(sparse::detail::Symbolic& S) {
  Hasher h;
  h.value(S.n);
  h.value(int(S.ordering));
  h.value(S.matched_pairs);
  h.value(S.deferred);
  h.value(S.paired_order);
  h.vec(S.perm);
  h.vec(S.iperm);
  h.value(S.ns);
  h.vec(S.sn_first);
  h.vec(S.sn_parent);
  h.vec(S.child_ptr);
  h.vec(S.child_list);
  h.vec(S.row_ptr);
  h.value(S.rows_filled);
  h.vec(S.rows);
  h.vec(S.sn_flops);
  h.vec(S.ap);
  h.vec(S.ai);
  h.vec(S.asrc);
  h.vec(S.a_colptr);
  h.vec(S.a_rowidx);
  h.vec(S.task_lo);
  h.vec(S.task_hi);
  h.vec(S.dep_ptr);
  h.vec(S.dep_list);
  h.vec(S.task_split);
  h.value(S.nnz_l);
  h.value(S.levels);
  h.value(S.flops);
  h.value(S.single_task);
  h.value(S.simplicial);
  h.value(S.exact_flops);
  h.value(S.exact_lnz);
  h.vec(S.up);
  h.vec(S.ui);
  h.vec(S.usrc);
  h.vec(S.lp);
  h.vec(S.lparent);
  h.vec(S.lnz);
  sparse::detail::complete_row_structures(S);  // a simplicial candidate's rows, when first needed
  h.vec(S.rows);
  return h.h;
}

struct Case {
  const char* name;
  Ordering ordering;
  ZeroDiagonalPairing pairing;
  double fill_limit;  // < 0: the default
};
const Case kCases[] = {
    {"auto.none", Ordering::Auto, ZeroDiagonalPairing::None, -1},
    {"auto.defer", Ordering::Auto, ZeroDiagonalPairing::Defer, -1},
    {"auto.compress", Ordering::Auto, ZeroDiagonalPairing::Compress, -1},
    {"auto.defer_nolimit", Ordering::Auto, ZeroDiagonalPairing::Defer, 0},
    {"amd.none", Ordering::Amd, ZeroDiagonalPairing::None, -1},
    {"amd.defer", Ordering::Amd, ZeroDiagonalPairing::Defer, -1},
    {"amd.compress", Ordering::Amd, ZeroDiagonalPairing::Compress, -1},
    {"metis.none", Ordering::Metis, ZeroDiagonalPairing::None, -1},
    {"metis.defer", Ordering::Metis, ZeroDiagonalPairing::Defer, -1},
    {"metis.compress", Ordering::Metis, ZeroDiagonalPairing::Compress, -1},
};

std::map<std::string, std::uint64_t> current_hashes(int* matrices) {
  std::vector<std::pair<std::string, CscMatrix32>> mats;
  if (const char* d = std::getenv("STARDIFF_SHARED_DATA")) {
    const fs::path dir = fs::path(d) / "matrices";
    if (fs::exists(dir)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(dir))
        if (e.path().string().size() > 7 && e.path().string().ends_with(".mtx.gz")) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) {
        std::string name = f.filename().string();
        name.resize(name.size() - 7);
        mats.emplace_back(name, read_matrix_market(f.string()));
      }
    }
  }
  *matrices = int(mats.size());
  mats.emplace_back("laplacian50", stardiff::testing::laplacian3d(50));
  std::map<std::string, std::uint64_t> out;
  for (const auto& [name, A] : mats)
    for (const Case& c : kCases) {
      LdltOptions o;
      o.ordering = c.ordering;
      o.pairing = c.pairing;
      if (c.fill_limit >= 0) o.pairing_fill_limit = c.fill_limit;
      sparse::detail::Symbolic S;
      sparse::detail::analyze_pattern(A, o, S);
      out[name + " " + c.name] = symbolic_hash(S);
    }
  return out;
}
}  // namespace

TEST(SparseLdltAnalysisHash, SymbolicAnalysisEqualsTheRecordedOne) {
  int shared = 0;
  const auto now = current_hashes(&shared);
  if (const char* w = std::getenv("STARDIFF_WRITE_ANALYSIS_HASHES")) {
    std::ofstream f(w);
    for (const auto& [k, h] : now) f << k << ' ' << std::hex << h << std::dec << '\n';
    GTEST_SKIP() << "wrote " << now.size() << " hashes to " << w;
  }
  const char* src = std::getenv("STARDIFF_SOURCE_DIR");
  ASSERT_NE(src, nullptr) << "STARDIFF_SOURCE_DIR not set (ctest sets it)";
  std::ifstream f(fs::path(src) / "tests" / "data" / "ldlt_analysis_hashes.txt");
  ASSERT_TRUE(f.good()) << "tests/data/ldlt_analysis_hashes.txt not found";
  std::map<std::string, std::uint64_t> want;
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string m, c;
    std::uint64_t h = 0;
    in >> m >> c >> std::hex >> h;
    ASSERT_FALSE(in.fail()) << "bad line: " << line;
    want[m + " " + c] = h;
  }
  int compared = 0;
  for (const auto& [k, h] : now) {
    const auto it = want.find(k);
    if (it == want.end()) {
      ADD_FAILURE() << k << ": no recorded hash";
      continue;
    }
    EXPECT_EQ(h, it->second) << k << ": the symbolic analysis changed";
    ++compared;
  }
  EXPECT_EQ(compared, int(now.size()));
  if (shared == 0) GTEST_SKIP() << "no shared matrices; the Laplacian compared only";
}
