// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/cloverleaf/adjoint.cpp — recorded CloverLeaf runs and their gradients (contract in adjoint.hpp).
#include "adjoint.hpp"
#include "vtk.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>

#include <stardiff/adjoint/tape.hpp>

namespace cloverleaf {

using stardiff::Error;
using DatD = Clover::DatD;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Interior values of a cell (node = 0) or node (node = 1) field, x fastest.
std::vector<double> interior(const stardiff::mesh::DatView<double>& v, int nx, int ny, int node) {
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(nx + node) * (ny + node));
  for (int k = 0; k < ny + node; ++k)
    for (int j = 0; j < nx + node; ++j) out.push_back(v(j, k));
  return out;
}

// Adds h * dir to the interior points of a cell or node field.
void perturb(DatD& d, int nx, int ny, int node, const std::vector<double>& dir, double h) {
  const auto v = d.values();
  d.set([&](int j, int k, int) {
    const double x = v(j, k);
    if (j < 0 || k < 0 || j >= nx + node || k >= ny + node) return x;
    return x + h * dir[static_cast<std::size_t>(j) + static_cast<std::size_t>(nx + node) * k];
  });
}

std::string fnv1a(const std::vector<const std::vector<double>*>& fields) {
  std::uint64_t h = 1469598103934665603ULL;
  for (const auto* f : fields)
    for (double x : *f) {
      unsigned char b[sizeof x];
      std::memcpy(b, &x, sizeof x);
      for (unsigned char c : b) h = (h ^ c) * 1099511628211ULL;
    }
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

namespace {
// The primal of run_primal; fields: the final interior fields (density0, energy0, xvel0, yvel0).
Summary primal_run(stardiff::Executor& ex, const Deck& deck, int tiles, int steps, const std::vector<double>& dts,
                   const std::vector<std::vector<double>>* direction, double h,
                   std::vector<std::vector<double>>* fields) {
  Clover c(ex, deck, tiles);
  c.generate();
  if (direction) {
    const int nx = c.nx(), ny = c.ny();
    perturb(c.density0(), nx, ny, 0, (*direction)[0], h);
    perturb(c.energy0(), nx, ny, 0, (*direction)[1], h);
    perturb(c.xvel0(), nx, ny, 1, (*direction)[2], h);
    perturb(c.yvel0(), nx, ny, 1, (*direction)[3], h);
  }
  c.initialise_fields();
  if (!dts.empty()) c.fix_dt(dts);
  for (int s = 0; s < steps; ++s) c.step();
  if (fields) {
    const int nx = c.nx(), ny = c.ny();
    *fields = {interior(c.density0().values(), nx, ny, 0), interior(c.energy0().values(), nx, ny, 0),
               interior(c.xvel0().values(), nx, ny, 1), interior(c.yvel0().values(), nx, ny, 1)};
  }
  return c.summary();
}
}  // namespace

Summary run_primal(stardiff::Executor& ex, const Deck& deck, int tiles, int steps, const std::vector<double>& dts,
                   const std::vector<std::vector<double>>* direction, double h) {
  return primal_run(ex, deck, tiles, steps, dts, direction, h, nullptr);
}

AdjointResult run_adjoint(stardiff::Executor& ex, const Deck& deck, int tiles, int steps,
                          const std::vector<double>& dts, const AdjointOptions& opt) {
  if (!Clover::known_objective(opt.objective))
    throw Error("unknown objective '" + opt.objective + "' (ke, ie, pressure, mass-weighted-energy)");
  AdjointResult r;
  Clover c(ex, deck, tiles, /*active=*/true, /*active_dt=*/!opt.passive_dt);
  const int nx = c.nx(), ny = c.ny();
  c.generate();
  stardiff::Tape tape("cloverleaf");
  tape.set_checkpointing(opt.snapshots > 0 ? stardiff::Checkpointing::revolve_exact(steps, opt.snapshots)
                                           : stardiff::Checkpointing::save_all());
  r.checkpointing = tape.checkpointing().describe();
  ex.wait_all();
  auto t0 = std::chrono::steady_clock::now();
  tape.start();
  c.initialise_fields();
  std::vector<std::reference_wrapper<stardiff::mesh::DatBase>> state;
  for (DatD* d : c.state()) state.emplace_back(*d);
  tape.step(state);
  bool same = true;
  for (int s = 0; s < steps; ++s) {
    const StepInfo info = c.step();
    if (s >= static_cast<int>(dts.size()) || info.dt != dts[s]) same = false;
    tape.step();
  }
  r.summary = c.summary();
  tape.stop();
  ex.wait_all();
  r.forward_s = seconds_since(t0);
  if (c.dt_dat() && !dts.empty() && c.dt_dat()->values()(0, 0) != dts.back()) same = false;
  r.J = Clover::objective(opt.objective, r.summary);
  c.seed_objective(tape, opt.objective, r.summary);
  t0 = std::chrono::steady_clock::now();
  tape.reverse();
  ex.wait_all();
  r.adjoint_s = seconds_since(t0);
  r.recomputed_steps = tape.recomputed_steps();
  r.snapshots = opt.snapshots > 0 ? opt.snapshots : 0;
  r.peak_bytes = tape.peak_bytes();
  r.peak_snapshot_bytes = tape.peak_snapshot_bytes();

  const auto gd = c.density0().adjoint(), ge = c.energy0().adjoint();
  const auto gu = c.xvel0().adjoint(), gv = c.yvel0().adjoint();
  r.g_density = interior(gd, nx, ny, 0);
  r.g_energy = interior(ge, nx, ny, 0);
  r.g_xvel = interior(gu, nx, ny, 1);
  r.g_yvel = interior(gv, nx, ny, 1);
  r.gradient_hash = fnv1a({&r.g_density, &r.g_energy, &r.g_xvel, &r.g_yvel});

  // Per state: the cells (nodes) generate_chunk gave it, halo points included (their
  // gradient is 0: the first halo update overwrites them), in generate_chunk's order.
  const kern::StateTable st = c.state_table();
  r.dstate.assign(st.n, StateGradient{});
  for (int k = -2; k < ny + 2; ++k)
    for (int j = -2; j < nx + 2; ++j) {
      int owner = 0;
      for (int s = 1; s < st.n; ++s)
        if (st.inside(s, j, k)) owner = s;
      r.dstate[owner].density += gd(j, k);
      r.dstate[owner].energy += ge(j, k);
    }
  for (int k = -2; k < ny + 3; ++k)
    for (int j = -2; j < nx + 3; ++j) {
      int owner = 0;
      for (int s = 1; s < st.n; ++s)
        for (int kc = k - 1; kc <= k; ++kc)
          for (int jc = j - 1; jc <= j; ++jc)
            if (jc >= -2 && jc < nx + 2 && kc >= -2 && kc < ny + 2 && st.inside(s, jc, kc)) owner = s;
      r.dstate[owner].xvel += gu(j, k);
      r.dstate[owner].yvel += gv(j, k);
    }
  r.recorded_matches_primal = same;
  tape.clear();

  const std::vector<double> fixed = opt.passive_dt ? dts : std::vector<double>{};
  if (opt.fd_step > 0) {
    r.fd.assign(deck.states.size(), StateGradient{});
    for (std::size_t s = 0; s < deck.states.size(); ++s)
      for (int f = 0; f < 2; ++f) {
        const double x = f == 0 ? deck.states[s].density : deck.states[s].energy;
        const double d = opt.fd_step * (x != 0 ? std::fabs(x) : 1.0);
        double Jpm[2];
        for (int sign = 0; sign < 2; ++sign) {
          Deck p = deck;
          (f == 0 ? p.states[s].density : p.states[s].energy) = x + (sign == 0 ? d : -d);
          Jpm[sign] = Clover::objective(opt.objective, run_primal(ex, p, tiles, steps, fixed));
        }
        (f == 0 ? r.fd[s].density : r.fd[s].energy) = (Jpm[0] - Jpm[1]) / (2 * d);
      }
  }
  if (opt.taylor || opt.dot_test) {
    // Direction: each cell's density and energy moved by a random multiple (in [-1, 1],
    // fixed seed) of its state's value, the same for every cell of a state. (A direction
    // varying inside a uniform region meets the limiters' |difference| kinks at zero
    // differences, where the program is not differentiable: r2 then falls at order 1.)
    std::mt19937 gen(20261202);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> a(st.n), b(st.n);
    for (int s = 0; s < st.n; ++s) {
      a[s] = u(gen) * st.density[s];
      b[s] = u(gen) * st.energy[s];
    }
    std::vector<std::vector<double>> dir(4);
    dir[0].resize(r.g_density.size());
    dir[1].resize(r.g_energy.size());
    dir[2].assign(r.g_xvel.size(), 0.0);
    dir[3].assign(r.g_yvel.size(), 0.0);
    long double dJ = 0;
    for (int k = 0; k < ny; ++k)
      for (int j = 0; j < nx; ++j) {
        int owner = 0;
        for (int s = 1; s < st.n; ++s)
          if (st.inside(s, j, k)) owner = s;
        const std::size_t q = static_cast<std::size_t>(j) + static_cast<std::size_t>(nx) * k;
        dir[0][q] = a[owner];
        dir[1][q] = b[owner];
        dJ += static_cast<long double>(r.g_density[q]) * a[owner] + static_cast<long double>(r.g_energy[q]) * b[owner];
      }
    if (opt.taylor) {
      r.taylor = stardiff::check_gradient(
          [&](double h) {
            if (h == 0) return r.J;
            return Clover::objective(opt.objective, run_primal(ex, deck, tiles, steps, fixed, &dir, h));
          },
          static_cast<double>(dJ), {4e-3, 2e-3, 1e-3, 5e-4});
      r.has_taylor = true;
    }
    if (opt.dot_test) {
      // w: uniform in [-1, 1] on the final interior fields (fixed seed).
      std::vector<std::vector<double>> w(4);
      for (int f = 0; f < 4; ++f) {
        w[f].resize(dir[f].size());
        for (double& x : w[f]) x = u(gen);
      }
      // J^T w: the run recorded again (save-all; no objective), the final fields seeded with w.
      std::vector<std::vector<double>> jtw;
      {
        Clover c2(ex, deck, tiles, true, !opt.passive_dt);
        c2.generate();
        stardiff::Tape t2("cloverleaf_dot");
        t2.start();
        c2.initialise_fields();
        std::vector<std::reference_wrapper<stardiff::mesh::DatBase>> st2;
        for (DatD* d : c2.state()) st2.emplace_back(*d);
        t2.step(st2);
        for (int s = 0; s < steps; ++s) {
          c2.step();
          t2.step();
        }
        t2.stop();
        DatD* out[4] = {&c2.density0(), &c2.energy0(), &c2.xvel0(), &c2.yvel0()};
        for (int f = 0; f < 4; ++f) {
          const int node = f < 2 ? 0 : 1;
          t2.seed(*out[f], [&, f, node](int j, int k, int, int) {
            if (j < 0 || k < 0 || j >= nx + node || k >= ny + node) return 0.0;
            return w[f][static_cast<std::size_t>(j) + static_cast<std::size_t>(nx + node) * k];
          });
        }
        t2.reverse();
        ex.wait_all();
        jtw = {interior(c2.density0().adjoint(), nx, ny, 0), interior(c2.energy0().adjoint(), nx, ny, 0),
               interior(c2.xvel0().adjoint(), nx, ny, 1), interior(c2.yvel0().adjoint(), nx, ny, 1)};
        t2.clear();
      }
      std::vector<std::vector<double>> fp, fm;
      const double h = 1e-6;
      primal_run(ex, deck, tiles, steps, fixed, &dir, h, &fp);
      primal_run(ex, deck, tiles, steps, fixed, &dir, -h, &fm);
      long double jvw = 0, vjtw = 0;
      for (int f = 0; f < 4; ++f)
        for (std::size_t q = 0; q < w[f].size(); ++q) {
          jvw += static_cast<long double>((fp[f][q] - fm[f][q]) / (2 * h)) * w[f][q];
          vjtw += static_cast<long double>(dir[f][q]) * jtw[f][q];
        }
      r.dot_jv_w = static_cast<double>(jvw);
      r.dot_v_jtw = static_cast<double>(vjtw);
      r.dot_rel_diff = std::fabs(r.dot_jv_w - r.dot_v_jtw) / std::max(std::fabs(r.dot_jv_w), std::fabs(r.dot_v_jtw));
      r.has_dot = true;
    }
  }
  return r;
}

void write_gradient_vtk(const std::string& path, const Deck& d, const AdjointResult& r) {
  std::ofstream out(path);
  if (!out) throw Error("--adjoint-vtk: cannot write '" + path + "'");
  const int nx = d.x_cells, ny = d.y_cells;
  char buf[96];
  write_vtk_grid(out, d, "stardiff-cloverleaf gradient");
  for (auto [name, f] : {std::pair<const char*, const std::vector<double>*>{"dobj_ddensity0", &r.g_density},
                         {"dobj_denergy0", &r.g_energy}}) {
    out << "SCALARS " << name << " double 1\nLOOKUP_TABLE default\n";
    for (double x : *f) {
      std::snprintf(buf, sizeof buf, "%.17g\n", x);
      out << buf;
    }
  }
  out << "POINT_DATA " << static_cast<long long>(nx + 1) * (ny + 1) << "\nVECTORS dobj_dvelocity0 double\n";
  for (std::size_t q = 0; q < r.g_xvel.size(); ++q) {
    std::snprintf(buf, sizeof buf, "%.17g %.17g 0\n", r.g_xvel[q], r.g_yvel[q]);
    out << buf;
  }
  if (!out) throw Error("--adjoint-vtk: write error on '" + path + "'");
}

}  // namespace cloverleaf
