// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff-heat — 2-D heat equation, backward Euler, variable conductivity; gradients through
// the sparse LDL^T external function (SparseSolve) and an explicit kappa -> matrix map.
//
// Usage: stardiff-heat [--n N] [--dt DT] [--steps K] [--probe I,J]... [--json]
//          [--executor starpu|sequential]
// n x n cells, h = 1/(n+1), x_i = (i+1)h, y_j = (j+1)h; kappa_ij = 1 + 0.5 sin(pi x_i) sin(pi y_j);
// face kappa: mean of its two cells, a boundary face its cell's; (A T)_ij = sum over the four
// faces of kappa_f (T_ij - T_nb)/h^2 (T_nb = 0 outside). Each step solves (I + dt A) T^{k+1} = T^k;
// T^0 = sin(pi x) sin(2 pi y) + x y, T* = 0.25 sin(pi x) sin(pi y), J = h^2 sum (T^K - T*)^2.
// Reports J (primal_s), records and reverses (forward_s, adjoint_s, adjoint_factor =
// (forward_s + adjoint_s) / primal_s), dJ/dT0 and dJ/dkappa at each probe, a Taylor test of
// the whole gradient (random direction in T0 and kappa: remainder order) and a dot-product
// test of T0 -> T^K against its adjoint. Exit: 0 ok, 1 J not finite or a check failed,
// 2 bad arguments. Under mpirun (StarPU-MPI) the mesh tiles are distributed over the ranks,
// the LDLT solves (external functions on rank-0 data) run on rank 0, and only rank 0 prints;
// an error on a run of several ranks ends the whole job (exit 2).
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cli.hpp"
#include "five_point_pattern.hpp"
#include "json.hpp"
#include "stardiff/adjoint.hpp"
#include "stardiff/adjoint/sparse_solve.hpp"
#include "stardiff/mesh.hpp"
#include "stardiff/runtime/runtime.hpp"

using namespace stardiff;
using mesh::Acc;
using mesh::Dat;

namespace {
using apps::parse_int;
using apps::seconds_since;
using apps::parse_pos_double;

constexpr double kPi = 3.14159265358979323846;

void usage(FILE* f) {
  std::fprintf(f,
               "usage: stardiff-heat [--n N] [--dt DT] [--steps K] [--probe I,J]... [--json]\n"
               "         [--executor starpu|sequential]\n"
               "Backward-Euler heat equation on n x n cells (defaults n = 64, dt = 1e-3, K = 10) with\n"
               "conductivity kappa; J = h^2 sum (T^K - T*)^2 and its gradient in T0 and kappa by the\n"
               "adjoint (sparse LDL^T solves), at every --probe (0-based cell indices), with a Taylor\n"
               "test and a dot-product test. --json: one JSON object on stdout.\n"
               "Exit 0 ok, 1 non-finite J or a failed check, 2 bad arguments.\n");
}


// kappa -> M = I + dt A on A's 5-point pattern: M(i,j) = {diagonal, coupling to (i-1,j),
// coupling to (i,j-1)}; c = dt / h^2. The adjoint is the transposed face rule.
struct MatrixKernel {
  double c;
  int n;
  static constexpr unsigned adjoint_reads = 0;  // linear in kappa
  void operator()(Acc<const double> k, Acc<double> m, const int* idx) const {
    const int i = idx[0], j = idx[1];
    const double kc = k(0, 0);
    const double kw = i > 0 ? 0.5 * (kc + k(-1, 0)) : kc, ke = i < n - 1 ? 0.5 * (kc + k(1, 0)) : kc;
    const double ks = j > 0 ? 0.5 * (kc + k(0, -1)) : kc, kn = j < n - 1 ? 0.5 * (kc + k(0, 1)) : kc;
    m.c(0) = 1.0 + c * (kw + ke + ks + kn);
    m.c(1) = i > 0 ? -c * kw : 0.0;
    m.c(2) = j > 0 ? -c * ks : 0.0;
  }
  void adjoint(Acc<const double>, Acc<double> ka, Acc<const double>, Acc<double> ma, const int* idx) const {
    const int i = idx[0], j = idx[1];
    const double g0 = c * ma.c(0);
    const double bw = g0 - (i > 0 ? c * ma.c(1) : 0.0), bs = g0 - (j > 0 ? c * ma.c(2) : 0.0);
    const double be = g0, bn = g0;
    // Each face value's adjoint goes to its cells: half each inside, all to the cell at the boundary.
    if (i > 0) { ka(0, 0) += 0.5 * bw; ka(-1, 0) += 0.5 * bw; } else { ka(0, 0) += bw; }
    if (i < n - 1) { ka(0, 0) += 0.5 * be; ka(1, 0) += 0.5 * be; } else { ka(0, 0) += be; }
    if (j > 0) { ka(0, 0) += 0.5 * bs; ka(0, -1) += 0.5 * bs; } else { ka(0, 0) += bs; }
    if (j < n - 1) { ka(0, 0) += 0.5 * bn; ka(0, 1) += 0.5 * bn; } else { ka(0, 0) += bn; }
  }
};

// J += h^2 (T - T*)^2.
struct ObjectiveKernel {
  double h2;
  void operator()(Acc<const double> t, Acc<const double> ts, double* j) const {
    const double e = t(0, 0) - ts(0, 0);
    *j += h2 * e * e;
  }
  void adjoint(Acc<const double> t, Acc<double> ta, Acc<const double> ts, const double*, const double* ja) const {
    ta(0, 0) += 2.0 * h2 * (t(0, 0) - ts(0, 0)) * *ja;
  }
};

struct Heat {
  int n, K;
  double dt, h;
  mesh::Block grid;
  Dat<double> T, kappa, M, Tstar;
  mesh::Reduction<double> J;
  std::unique_ptr<SparseSolve> solver;

  static mesh::DatOptions three() {
    mesh::DatOptions o;
    o.dim = 3;
    return o;
  }
  static mesh::DatOptions passive() {
    mesh::DatOptions o;
    o.active = false;
    return o;
  }
  Heat(Executor& ex, int n_, double dt_, int K_)
      : n(n_), K(K_), dt(dt_), h(1.0 / (n_ + 1)), grid(ex, "heat", {n_, n_}), T(grid, "T"),
        kappa(grid, "kappa", mesh::Halo(1)), M(grid, "M", mesh::Halo{}, three()),
        Tstar(grid, "Tstar", mesh::Halo{}, passive()), J(grid, mesh::ReduceOp::SUM, "J") {
    Tstar.set([&](int i, int j, int) { return 0.25 * std::sin(kPi * x(i)) * std::sin(kPi * x(j)); });
    new_solver();
  }
  double x(int i) const { return (i + 1) * h; }
  // A fresh solver: analysis of M's pattern (node p = i + n j); factors come with the first solve.
  void new_solver() {
    std::vector<SparseSolve::Entry> where;
    sparse::CscMatrix32 A = apps::five_point_lower(n, where);
    solver.reset();
    solver = std::make_unique<SparseSolve>("heat_ldlt", std::move(A), std::move(where));
  }
  // T0 and kappa, each plus eps times a direction (cell-major vectors i + n j; null: none).
  void set(const std::vector<double>* dT, const std::vector<double>* dk, double eps) {
    auto in = [&](int i, int j) { return i >= 0 && i < n && j >= 0 && j < n; };
    T.set([&](int i, int j, int) {
      const double v = std::sin(kPi * x(i)) * std::sin(2 * kPi * x(j)) + x(i) * x(j);
      return dT && in(i, j) ? v + eps * (*dT)[i + n * j] : v;
    });
    kappa.set([&](int i, int j, int) {
      const double v = 1.0 + 0.5 * std::sin(kPi * x(i)) * std::sin(kPi * x(j));
      return dk && in(i, j) ? v + eps * (*dk)[i + n * j] : v;
    });
  }
  void submit_matrix() {
    par_loop("heat_matrix", grid, grid.interior(), MatrixKernel{dt / (h * h), n},
             mesh::arg_dat(kappa, mesh::Stencil(2, {0, 0, -1, 0, 1, 0, 0, -1, 0, 1}, "5pt"), mesh::READ),
             mesh::arg_dat(M, mesh::WRITE), mesh::arg_idx());
  }
  void submit_steps() {
    for (int k = 0; k < K; ++k) solver->solve(M, T, T);
  }
  void submit_objective() {
    J.reset();
    par_loop("heat_objective", grid, grid.interior(), ObjectiveKernel{h * h}, mesh::arg_dat(T, mesh::READ),
             mesh::arg_dat(Tstar, mesh::READ), mesh::arg_reduce(J));
  }
  double run() {
    submit_matrix();
    submit_steps();
    submit_objective();
    return J.value();
  }
  std::vector<double> cells(mesh::DatView<double> v) const {
    std::vector<double> out(static_cast<std::size_t>(n) * n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) out[i + n * j] = v(i, j);
    return out;
  }
};

}  // namespace

// The launcher's rank before any runtime exists (mpirun sets it), for messages only.
int launcher_rank() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char* e = std::getenv(v); e && *e) return std::atoi(e);
  return 0;
}

int main(int argc, char** argv) {
  int n = 64, K = 10;
  double dt = 1e-3;
  bool json = false;
  std::string executor = "starpu";
  std::vector<std::pair<int, int>> probes;
  const bool quiet_launch = launcher_rank() != 0;  // under mpirun rank 0 prints
  auto bad = [&](const std::string& msg) {
    if (quiet_launch) return 2;
    std::fprintf(stderr, "stardiff-heat: %s\n", msg.c_str());
    usage(stderr);
    return 2;
  };
  for (int a = 1; a < argc; ++a) {
    std::string arg = argv[a];
    auto value = [&]() -> const char* { return a + 1 < argc ? argv[++a] : nullptr; };
    if (arg == "--help" || arg == "-h") {
      if (!quiet_launch) usage(stdout);
      return 0;
    } else if (arg == "--json") {
      json = true;
    } else if (arg == "--n" || arg == "--steps") {
      const char* v = value();
      const long lo = arg == "--n" ? 2 : 1;
      if (!v || !parse_int(v, lo, 1L << 14, arg == "--n" ? n : K))
        return bad(arg + " needs an integer >= " + std::to_string(lo));
    } else if (arg == "--dt") {
      const char* v = value();
      if (!v || !parse_pos_double(v, dt)) return bad("--dt needs a positive number");
    } else if (arg == "--probe") {
      const char* v = value();
      int i = 0, j = 0;
      if (!v || !apps::parse_index_pair(v, i, j))
        return bad("--probe needs I,J (0-based cell indices)");
      probes.emplace_back(i, j);
    } else if (arg == "--executor") {
      const char* v = value();
      if (!v || (std::strcmp(v, "starpu") != 0 && std::strcmp(v, "sequential") != 0))
        return bad("--executor needs starpu or sequential");
      executor = v;
    } else {
      return bad("unknown argument '" + arg + "'");
    }
  }
  for (auto& [i, j] : probes)
    if (i < 0 || i >= n || j < 0 || j >= n)
      return bad("--probe " + std::to_string(i) + "," + std::to_string(j) + " is outside the " + std::to_string(n) +
                 " x " + std::to_string(n) + " cells");

  std::unique_ptr<Runtime> rt;  // outside the try: an error on several ranks aborts the job first
  bool quiet = quiet_launch;
  try {
    if (executor == "starpu") {
      rt = std::make_unique<Runtime>();
      quiet = rt->rank() != 0;
    }
    auto ex = make_executor(executor);
    Heat p(*ex, n, dt, K);
    // Primal (timed), without a tape.
    p.set(nullptr, nullptr, 0);
    ex->wait_all();
    auto t0 = std::chrono::steady_clock::now();
    const double J = p.run();
    const double primal_s = seconds_since(t0);
    // Recorded run and reversal (a fresh solver: it factorizes again, as the primal did).
    p.new_solver();
    p.set(nullptr, nullptr, 0);
    ex->wait_all();
    Tape tape("heat");
    t0 = std::chrono::steady_clock::now();
    tape.start();
    p.submit_matrix();
    p.submit_steps();
    p.submit_objective();
    tape.stop();
    ex->wait_all();
    const double forward_s = seconds_since(t0);
    const double J_taped = p.J.value();
    tape.seed(p.J, 1.0);
    t0 = std::chrono::steady_clock::now();
    tape.reverse();
    ex->wait_all();
    const double adjoint_s = seconds_since(t0);
    const int factorizations = p.solver->factorizations();
    const std::vector<double> gT = p.cells(p.T.adjoint()), gk = p.cells(p.kappa.adjoint());
    tape.clear();

    // Taylor test along a random direction in (T0, kappa).
    const std::size_t N = static_cast<std::size_t>(n) * n;
    std::mt19937 gen(12345);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> vT(N), vk(N);
    for (auto& e : vT) e = u(gen);
    for (auto& e : vk) e = u(gen);
    long double dJ = 0;
    for (std::size_t q = 0; q < N; ++q) dJ += static_cast<long double>(gT[q]) * vT[q] + static_cast<long double>(gk[q]) * vk[q];
    TaylorTest taylor = check_gradient(
        [&](double eps) {
          if (eps == 0) return J;
          p.set(&vT, &vk, eps);
          return p.run();
        },
        static_cast<double>(dJ), {1e-2, 5e-3, 2.5e-3});
    double order = 0;
    for (double r : taylor.rates) order = order == 0 ? r : std::min(order, r);

    // Dot-product test of the linear map T0 -> T^K (kappa fixed: the factors are reused).
    p.set(nullptr, nullptr, 0);
    p.submit_matrix();
    auto set_T = [&](const std::vector<double>& v) {
      p.T.set([&](int i, int j, int) { return i >= 0 && i < n && j >= 0 && j < n ? v[i + n * j] : 0.0; });
    };
    DotProductTest dot = dot_product_test(
        [&](const std::vector<double>& v) {
          set_T(v);
          p.submit_steps();
          return p.cells(p.T.values());
        },
        [&](const std::vector<double>& w) {
          set_T(std::vector<double>(N, 0.0));
          Tape t("heat_dot");
          t.start();
          p.submit_steps();
          t.stop();
          t.seed(p.T, [&](int i, int j, int, int) { return i >= 0 && i < n && j >= 0 && j < n ? w[i + n * j] : 0.0; });
          t.reverse();
          return p.cells(p.T.adjoint());
        },
        N, N, 3);
    const bool dot_ok = dot.rel_diff < 1e-12;
    const bool ok = std::isfinite(J) && J_taped == J && taylor.passed && dot_ok;
    const double factor = (forward_s + adjoint_s) / primal_s;

    if (json) {
      if (quiet) return ok ? 0 : 1;  // rank > 0 under MPI: rank 0 prints
      apps::JsonWriter j;
      j.field("n", n).field("dt", dt).field("steps", K).field("executor", std::string(ex->kind()));
      j.field("J", J).field("primal_s", primal_s).field("forward_s", forward_s).field("adjoint_s", adjoint_s);
      j.field("adjoint_factor", factor).field("factorizations", factorizations);
      j.field("taylor_order", order).field("taylor_passed", taylor.passed);
      j.field("dot_rel_diff", dot.rel_diff).field("dot_passed", dot_ok);
      j.key("probes").begin_array();
      for (auto& [i, jj] : probes)
        j.begin_object()
            .field("i", i)
            .field("j", jj)
            .field("dJ_dT0", gT[i + n * jj])
            .field("dJ_dkappa", gk[i + n * jj])
            .end_object();
      j.end_array();
      std::printf("%s\n", j.str().c_str());
    } else if (!quiet) {
      std::fprintf(stderr, "stardiff-heat: %d x %d cells, dt %g, %d steps, %d tiles, executor %s\n", n, n, dt, K,
                   p.grid.tiles(), ex->kind());
      std::printf("J = %.15g\n", J);
      std::printf("primal_s = %.6g  forward_s = %.6g  adjoint_s = %.6g  adjoint_factor = %.3f\n", primal_s,
                  forward_s, adjoint_s, factor);
      std::printf("factorizations (recorded run and adjoint) = %d\n", factorizations);
      for (auto& [i, jj] : probes)
        std::printf("probe %d,%d: dJ_dT0 = %.17g  dJ_dkappa = %.17g\n", i, jj, gT[i + n * jj], gk[i + n * jj]);
      std::printf("taylor: remainder order = %.3f (%s)\n", order, taylor.passed ? "passed" : "FAILED");
      std::printf("dot-product test: rel_diff = %.3g (%s)\n", dot.rel_diff, dot_ok ? "passed" : "FAILED");
    }
    return ok ? 0 : 1;
  } catch (const Error& e) {
    if (rt && rt->size() > 1) {
      std::fprintf(stderr, "stardiff-heat: rank %d: %s\n", rt->rank(), e.what());
      rt->abort_job(2);
    }
    std::fprintf(stderr, "stardiff-heat: %s\n", e.what());
    return 2;
  }
}
