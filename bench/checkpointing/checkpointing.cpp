// SPDX-License-Identifier: LGPL-2.1-or-later
// checkpointing — time-step checkpointing strategies of the tape on Poisson (its Jacobi
// iterations are the steps) and the nonlinear stencil u <- u + c ∇·(u²∇u) (adjoint reads u).
//
// Per problem: the primal (steps + objective, no tape), then save-all, Revolve at each s of
// --snapshots and online at the same s; per run one line
//   checkpointing problem=.. strategy=save-all|revolve|online steps=L snapshots=S recomputed=R
//       peak_bytes=.. ratio=.. optimal=.. primal_s=.. forward_s=.. reverse_s=.. bitwise=yes|no
// ratio = adjoint factor = (forward with tape + reverse) / primal; optimal = revolve's count
// t·l − β(s+1, t−1) for (l, s); peak_bytes = peak of checkpoints and snapshots held together;
// bitwise: the gradient equals save-all's bit for bit.
// Reverse accumulation (problems rev-acc) on Poisson, the full tape against FixedPointAdjoint:
//   checkpointing problem=poisson strategy=rev-acc steps=L snapshots=0 recomputed=0 peak_bytes=..
//       ratio=.. full_peak_bytes=.. full_ratio=.. adjoint_iterations=.. status=.. change=..
//       rel_diff=.. n=.. tol=..
// once at the N and L above with the adjoint capped at L passes (OPS's fixed count: for
// the linear Poisson the same sums as the full tape), once at --revacc-n with
// --revacc-iters iterations (converged) run to --revacc-tol. rel_diff = max |rev-acc - full|
// over dE/df, dE/du, over max |full|; ratio = (forward + reverse) / primal as above.
// Usage: checkpointing [--n N] [--iters K] [--snapshots s1,s2,..] [--tiles T]
//          [--problems poisson,nonlinear,rev-acc] [--revacc-n N] [--revacc-iters K] [--revacc-tol T]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "nonlinear_diffusion.hpp"
#include "poisson_problem.hpp"

using namespace stardiff;

namespace {
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Outcome {
  double forward = 0, reverse = 0;
  std::vector<double> grad;
  std::int64_t recomputed = 0;
  std::size_t peak = 0;
};

// P: setup(), one_step(), objective(), state dat u, reduction err.
template <class P, class Step>
double primal(P& p, int iters, Step one_step) {
  Executor& ex = p.block.executor();
  p.setup();
  ex.wait_all();
  const double t0 = now();
  for (int k = 0; k < iters; ++k) one_step();
  p.submit_error();
  ex.wait_all();
  return now() - t0;
}

template <class P, class Step>
Outcome adjoint(P& p, int iters, const Checkpointing& c, Step one_step) {
  Executor& ex = p.block.executor();
  p.setup();
  ex.wait_all();
  Outcome o;
  {
    Tape tape("bench_checkpointing");
    tape.set_checkpointing(c);
    double t0 = now();
    tape.start();
    tape.step({p.u});
    for (int k = 0; k < iters; ++k) {
      one_step();
      tape.step();
    }
    p.submit_error();
    tape.stop();
    ex.wait_all();
    o.forward = now() - t0;
    tape.seed(p.err, 1.0);
    ex.wait_all();
    t0 = now();
    tape.reverse();
    ex.wait_all();
    o.reverse = now() - t0;
    o.grad = p.u.adjoint().data;
    o.recomputed = tape.recomputed_steps();
    o.peak = tape.peak_bytes();
  }
  return o;
}

template <class P, class Step>
void run_problem(const char* name, P& p, int iters, const std::vector<int>& snaps, Step one_step) {
  const double tp = primal(p, iters, one_step);
  const Outcome all = adjoint(p, iters, Checkpointing::save_all(), one_step);
  auto line = [&](const char* strategy, int s, const Outcome& o, std::int64_t optimal) {
    std::printf("checkpointing problem=%s strategy=%s steps=%d snapshots=%d recomputed=%lld peak_bytes=%zu "
                "ratio=%.3f optimal=%lld primal_s=%.4f forward_s=%.4f reverse_s=%.4f bitwise=%s\n",
                name, strategy, iters, s, static_cast<long long>(o.recomputed), o.peak, (o.forward + o.reverse) / tp,
                static_cast<long long>(optimal), tp, o.forward, o.reverse, o.grad == all.grad ? "yes" : "no");
    std::fflush(stdout);
  };
  line("save-all", 0, all, 0);
  for (int s : snaps) {
    const std::int64_t opt = CheckpointSchedule::optimal_recomputations(iters, s);
    line("revolve", s, adjoint(p, iters, Checkpointing::revolve(iters, s), one_step), opt);
    line("online", s, adjoint(p, iters, Checkpointing::online(s), one_step), opt);
  }
}
// One rev-acc line: the full tape, then reverse accumulation, on one Poisson problem.
void rev_acc_line(Executor& ex, int n, int iters, int tiles, FixedPointOptions o) {
  poisson::Problem p(ex, n, n, tiles);
  const double tp = primal(p, iters, [&] { p.iterate(1); });
  auto timed = [&](bool rev, double& fwd, double& bwd, std::size_t& bytes, FixedPointReport& rep) {
    p.setup();
    ex.wait_all();
    Tape tape("bench_rev_acc");
    double t0 = now();
    const std::unique_ptr<FixedPointAdjoint> fp = poisson::record_iterations(tape, p, iters, rev ? &o : nullptr);
    ex.wait_all();
    fwd = now() - t0;
    tape.seed(p.err, 1.0);
    ex.wait_all();
    t0 = now();
    tape.reverse();
    ex.wait_all();
    bwd = now() - t0;
    bytes = std::max(tape.peak_bytes(), tape.bytes()) + (fp ? fp->bytes() : 0);
    if (fp) rep = fp->report();
    std::vector<double> g = p.f.adjoint().data, u = p.u.adjoint().data;
    g.insert(g.end(), u.begin(), u.end());
    return g;
  };
  double ff = 0, fb = 0, rf = 0, rb = 0;
  std::size_t fbytes = 0, rbytes = 0;
  FixedPointReport rep, unused;
  const std::vector<double> gf = timed(false, ff, fb, fbytes, unused);
  const std::vector<double> gr = timed(true, rf, rb, rbytes, rep);
  double d = 0, m = 0;
  for (std::size_t k = 0; k < gf.size(); ++k) {
    d = std::max(d, std::fabs(gr[k] - gf[k]));
    m = std::max(m, std::fabs(gf[k]));
  }
  std::printf("checkpointing problem=poisson strategy=rev-acc steps=%d snapshots=0 recomputed=0 peak_bytes=%zu "
              "ratio=%.3f full_peak_bytes=%zu full_ratio=%.3f adjoint_iterations=%d status=%s change=%.3g "
              "rel_diff=%.3g n=%d tol=%.3g primal_s=%.4f forward_s=%.4f reverse_s=%.4f full_forward_s=%.4f "
              "full_reverse_s=%.4f\n",
              iters, rbytes, (rf + rb) / tp, fbytes, (ff + fb) / tp, rep.iterations, to_string(rep.status), rep.change,
              m > 0 ? d / m : d, n, o.tolerance, tp, rf, rb, ff, fb);
  std::fflush(stdout);
}
}  // namespace

int main(int argc, char** argv) {
  int n = 2048, iters = 200, tiles = 0;
  std::vector<int> snaps{5, 10, 20, 50};
  std::string problems = "poisson,nonlinear,rev-acc";
  int revacc_n = 64, revacc_iters = 30000;
  double revacc_tol = 1e-10;
  for (int i = 1; i < argc; ++i) {
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "checkpointing: %s needs a value\n", argv[i]);
        std::exit(2);
      }
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "--n")) n = std::atoi(next());
    else if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(next());
    else if (!std::strcmp(argv[i], "--tiles")) tiles = std::atoi(next());
    else if (!std::strcmp(argv[i], "--problems")) problems = next();
    else if (!std::strcmp(argv[i], "--revacc-n")) revacc_n = std::atoi(next());
    else if (!std::strcmp(argv[i], "--revacc-iters")) revacc_iters = std::atoi(next());
    else if (!std::strcmp(argv[i], "--revacc-tol")) revacc_tol = std::atof(next());
    else if (!std::strcmp(argv[i], "--snapshots")) {
      snaps.clear();
      std::string v = next();
      for (std::size_t p = 0; p < v.size();) {
        const std::size_t q = v.find(',', p);
        snaps.push_back(std::atoi(v.substr(p, q - p).c_str()));
        p = q == std::string::npos ? v.size() : q + 1;
      }
    } else {
      std::fprintf(stderr,
                   "usage: checkpointing [--n N] [--iters K] [--snapshots s1,s2,..] [--tiles T] "
                   "[--problems poisson,nonlinear,rev-acc] [--revacc-n N] [--revacc-iters K] [--revacc-tol T]\n");
      return 2;
    }
  }
  if (n < 4 || iters < 1 || snaps.empty() || revacc_n < 4 || revacc_iters < 1 || !(revacc_tol > 0)) {
    std::fprintf(stderr, "checkpointing: need --n >= 4, --iters >= 1, at least one snapshot count, --revacc-n >= 4, "
                         "--revacc-iters >= 1 and --revacc-tol > 0\n");
    return 2;
  }
  try {
    Runtime rt;
    StarpuExecutor ex;
    if (problems.find("poisson") != std::string::npos) {
      poisson::Problem p(ex, n, n, tiles);
      run_problem("poisson", p, iters, snaps, [&] { p.iterate(1); });
    }
    if (problems.find("nonlinear") != std::string::npos) {
      nonlinear::Problem p(ex, n, tiles);
      run_problem("nonlinear", p, iters, snaps, [&] { p.step(); });
    }
    if (problems.find("rev-acc") != std::string::npos) {
      FixedPointOptions capped;  // OPS's fixed count: as many adjoint passes as iterations
      capped.tolerance = 1e-300;
      capped.max_iterations = iters;
      capped.throw_on_failure = false;
      rev_acc_line(ex, n, iters, tiles, capped);
      FixedPointOptions conv;
      conv.tolerance = revacc_tol;
      conv.max_iterations = 10 * revacc_iters;
      conv.throw_on_failure = false;
      rev_acc_line(ex, revacc_n, revacc_iters, tiles, conv);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "checkpointing: %s\n", e.what());
    return 1;
  }
  return 0;
}
