// SPDX-License-Identifier: LGPL-2.1-or-later
// stencil_bandwidth — memory bandwidth of the primal Poisson loops (with and without a
// recording tape) against a STREAM triad, all as StarPU tasks over the same tiles, and
// against the same Poisson written by hand with OpenMP (what a user would write instead).
//
// Triad: a = b + 3 c over n^2 doubles split into T tile vectors (24 B/point).
// Poisson: K Jacobi sweeps (reads u, f, writes u2: 24 B/point) and copies (16 B/point)
// on the n x n interior, as stardiff par_loops; "recording" runs them while a tape
// records (the to-be-recorded analysis saves nothing for these linear loops).
// OpenMP: the same two loops over (n+2)^2 arrays with the same halo, `parallel for` over
// rows with as many threads as StarPU has CPU workers (run with the workers paused, so
// nothing polls beside it); its final u must equal stardiff's bitwise (max_diff=0).
// One more primal variant takes the other store path (par_loop.hpp): stream_stores, or
// plain_stores when STARDIFF_STREAM_STORES=1 made streaming the default.
// Memory: dat tiles of >= 2 MiB are advised for transparent huge pages (dat.cpp), and so
// are the triad's tiles (the ceiling is measured on the same kind of memory). The OpenMP
// peer keeps std::vector (what a user writes: ratio_vs_openmp); openmp_thp runs the same
// OpenMP code on huge-page buffers, to show how much of the ratio is the page size.
// Repeats interleave triad / primal / recording / openmp / that variant, each repeat
// starting one variant further on; medians are reported:
//   stencil_bandwidth n=.. iters=.. tiles=.. workers=.. sched=.. stream_stores=..
//       triad_gibs=.. primal_gibs=.. recording_gibs=.. openmp_gibs=.. openmp_thp_gibs=..
//       stream_stores_gibs=.. max_diff=.. recording_ratio=.. paired_ratio_vs_openmp=.. [min..max]
//       ratio_vs_openmp=.. ratio=..
//   (ratio = primal / triad, ratio_vs_openmp = primal / openmp of the medians,
//    paired_ratio_vs_openmp = median and range over repeats of openmp time / primal time
//    within the same repeat)
// Usage: stencil_bandwidth [--n N] [--iters K] [--repeats R] [--tiles T]  (STARPU_* apply)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <cmath>
#include <vector>

#include <omp.h>
#include <sys/mman.h>

#include "poisson_problem.hpp"

using namespace stardiff;

namespace {
struct TriadArgs {
  double scalar;
};
void triad_cpu(const TaskContext& t) {
  const std::size_t n = t.buffers[0].nx;
  double* __restrict a = t.buffers[0].data<double>();
  const double* __restrict b = t.buffers[1].data<double>();
  const double* __restrict c = t.buffers[2].data<double>();
  const double s = t.arg<TriadArgs>().scalar;
  for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}
const Codelet cl_triad("triad", triad_cpu);

// A zeroed buffer of n doubles on a 2 MiB boundary, advised for transparent huge pages
// (as src/mesh/dat.cpp allocates tiles).
struct FreeDeleter {
  void operator()(double* p) const { std::free(p); }
};
using HugeBuffer = std::unique_ptr<double[], FreeDeleter>;
HugeBuffer huge_buffer(std::size_t n) {
  const std::size_t bytes = std::max<std::size_t>(n * sizeof(double), 64), huge = std::size_t(2) << 20;
  void* p = nullptr;
  if (posix_memalign(&p, huge, bytes) != 0) {
    std::fprintf(stderr, "stencil_bandwidth: out of memory (%zu bytes)\n", bytes);
    std::exit(1);
  }
  madvise(p, bytes, MADV_HUGEPAGE);
  std::memset(p, 0, bytes);
  return HugeBuffer(static_cast<double*>(p));
}

// The Poisson iteration as a user would write it with OpenMP: row-major (n+2) x (n+2)
// arrays, halo 1, the kernels' arithmetic verbatim, first touch by the same threads.
// With huge_pages the same code runs on huge_buffer()s instead of std::vector.
struct OpenmpPoisson {
  int n, threads;
  std::size_t ld;
  std::vector<double> vu, vu2, vf;
  HugeBuffer hu, hu2, hf;
  double *u, *u2, *f;
  OpenmpPoisson(int n_, int threads_, bool huge_pages) : n(n_), threads(threads_), ld(std::size_t(n_) + 2) {
    const std::size_t m = ld * ld;
    if (huge_pages) {
      hu = huge_buffer(m), hu2 = huge_buffer(m), hf = huge_buffer(m);
      u = hu.get(), u2 = hu2.get(), f = hf.get();
    } else {
      vu.resize(m), vu2.resize(m), vf.resize(m);
      u = vu.data(), u2 = vu2.data(), f = vf.data();
    }
    double* pu = u;
    double* pu2 = u2;
    double* pf = f;
    const double dx = 0.01, dy = 0.01, pi = 3.14159265358979323846;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int j = -1; j <= n; ++j)
      for (int i = -1; i <= n; ++i) {
        const std::size_t k = std::size_t(j + 1) * ld + std::size_t(i + 1);
        const double x = dx * i, y = dy * j;  // InitKernel's arithmetic
        const double s = std::sin(pi * x) * std::cos(2.0 * pi * y);
        const bool interior = i >= 0 && i < n && j >= 0 && j < n;
        pu[k] = interior ? 0.0 : s, pf[k] = -5.0 * pi * pi * s, pu2[k] = s;
      }
  }
  void iterate(int iters) {
    const double dx2 = 0.01 * 0.01, dy2 = 0.01 * 0.01, inv = 1.0 / (2.0 * (dx2 + dy2));
    double* __restrict pu = u;
    double* __restrict pu2 = u2;
    const double* __restrict pf = f;
    const std::size_t s = ld;
    for (int it = 0; it < iters; ++it) {
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int j = 1; j <= n; ++j)
        for (int i = 1; i <= n; ++i) {
          const std::size_t k = std::size_t(j) * s + std::size_t(i);
          pu2[k] = ((pu[k - 1] + pu[k + 1]) * dy2 + (pu[k - s] + pu[k + s]) * dx2 - pf[k] * dx2 * dy2) * inv;
        }
#pragma omp parallel for num_threads(threads) schedule(static)
      for (int j = 1; j <= n; ++j)
        for (int i = 1; i <= n; ++i) {
          const std::size_t k = std::size_t(j) * s + std::size_t(i);
          pu[k] = pu2[k];
        }
    }
  }
  double at(int i, int j) const { return u[std::size_t(j + 1) * ld + std::size_t(i + 1)]; }
};

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
int arg_int(int& i, int argc, char** argv) {
  if (i + 1 >= argc) {
    std::fprintf(stderr, "stencil_bandwidth: %s needs a value\n", argv[i]);
    std::exit(2);
  }
  int v = std::atoi(argv[++i]);
  if (v < 0) {
    std::fprintf(stderr, "stencil_bandwidth: %s must be >= 0\n", argv[i - 1]);
    std::exit(2);
  }
  return v;
}
}  // namespace

int main(int argc, char** argv) {
  int n = 4096, iters = 10, repeats = 5, tiles = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--n")) n = arg_int(i, argc, argv);
    else if (!std::strcmp(argv[i], "--iters")) iters = arg_int(i, argc, argv);
    else if (!std::strcmp(argv[i], "--repeats")) repeats = arg_int(i, argc, argv);
    else if (!std::strcmp(argv[i], "--tiles")) tiles = arg_int(i, argc, argv);
    else if (!std::strcmp(argv[i], "--help")) {
      std::printf("usage: stencil_bandwidth [--n N] [--iters K] [--repeats R] [--tiles T]\n");
      return 0;
    } else {
      std::fprintf(stderr, "stencil_bandwidth: unknown argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (n < 8 || iters < 1 || repeats < 1) {
    std::fprintf(stderr, "stencil_bandwidth: need --n >= 8, --iters >= 1, --repeats >= 1\n");
    return 2;
  }
  Runtime rt;
  StarpuExecutor ex;
  poisson::Problem p(ex, n, n, tiles);
  p.setup();
  ex.wait_all();
  const int T = p.block.tiles();
  // Triad tiles: the same row split as the Poisson block.
  std::vector<HugeBuffer> triad_mem;
  std::vector<VectorHandle<double>> a, b, c;
  for (int t = 0; t < T; ++t) {
    std::size_t m = static_cast<std::size_t>(p.block.bound(t + 1) - p.block.bound(t)) * n;
    auto borrow = [&](std::vector<VectorHandle<double>>& v, const char* name, double init) {
      triad_mem.push_back(huge_buffer(m));
      std::fill_n(triad_mem.back().get(), m, init);
      v.emplace_back(triad_mem.back().get(), m, name);
    };
    borrow(a, "a", 0.0);
    borrow(b, "b", 1.0);
    borrow(c, "c", 2.0);
  }
  auto triad = [&] {
    for (int it = 0; it < iters; ++it)
      for (int t = 0; t < T; ++t) ex.submit(cl_triad, TriadArgs{3.0}, {out(a[t]), in(b[t]), in(c[t])});
    ex.wait_all();
  };
  auto primal = [&] {
    p.iterate(iters);
    ex.wait_all();
  };
  auto recording = [&] {
    Tape tape("bench");
    tape.start();
    p.iterate(iters);
    tape.stop();
    ex.wait_all();
  };
  const int threads = std::max(1, rt.cpu_workers());
  std::unique_ptr<OpenmpPoisson> omp, omp_thp;
  {
    PausedWorkers paused(rt);
    omp = std::make_unique<OpenmpPoisson>(n, threads, false);
    omp_thp = std::make_unique<OpenmpPoisson>(n, threads, true);
  }
  auto openmp = [&] {
    PausedWorkers paused(rt);
    omp->iterate(iters);
  };
  auto openmp_thp = [&] {
    PausedWorkers paused(rt);
    omp_thp->iterate(iters);
  };
  // The primal with the other store path (par_loop.hpp), to show what the default is
  // worth in the same interleaved runs.
  const bool str0 = mesh::stream_stores();
  auto other_stores = [&] {
    mesh::set_stream_stores(!str0);
    primal();
    mesh::set_stream_stores(str0);
  };
  triad();  // warm-up (first touch, perf-model calibration)
  primal();
  openmp();
  openmp_thp();
  // All three ran `iters` sweeps from the same start: their u must agree bitwise.
  double max_diff = 0;
  {
    const mesh::DatView<double> u = p.u.values();
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        max_diff = std::max({max_diff, std::abs(u(i, j) - omp->at(i, j)), std::abs(u(i, j) - omp_thp->at(i, j))});
  }
  recording();
  other_stores();
  // Repeats interleave the variants, starting each repeat one variant further on.
  enum { kTriad, kPrimal, kRecording, kOpenmp, kOpenmpThp, kOtherStores, kVariants };
  const std::function<void()> run[kVariants] = {triad, primal, recording, openmp, openmp_thp, other_stores};
  std::vector<double> t[kVariants], paired;
  for (int r = 0; r < repeats; ++r) {
    double took[kVariants];
    for (int k = 0; k < kVariants; ++k) {
      const int v = (k + r) % kVariants;
      const double t0 = now();
      run[v]();
      took[v] = now() - t0;
      t[v].push_back(took[v]);
    }
    paired.push_back(took[kOpenmp] / took[kPrimal]);
  }
  const double pts = static_cast<double>(n) * n, gib = 1024.0 * 1024.0 * 1024.0;
  auto gibs = [&](int v, double bytes) { return bytes * pts * iters / median(t[v]) / gib; };
  const double triad_gibs = gibs(kTriad, 24), primal_gibs = gibs(kPrimal, 40), rec_gibs = gibs(kRecording, 40),
               omp_gibs = gibs(kOpenmp, 40), omp_thp_gibs = gibs(kOpenmpThp, 40),
               other_gibs = gibs(kOtherStores, 40);
  std::sort(paired.begin(), paired.end());
  std::printf("stencil_bandwidth n=%d iters=%d tiles=%d repeats=%d workers=%d sched=%s stream_stores=%d "
              "triad_gibs=%.3f primal_gibs=%.3f recording_gibs=%.3f openmp_gibs=%.3f openmp_thp_gibs=%.3f "
              "%s_gibs=%.3f max_diff=%.3g recording_ratio=%.3f paired_ratio_vs_openmp=%.3f [%.3f..%.3f] "
              "ratio_vs_openmp=%.3f ratio=%.3f\n",
              n, iters, T, repeats, rt.cpu_workers(), rt.scheduler().c_str(), str0 ? 1 : 0, triad_gibs,
              primal_gibs, rec_gibs, omp_gibs, omp_thp_gibs, str0 ? "plain_stores" : "stream_stores", other_gibs,
              max_diff, rec_gibs / triad_gibs, median(paired), paired.front(), paired.back(), primal_gibs / omp_gibs,
              primal_gibs / triad_gibs);
  return max_diff == 0 ? 0 : 1;
}
