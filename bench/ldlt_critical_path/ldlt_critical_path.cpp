// SPDX-License-Identifier: LGPL-2.1-or-later
// bench/ldlt_critical_path — the sparse LDL^T's factorization graph on the N^3 Laplacian
// (7-point, as ldlt_vs_peers --laplacian), recorded (RecordingExecutor over the sequential
// executor) three ways: whole fronts (split_flops 0), split fronts (panel/update tasks,
// STARDIFF_LDLT_FORK_JOIN=0) and fork-join fronts (each split front one task,
// STARDIFF_LDLT_FORK_JOIN=force). Prints per graph and width (CPUs per fork-join task) the
// task count, the total work and the critical path under the tasks' flop model
// (TaskOptions::cost; a fork-join task weighs max(cost / width, span)), and their ratio.
// same_hash: whether the fork-join factors are bitwise the split fronts'; x_rel_diff: the
// largest difference of their refined solutions relative to the largest |x|.
// A model of the graph, not a timing: speed-up needs a machine with more cores.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli.hpp"
#include "stardiff/sparse/csc_matrix.hpp"
#include "stardiff/sparse/ldlt.hpp"
#include "stardiff/stardiff.hpp"

using namespace stardiff;
using namespace stardiff::sparse;

namespace {
CscMatrix32 laplacian3d(int N) {
  const std::int32_t n = N * N * N;
  std::vector<std::int32_t> r, c;
  std::vector<double> v;
  auto id = [N](int x, int y, int z) { return std::int32_t((z * N + y) * N + x); };
  for (int z = 0; z < N; ++z)
    for (int y = 0; y < N; ++y)
      for (int x = 0; x < N; ++x) {
        const std::int32_t k = id(x, y, z);
        r.push_back(k), c.push_back(k), v.push_back(6.0);
        if (x + 1 < N) r.push_back(id(x + 1, y, z)), c.push_back(k), v.push_back(-1.0);
        if (y + 1 < N) r.push_back(id(x, y + 1, z)), c.push_back(k), v.push_back(-1.0);
        if (z + 1 < N) r.push_back(id(x, y, z + 1)), c.push_back(k), v.push_back(-1.0);
      }
  return from_triplets(n, n, r, c, v, true);
}

double relres(const CscMatrix32& A, const std::vector<double>& x, const std::vector<double>& b) {
  std::vector<double> r(b);
  for (int j = 0; j < A.n_cols; ++j)
    for (std::int32_t q = A.col_ptr[j]; q < A.col_ptr[j + 1]; ++q) {
      const int i = A.row_idx[q];
      r[i] -= A.values[q] * x[j];
      if (i != j) r[j] -= A.values[q] * x[i];
    }
  double rn = 0, bn = 0;
  for (std::size_t i = 0; i < b.size(); ++i) rn = std::max(rn, std::fabs(r[i])), bn = std::max(bn, std::fabs(b[i]));
  return rn / bn;
}

int usage(const char* me) {
  std::fprintf(stderr,
               "usage: %s [--n N] [--split-flops F] [--block-size B]\n"
               "  the N^3 Laplacian (default 50); LdltOptions split_flops (default %g) and block_size (%d)\n",
               me, LdltOptions{}.split_flops, LdltOptions{}.block_size);
  return 2;
}
}  // namespace

int main(int argc, char** argv) {
  int N = 50;
  LdltOptions base;
  for (int i = 1; i < argc; ++i) {
    const bool more = i + 1 < argc;
    if (!std::strcmp(argv[i], "--n") && more && apps::parse_int(argv[i + 1], 2, 200, N)) ++i;
    else if (!std::strcmp(argv[i], "--split-flops") && more && apps::parse_pos_double(argv[i + 1], base.split_flops)) ++i;
    else if (!std::strcmp(argv[i], "--block-size") && more && apps::parse_int(argv[i + 1], 8, 1024, base.block_size)) ++i;
    else return usage(argv[0]);
  }
  try {
    const CscMatrix32 A = laplacian3d(N);
    std::vector<double> b(std::size_t(A.n_cols));
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = 1.0 + 0.5 * std::sin(0.1 * double(i));
    struct Graph {
      const char* name;
      double split_flops;
      const char* fork_join;
      std::vector<int> widths;
    };
    const Graph graphs[] = {{"whole", 0, "0", {1}},
                            {"split", base.split_flops, "0", {1}},
                            {"fork_join", base.split_flops, "force", {1, 2, 4, 16, 64}}};
    std::uint64_t split_hash = 0;
    std::vector<double> split_x;
    for (const Graph& g : graphs) {
      setenv("STARDIFF_LDLT_FORK_JOIN", g.fork_join, 1);
      LdltOptions o = base;
      o.split_flops = g.split_flops;
      Ldlt l(o);
      l.analyze(A);
      SequentialExecutor seq;
      RecordingExecutor rec(&seq);
      const FactorInfo fi = l.factorize(A, &rec);
      const std::vector<double> x = l.solve(b);
      const double rr = relres(A, x, b);
      const std::uint64_t h = l.factor_hash();
      if (!std::strcmp(g.name, "split")) split_hash = h, split_x = x;
      double dx = 0, mx = 0;
      for (std::size_t i = 0; i < x.size() && !split_x.empty(); ++i)
        dx = std::max(dx, std::fabs(x[i] - split_x[i])), mx = std::max(mx, std::fabs(split_x[i]));
      const auto counts = rec.counts();
      const auto count = [&](const char* c) {
        auto it = counts.find(c);
        return it == counts.end() ? std::size_t(0) : it->second;
      };
      for (int w : g.widths) {
        const auto cp = rec.critical_path(w);
        std::printf("ldlt_critical_path n=%d graph=%s width=%d tasks=%zu fork_join_tasks=%zu split_front_tasks=%zu "
                    "work=%.4g critical=%.4g fraction=%.4f attempts=%d relres=%.2e",
                    A.n_cols, g.name, w, rec.tasks_submitted(), count("ldlt_big_fork_join"),
                    count("ldlt_big_panel") + count("ldlt_big_update") + count("ldlt_big_assemble"), cp.work, cp.length,
                    cp.work > 0 ? cp.length / cp.work : 0.0, fi.attempts, rr);
        if (!std::strcmp(g.name, "fork_join"))
          std::printf(" same_hash=%d x_rel_diff=%.2e", h == split_hash ? 1 : 0, mx > 0 ? dx / mx : 0.0);
        std::printf("\n");
      }
    }
    unsetenv("STARDIFF_LDLT_FORK_JOIN");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ldlt_critical_path: %s\n", e.what());
    return 1;
  }
  return 0;
}
