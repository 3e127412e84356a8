// SPDX-License-Identifier: LGPL-2.1-or-later
// adjoint_factor — cost of the Poisson adjoint relative to its primal (OPS's metric).
//
// On an n x n Poisson problem with K Jacobi iterations (default 2048^2, 100):
//   primal_s   iterations + error loop, no tape
//   forward_s  the same while a tape records (to-be-recorded analysis: saves nothing
//              for the linear loops), reverse_s the reverse sweep
//   adjoint_factor = (forward_s + reverse_s) / primal_s
// and the same with SavePolicy::All (OPS's save-every-overwritten-region policy) run on
// min(K, K_all) iterations where K_all keeps its checkpoints under --max-tape-gib
// (default 4); its factor is per iteration, so it compares directly. Repeats interleave
// the variants; medians are reported:
//   adjoint_factor n=.. iters=.. primal_s=.. forward_s=.. reverse_s=.. tape_bytes=..
//       save_all_iters=.. save_all_factor=.. save_all_tape_bytes=.. ratio=adjoint_factor
// Usage: adjoint_factor [--n N] [--iters K] [--repeats R] [--tiles T] [--max-tape-gib G]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "poisson_problem.hpp"

using namespace stardiff;

namespace {
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
struct Times {
  double primal = 0, forward = 0, reverse = 0;
  std::size_t bytes = 0;
};
// One measured run on a freshly set-up problem p (set-up not timed).
Times run(poisson::Problem& p, int iters, SavePolicy pol) {
  Executor& ex = p.block.executor();
  Times t;
  p.setup();
  ex.wait_all();
  double t0 = now();
  p.iterate(iters);
  p.submit_error();
  ex.wait_all();
  t.primal = now() - t0;
  p.setup();
  ex.wait_all();
  Tape tape("bench", pol);
  t0 = now();
  tape.start();
  p.iterate(iters);
  p.submit_error();
  tape.stop();
  ex.wait_all();
  t.forward = now() - t0;
  tape.zero_adjoints();
  tape.seed(p.err, 1.0);
  ex.wait_all();
  t0 = now();
  tape.reverse();
  ex.wait_all();
  t.reverse = now() - t0;
  t.bytes = tape.bytes();
  return t;
}
}  // namespace

int main(int argc, char** argv) {
  int n = 2048, iters = 100, repeats = 5, tiles = 0;
  double max_gib = 4.0;
  for (int i = 1; i < argc; ++i) {
    auto need = [&] {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "adjoint_factor: %s needs a value\n", argv[i]);
        std::exit(2);
      }
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "--n")) n = std::atoi(need());
    else if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(need());
    else if (!std::strcmp(argv[i], "--repeats")) repeats = std::atoi(need());
    else if (!std::strcmp(argv[i], "--tiles")) tiles = std::atoi(need());
    else if (!std::strcmp(argv[i], "--max-tape-gib")) max_gib = std::atof(need());
    else if (!std::strcmp(argv[i], "--help")) {
      std::printf("usage: adjoint_factor [--n N] [--iters K] [--repeats R] [--tiles T] [--max-tape-gib G]\n");
      return 0;
    } else {
      std::fprintf(stderr, "adjoint_factor: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (n < 8 || iters < 1 || repeats < 1 || tiles < 0 || max_gib <= 0) {
    std::fprintf(stderr, "adjoint_factor: need --n >= 8, --iters >= 1, --repeats >= 1, --tiles >= 0\n");
    return 2;
  }
  Runtime rt;
  StarpuExecutor ex;
  poisson::Problem p(ex, n, n, tiles);
  // Save-all stores u2 and u (interior rows, full padded width) every iteration.
  const double per_iter = 2.0 * n * (n + 2) * 8.0;
  int iters_all = std::max(1, std::min(iters, static_cast<int>(max_gib * 1073741824.0 / per_iter)));
  run(p, std::min(iters, 5), SavePolicy::Needed);  // warm-up: first touch, calibration
  std::vector<double> tp, tf, tr, fa;
  std::size_t bytes = 0, bytes_all = 0;
  for (int r = 0; r < repeats; ++r) {
    Times a = run(p, iters, SavePolicy::Needed);
    Times b = run(p, iters_all, SavePolicy::All);
    tp.push_back(a.primal);
    tf.push_back(a.forward);
    tr.push_back(a.reverse);
    fa.push_back((b.forward + b.reverse) / b.primal);
    bytes = a.bytes;
    bytes_all = b.bytes;
  }
  const double primal = median(tp), forward = median(tf), reverse = median(tr);
  const double factor = (forward + reverse) / primal;
  std::printf("adjoint_factor n=%d iters=%d tiles=%d repeats=%d workers=%d sched=%s primal_s=%.4f forward_s=%.4f reverse_s=%.4f "
              "forward_ratio=%.3f reverse_ratio=%.3f tape_bytes=%zu save_all_iters=%d save_all_factor=%.3f "
              "save_all_tape_bytes=%zu ratio=%.3f\n",
              n, iters, p.block.tiles(), repeats, rt.cpu_workers(), rt.scheduler().c_str(), primal, forward, reverse, forward / primal,
              reverse / primal, bytes, iters_all, median(fa), bytes_all, factor);
  return 0;
}
