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
// Usage: checkpointing [--n N] [--iters K] [--snapshots s1,s2,..] [--tiles T] [--problems poisson,nonlinear]
#include <chrono>
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
}  // namespace

int main(int argc, char** argv) {
  int n = 2048, iters = 200, tiles = 0;
  std::vector<int> snaps{5, 10, 20, 50};
  std::string problems = "poisson,nonlinear";
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
                   "[--problems poisson,nonlinear]\n");
      return 2;
    }
  }
  if (n < 4 || iters < 1 || snaps.empty()) {
    std::fprintf(stderr, "checkpointing: need --n >= 4, --iters >= 1 and at least one snapshot count\n");
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
  } catch (const std::exception& e) {
    std::fprintf(stderr, "checkpointing: %s\n", e.what());
    return 1;
  }
  return 0;
}
