// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/cloverleaf/test_dt_adjoints.cpp — the adjoints of the kernels carrying CloverLeaf's
// time step (kernels.hpp: DtSound, DtSet, the PdV fluxes, StepByMass, FluxCalc, with dt a
// constant and from a dat lacking both axes) against central differences.
//
// Each case records one loop (as clover.cpp submits it, on a 7 x 6 block in 2 tiles,
// random inputs, halo included; the mesh geometry passive, as Clover records it) on a SavePolicy::Verify tape (undeclared primal reads
// fail), seeds the outputs with w and compares <v, adjoint> with <w, (K(x+hv) - K(x-hv)) / 2h>
// for a random direction v over every input. DtSet runs at one cell in each of its
// regimes: the sound, xvel, yvel and div limits, dt_old * dtrise and dtmax.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <tuple>
#include <vector>

#include "stardiff/adjoint.hpp"
#include "stardiff/mesh.hpp"
#include "stardiff/runtime/executor.hpp"

#include "kernels.hpp"

using namespace stardiff;
using namespace stardiff::mesh;
namespace k = cloverleaf::kern;

namespace {

constexpr int NX = 7, NY = 6;

Stencil S(std::initializer_list<int> p) { return Stencil(2, std::vector<int>(p)); }

struct Field {
  Dat<double>* d;
  double lo, hi;  // random values in [lo, hi]
  bool constant = false;  // passive (the mesh geometry): drawn once, not perturbed, no adjoint
  std::vector<double> x0, v;
  DatView<double> layout;
};

struct Case {
  SequentialExecutor ex;
  Block b{ex, "t", {NX, NY}, 2};
  std::vector<std::unique_ptr<Dat<double>>> dats;
  std::mt19937 gen{7};

  Dat<double>& dat(const std::string& name, int ex_x, int ex_y, bool active = true) {
    DatOptions o;
    o.active = active;
    o.size = {NX + ex_x, NY + ex_y};
    dats.push_back(std::make_unique<Dat<double>>(b, name, Halo{2}, o));
    return *dats.back();
  }
  Dat<double>& axis(const std::string& name, int a, bool active = true) {
    DatOptions o;
    o.active = active;
    o.axes = {a};
    o.size = a == 0 ? std::vector<int>{NX, 1} : std::vector<int>{1, NY};
    dats.push_back(std::make_unique<Dat<double>>(b, name, Halo{2}, o));
    return *dats.back();
  }
  Dat<double>& point(const std::string& name) {
    DatOptions o;
    o.no_axes = true;
    dats.push_back(std::make_unique<Dat<double>>(b, name, Halo{}, o));
    return *dats.back();
  }

  static double w(int i, int j, int id) { return std::sin(1.3 * i + 0.7 * j + 0.37 * id) + 0.2; }

  // Inputs get x0 (+ h v); outputs (not inputs) their initial values.
  void set(std::vector<Field>& in, const std::vector<Dat<double>*>& out, double h) {
    for (auto* o : out) o->set([](int i, int j, int) { return 0.01 * i - 0.02 * j; });
    for (auto& f : in)
      f.d->set([&](int i, int j, int) {
        const std::size_t q = f.layout.index(i, j);
        return f.x0[q] + h * f.v[q];
      });
  }
  double dot_w(Dat<double>& d, int id, const DatView<double>& val) {
    long double s = 0;
    for (int j = val.lo[1]; j < val.lo[1] + val.ext[1]; ++j)
      for (int i = val.lo[0]; i < val.lo[0] + val.ext[0]; ++i) s += static_cast<long double>(w(i, j, id)) * val(i, j);
    (void)d;
    return static_cast<double>(s);
  }

  // in: inputs with value ranges; out: outputs (an RW dat is in both); submit: the loop.
  // adjust: changes the drawn values (x0) before the check; zero: the gradient is 0.
  void check(const std::string& name, std::vector<Field> in, const std::vector<Dat<double>*>& out,
             const std::function<void()>& submit, const std::function<void(std::vector<Field>&)>& adjust = {},
             bool zero = false, double rel_h = 1e-6) {
    for (auto& f : in) {
      f.layout = f.d->values();
      std::uniform_real_distribution<double> u(f.lo, f.hi), dir(-1, 1);
      f.x0.resize(f.layout.data.size());
      f.v.resize(f.layout.data.size());
      for (std::size_t q = 0; q < f.x0.size(); ++q) {
        f.x0[q] = u(gen);
        const double d = dir(gen) * std::max(std::fabs(f.x0[q]), 1e-3);
        f.v[q] = f.constant ? 0.0 : d;
      }
    }
    if (adjust) adjust(in);
    set(in, out, 0);
    Tape tape(name, SavePolicy::Verify);
    tape.start();
    submit();
    tape.stop();
    for (std::size_t o = 0; o < out.size(); ++o)
      tape.seed(*out[o], [&, o](int i, int j, int, int) { return w(i, j, static_cast<int>(o)); });
    tape.reverse();
    ex.wait_all();
    long double va = 0;
    for (auto& f : in) {
      if (f.constant) continue;
      const auto a = f.d->adjoint();
      for (std::size_t q = 0; q < f.v.size(); ++q) va += static_cast<long double>(f.v[q]) * a.data[q];
    }
    tape.clear();
    double wd[2];
    for (int s = 0; s < 2; ++s) {
      set(in, out, s == 0 ? rel_h : -rel_h);
      submit();
      ex.wait_all();
      wd[s] = 0;
      for (std::size_t o = 0; o < out.size(); ++o) wd[s] += dot_w(*out[o], static_cast<int>(o), out[o]->values());
    }
    const double fd = (wd[0] - wd[1]) / (2 * rel_h), ad = static_cast<double>(va);
    EXPECT_NEAR(ad, fd, 1e-6 * std::max(std::fabs(fd), 1e-3)) << name << ": adjoint " << ad << " fd " << fd;
    if (zero) EXPECT_EQ(ad, 0.0) << name;
    else EXPECT_NE(ad, 0.0) << name;
  }
};

const Stencil vel = S({0, 0, 1, 0, 0, 1, 1, 1}), xa = S({0, 0, 1, 0}), ya = S({0, 0, 0, 1});

}  // namespace

TEST(CloverDtAdjoints, DtSound) {
  Case c;
  auto &dx = c.axis("celldx", 0, false), &dy = c.axis("celldy", 1, false);
  auto &ss = c.dat("soundspeed", 0, 0), &q = c.dat("viscosity", 0, 0), &rho = c.dat("density0", 0, 0);
  auto& dtc = c.dat("work_cell", 0, 0);
  c.check("calc_dt_sound", {{&dx, 0.5, 1.0, true}, {&dy, 0.5, 1.0, true}, {&ss, 0.5, 2}, {&q, 0, 0.5}, {&rho, 0.2, 1}}, {&dtc},
          [&] {
            par_loop("calc_dt_sound", c.b, c.b.interior(), k::DtSound{0.7}, arg_dat(dx, READ), arg_dat(dy, READ),
                     arg_dat(ss, READ), arg_dat(q, READ), arg_dat(rho, READ), arg_dat(dtc, WRITE));
          });
}

// DtSet at cell (3, 4) in each regime: value ranges make one limit (or clamp) win.
TEST(CloverDtAdjoints, DtSetRegimes) {
  struct Regime {
    const char* name;
    double dtc_lo, dtc_hi, u_lo, u_hi, v_lo, v_hi, dt_lo, dt_hi, dtmax;
    bool converge;  // velocities towards the cell from both sides (div limit)
  };
  const Regime regimes[] = {
      {"sound", 0.001, 0.002, 0.1, 0.2, 0.1, 0.2, 1.0, 2.0, 10.0, false},
      {"xvel", 5.0, 6.0, 2.0, 3.0, 0.01, 0.02, 1.0, 2.0, 10.0, false},
      {"yvel", 5.0, 6.0, 0.01, 0.02, 2.0, 3.0, 1.0, 2.0, 10.0, false},
      {"div", 5.0, 6.0, 1.0, 1.2, 1.0, 1.2, 1.0, 2.0, 10.0, true},
      {"rise", 5.0, 6.0, 0.01, 0.02, 0.01, 0.02, 0.001, 0.002, 10.0, false},
      {"dtmax", 5.0, 6.0, 0.01, 0.02, 0.01, 0.02, 1.0, 2.0, 1e-4, false},
  };
  for (const auto& r : regimes) {
    Case c;
    auto& dtc = c.dat("work_cell", 0, 0);
    auto &u = c.dat("xvel0", 1, 1), &v = c.dat("yvel0", 1, 1);
    auto &ax = c.dat("xarea", 1, 0, false), &ay = c.dat("yarea", 0, 1, false), &vol = c.dat("volume", 0, 0, false);
    auto& dt = c.point("dt");
    const k::DtSet kernel{k::DtTerms{0.5, 0.5, 0.7}, 1.5, r.dtmax};
    auto submit = [&] {
      par_loop("calc_dt_set", c.b, Range{3, 4, 4, 5}, kernel, arg_dat(dtc, READ), arg_dat(u, vel, READ),
               arg_dat(v, vel, READ), arg_dat(ax, xa, READ), arg_dat(ay, ya, READ), arg_dat(vol, READ),
               arg_dat(dt, RW));
    };
    std::vector<Field> in{{&dtc, r.dtc_lo, r.dtc_hi}, {&u, r.u_lo, r.u_hi},   {&v, r.v_lo, r.v_hi},
                          {&ax, 0.8, 1.2, true},     {&ay, 0.8, 1.2, true},  {&vol, 0.9, 1.1, true},
                          {&dt, r.dt_lo, r.dt_hi}};
    // div: x velocities towards the cell from both sides (the right nodes negated), y alike.
    auto converge = [&](std::vector<Field>& f) {
      for (auto [fi, i0, i1, j0, j1] : {std::tuple{1, 4, 5, 4, 6}, std::tuple{2, 3, 5, 5, 6}})
        for (int j = j0; j < j1; ++j)
          for (int i = i0; i < i1; ++i) f[fi].x0[f[fi].layout.index(i, j)] *= -1.0;
    };
    c.check(std::string("calc_dt_set/") + r.name, in, {&dt}, submit,
            r.converge ? std::function<void(std::vector<Field>&)>(converge) : nullptr, r.dtmax < 1e-3);
  }
}

TEST(CloverDtAdjoints, PdvFluxes) {
  for (bool dat_dt : {false, true}) {
    Case c;
    auto &ax = c.dat("xarea", 1, 0, false), &ay = c.dat("yarea", 0, 1, false);
    auto &u0 = c.dat("xvel0", 1, 1), &v0 = c.dat("yvel0", 1, 1), &u1 = c.dat("xvel1", 1, 1), &v1 = c.dat("yvel1", 1, 1);
    auto& total = c.dat("work_cell", 0, 0);
    auto& dt = c.point("dt");
    std::vector<Field> in{{&ax, 0.8, 1.2, true}, {&ay, 0.8, 1.2, true}, {&u0, -1, 1}, {&v0, -1, 1}};
    if (dat_dt) in.push_back({&dt, 0.01, 0.02});
    const double cdt = 0.0137;
    c.check(dat_dt ? "pdv_flux_predict_D" : "pdv_flux_predict", in, {&total}, [&] {
      if (dat_dt)
        par_loop("pdv_flux_predict", c.b, c.b.interior(), k::PdvFluxPredictD{}, arg_dat(ax, xa, READ),
                 arg_dat(ay, ya, READ), arg_dat(u0, vel, READ), arg_dat(v0, vel, READ), arg_dat(dt, READ),
                 arg_dat(total, WRITE));
      else
        par_loop("pdv_flux_predict", c.b, c.b.interior(), k::PdvFluxPredict{cdt}, arg_dat(ax, xa, READ),
                 arg_dat(ay, ya, READ), arg_dat(u0, vel, READ), arg_dat(v0, vel, READ), arg_dat(total, WRITE));
    });
    in.insert(in.begin() + 4, {{&u1, -1, 1}, {&v1, -1, 1}});
    c.check(dat_dt ? "pdv_flux_correct_D" : "pdv_flux_correct", in, {&total}, [&] {
      if (dat_dt)
        par_loop("pdv_flux_correct", c.b, c.b.interior(), k::PdvFluxCorrectD{}, arg_dat(ax, xa, READ),
                 arg_dat(ay, ya, READ), arg_dat(u0, vel, READ), arg_dat(v0, vel, READ), arg_dat(u1, vel, READ),
                 arg_dat(v1, vel, READ), arg_dat(dt, READ), arg_dat(total, WRITE));
      else
        par_loop("pdv_flux_correct", c.b, c.b.interior(), k::PdvFluxCorrect{cdt}, arg_dat(ax, xa, READ),
                 arg_dat(ay, ya, READ), arg_dat(u0, vel, READ), arg_dat(v0, vel, READ), arg_dat(u1, vel, READ),
                 arg_dat(v1, vel, READ), arg_dat(total, WRITE));
    });
  }
}

TEST(CloverDtAdjoints, StepByMassAndFluxCalc) {
  for (bool dat_dt : {false, true}) {
    Case c;
    auto &rho = c.dat("density0", 0, 0), &vol = c.dat("volume", 0, 0, false), &sbm = c.dat("stepbymass", 1, 1);
    auto& dt = c.point("dt");
    const Stencil cells = S({-1, -1, 0, -1, 0, 0, -1, 0});
    const Range nodes{0, NX + 1, 0, NY + 1};
    std::vector<Field> in{{&rho, 0.2, 1.0}, {&vol, 0.9, 1.1, true}};
    if (dat_dt) in.push_back({&dt, 0.01, 0.02});
    c.check(dat_dt ? "accelerate_mass_D" : "accelerate_mass", in, {&sbm}, [&] {
      if (dat_dt)
        par_loop("accelerate_mass", c.b, nodes, k::StepByMassD{}, arg_dat(rho, cells, READ), arg_dat(vol, cells, READ),
                 arg_dat(dt, READ), arg_dat(sbm, WRITE));
      else
        par_loop("accelerate_mass", c.b, nodes, k::StepByMass{0.5 * 0.0137}, arg_dat(rho, cells, READ),
                 arg_dat(vol, cells, READ), arg_dat(sbm, WRITE));
    });
    auto &ax = c.dat("xarea", 1, 0, false), &ay = c.dat("yarea", 0, 1, false);
    auto &u0 = c.dat("xvel0", 1, 1), &v0 = c.dat("yvel0", 1, 1), &u1 = c.dat("xvel1", 1, 1), &v1 = c.dat("yvel1", 1, 1);
    auto &fx = c.dat("vol_flux_x", 1, 0), &fy = c.dat("vol_flux_y", 0, 1);
    const Stencil xv = S({0, 0, 0, 1}), yv = S({0, 0, 1, 0});
    std::vector<Field> fin{{&ax, 0.8, 1.2, true}, {&ay, 0.8, 1.2, true}, {&u0, -1, 1}, {&v0, -1, 1}, {&u1, -1, 1}, {&v1, -1, 1}};
    if (dat_dt) fin.push_back({&dt, 0.01, 0.02});
    c.check(dat_dt ? "flux_calc_D" : "flux_calc", fin, {&fx, &fy}, [&] {
      if (dat_dt) {
        par_loop("flux_calc_x", c.b, nodes, k::FluxCalcD<0>{}, arg_dat(ax, READ), arg_dat(u0, xv, READ),
                 arg_dat(u1, xv, READ), arg_dat(dt, READ), arg_dat(fx, WRITE));
        par_loop("flux_calc_y", c.b, nodes, k::FluxCalcD<1>{}, arg_dat(ay, READ), arg_dat(v0, yv, READ),
                 arg_dat(v1, yv, READ), arg_dat(dt, READ), arg_dat(fy, WRITE));
      } else {
        par_loop("flux_calc", c.b, nodes, k::FluxCalc{0.0137}, arg_dat(ax, READ), arg_dat(ay, READ),
                 arg_dat(u0, xv, READ), arg_dat(v0, yv, READ), arg_dat(u1, xv, READ), arg_dat(v1, yv, READ),
                 arg_dat(fx, WRITE), arg_dat(fy, WRITE));
      }
    });
  }
}
