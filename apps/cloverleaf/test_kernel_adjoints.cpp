// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/cloverleaf/test_kernel_adjoints.cpp — the adjoints of CloverLeaf's kernels (kernels.hpp), loop by loop.
//
// Contract: each test takes a Clover chunk of 9 x 7 cells in 3 tiles (active fields, the
// mesh geometry passive as Clover records it, active only for the set-up loops; halo 2,
// initialised), fills the loop group's inputs with smooth random values in physical ranges
// (positive densities, energies, volumes, masses; velocities and fluxes of both signs, so
// both upwind branches and both limiter signs occur), and runs Clover's own loops (the
// private methods, through CloverTestAccess, or the par_loop calls clover.cpp makes, for
// loops whose method also runs a kernel without an adjoint here). With F the map from the
// inputs to the outputs (dats and reductions) and J its Jacobian:
//  (a) the dot-product test <J v, w> = <v, J^T w> for random v, w (J v by central
//      differences, step 1e-6 of each field's scale; J^T w by recording the group on a
//      tape, seeding w and reversing; SavePolicy::Verify, so an adjoint reading a primal
//      its adjoint_reads mask does not declare fails): relative difference < 1e-7;
//  (b) the gradient of L = <w, F> against central differences of L, entry by entry, at the
//      8 largest and 12 random entries of every input: |g - fd| <= 1e-6 (1 + |g|);
//  and that every input's gradient is non-zero somewhere (the loop does read it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <stardiff/adjoint.hpp>
#include <stardiff/adjoint/gradient_check.hpp>
#include <stardiff/mesh.hpp>
#include <stardiff/runtime/executor.hpp>

#include "clover.hpp"
#include "kernels.hpp"

namespace cloverleaf {

using stardiff::mesh::Reduction;
using DatD = Clover::DatD;

// Clover's private loops and fields, for the tests.
struct CloverTestAccess {
  static DatD& dat(Clover& c, const std::string& name) {
    for (auto& d : c.dats_)
      if (d->name() == name) return *d;
    throw std::runtime_error("no dat " + name);
  }
  static void viscosity(Clover& c) { c.viscosity(); }
  static void revert(Clover& c) { c.revert(); }
  static void reset_field(Clover& c) { c.reset_field(); }
  static void advec_cell(Clover& c, int dir, int sweep) { c.advec_cell(dir, sweep); }
  static void advec_mom(Clover& c, int dir, int sweep) { c.advec_mom(dir, sweep); }
  static void advection(Clover& c) { c.advection(); }
  static void update_halo(Clover& c, const std::vector<std::string>& names, int depth) {
    std::vector<DatD*> f;
    for (const auto& n : names) f.push_back(&dat(c, n));
    c.update_halo(f, depth);
  }
  // initialise_cell_x / _y and initialise_xarea / _yarea as clover.cpp submits them.
  static void cell_axes(Clover& c) {
    using namespace stardiff::mesh;
    Block& b = *c.block_;
    const int nx = c.nx_, ny = c.ny_;
    par_loop("initialise_cell_x", b, Range{-2, nx + 2, 0, 1}, kern::CellAxis{c.dx_, 0},
             arg_dat(*c.vertexx_, Stencil(2, {0, 0, 1, 0}), READ), arg_dat(*c.cellx_, WRITE), arg_dat(*c.celldx_, WRITE));
    par_loop("initialise_cell_y", b, Range{0, 1, -2, ny + 2}, kern::CellAxis{c.dy_, 1},
             arg_dat(*c.vertexy_, Stencil(2, {0, 0, 0, 1}), READ), arg_dat(*c.celly_, WRITE), arg_dat(*c.celldy_, WRITE));
  }
  static void areas(Clover& c) {
    using namespace stardiff::mesh;
    Block& b = *c.block_;
    const Range all_cells{-2, c.nx_ + 2, -2, c.ny_ + 2};
    par_loop("initialise_xarea", b, all_cells, kern::CopyAxis{}, arg_dat(*c.celldy_, READ), arg_dat(*c.xarea_, WRITE));
    par_loop("initialise_yarea", b, all_cells, kern::CopyAxis{}, arg_dat(*c.celldx_, READ), arg_dat(*c.yarea_, WRITE));
  }
  static std::vector<Reduction<double>*> summary_reductions(Clover& c) {
    return {c.s_vol_.get(), c.s_mass_.get(), c.s_ie_.get(), c.s_ke_.get(), c.s_press_.get()};
  }
  // The PdV update and accelerate loops as clover.cpp submits them (their methods also run
  // flux and step-by-mass kernels whose adjoints are tested elsewhere).
  static void pdv_update(Clover& c) {
    using namespace stardiff::mesh;
    par_loop("pdv_correct", *c.block_, c.block_->interior(), kern::PdvUpdate{}, arg_dat(*c.volume_, READ),
             arg_dat(*c.work_cell_, READ), arg_dat(*c.density0_, READ), arg_dat(*c.energy0_, READ),
             arg_dat(*c.pressure_, READ), arg_dat(*c.viscosity_, READ), arg_dat(*c.density1_, WRITE),
             arg_dat(*c.energy1_, WRITE));
  }
  static void accelerate_xy(Clover& c) {
    using namespace stardiff::mesh;
    const Stencil cells(2, {-1, -1, 0, -1, 0, 0, -1, 0}), xa(2, {0, 0, 0, -1}), ya(2, {0, 0, -1, 0});
    Block& b = *c.block_;
    const Range nodes{0, c.nx_ + 1, 0, c.ny_ + 1};
    par_loop("accelerate_x", b, nodes, kern::AccelerateX{}, arg_dat(*c.stepbymass_, READ), arg_dat(*c.xarea_, xa, READ),
             arg_dat(*c.pressure_, cells, READ), arg_dat(*c.viscosity_, cells, READ), arg_dat(*c.xvel0_, READ),
             arg_dat(*c.xvel1_, WRITE));
    par_loop("accelerate_y", b, nodes, kern::AccelerateY{}, arg_dat(*c.stepbymass_, READ), arg_dat(*c.yarea_, ya, READ),
             arg_dat(*c.pressure_, cells, READ), arg_dat(*c.viscosity_, cells, READ), arg_dat(*c.yvel0_, READ),
             arg_dat(*c.yvel1_, WRITE));
  }
};

namespace {

using stardiff::Tape;

Deck small_deck() {
  Deck d;
  d.x_cells = 9;
  d.y_cells = 7;
  d.xmin = 0;
  d.xmax = 9;
  d.ymin = 0;
  d.ymax = 7;
  State s;
  s.density = 1.0;
  s.energy = 2.0;
  d.states.push_back(s);
  return d;
}

// Centre and amplitude of each field's random values (physical ranges).
std::pair<double, double> range_of(const std::string& n) {
  static const std::map<std::string, std::pair<double, double>> r{
      {"density0", {1.0, 0.3}},     {"density1", {1.0, 0.3}},   {"energy0", {2.0, 0.5}},    {"energy1", {2.0, 0.5}},
      {"pressure", {1.0, 0.3}},     {"viscosity", {0.05, 0.04}}, {"soundspeed", {1.0, 0.2}}, {"xvel0", {0.0, 1.0}},
      {"yvel0", {0.0, 1.0}},        {"xvel1", {0.0, 1.0}},      {"yvel1", {0.0, 1.0}},      {"vol_flux_x", {0.0, 0.1}},
      {"vol_flux_y", {0.0, 0.1}},   {"mass_flux_x", {0.0, 0.15}}, {"mass_flux_y", {0.0, 0.15}}, {"volume", {1.0, 0.1}},
      {"xarea", {1.0, 0.1}},        {"yarea", {1.0, 0.1}},      {"celldx", {1.0, 0.1}},     {"celldy", {1.0, 0.1}},
      {"vertexdx", {1.0, 0.1}},     {"vertexdy", {1.0, 0.1}},   {"work_cell", {0.0, 0.05}}, {"pre_vol", {1.0, 0.1}},
      {"post_vol", {1.0, 0.1}},     {"ener_flux", {0.0, 0.2}},  {"node_flux", {0.0, 0.15}}, {"node_mass_post", {1.0, 0.1}},
      {"node_mass_pre", {1.0, 0.1}}, {"mom_flux", {0.0, 0.2}},  {"stepbymass", {0.02, 0.005}},
      {"vertexx", {4.5, 3.0}},      {"vertexy", {3.5, 2.5}},    {"cellx", {4.5, 3.0}},      {"celly", {3.5, 2.5}}};
  auto it = r.find(n);
  if (it == r.end()) throw std::runtime_error("no range for " + n);
  return it->second;
}

class Harness {
 public:
  // in: the group's inputs (perturbed), out: its outputs (seeded); a dat updated in place is
  // in both. run submits the group's loops.
  Harness(std::vector<std::string> in, std::vector<std::string> out, std::function<void(Clover&)> run,
          bool summary_reductions = false, unsigned seed = 7, bool active_geometry = false)
      : c_(ex_, small_deck(), 3, true, false, active_geometry), run_(std::move(run)) {
    c_.initialise();
    ex_.wait_all();
    for (const auto& n : in) in_.push_back(&CloverTestAccess::dat(c_, n));
    for (const auto& n : out) out_.push_back(&CloverTestAccess::dat(c_, n));
    if (summary_reductions) red_ = CloverTestAccess::summary_reductions(c_);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> U(-1, 1);
    auto fill = [&](DatD* d) {
      if (base_.count(d)) return;
      auto [mid, amp] = range_of(d->name());
      const double a = 0.75 + 0.45 * U(rng), b = 0.75 + 0.45 * U(rng), ph = 3.0 * U(rng);
      auto v = d->values();
      for (int k = 0; k < 1; ++k)
        for (int j = v.lo[1]; j < v.lo[1] + v.ext[1]; ++j)
          for (int i = v.lo[0]; i < v.lo[0] + v.ext[0]; ++i)
            v.data[v.index(i, j)] = mid + amp * (0.7 * std::sin(a * i + b * j + ph) + 0.3 * U(rng));
      base_[d] = v;
      scale_[d] = amp;
    };
    for (DatD* d : in_) fill(d);
    for (DatD* d : out_) fill(d);
    for (DatD* d : in_) n_in_ += base_[d].data.size();
    for (DatD* d : out_) n_out_ += base_[d].data.size();
    n_out_ += red_.size();
  }

  std::size_t n_in() const { return n_in_; }
  std::size_t n_out() const { return n_out_; }
  Clover& clover() { return c_; }

  // F(x + h s.v): outputs for the inputs perturbed along v (scaled by each field's amplitude).
  std::vector<double> F(const std::vector<double>* v, double h) {
    load(v, h);
    run_(c_);
    std::vector<double> y;
    y.reserve(n_out_);
    for (DatD* d : out_) {
      const auto val = d->values();
      y.insert(y.end(), val.data.begin(), val.data.end());
    }
    for (auto* r : red_) y.push_back(r->value());
    return y;
  }
  // s . J^T w by the tape.
  std::vector<double> JTw(const std::vector<double>& w, bool scaled = true) {
    load(nullptr, 0);
    Tape tape("kernel_adjoint", stardiff::SavePolicy::Verify);  // also checks adjoint_reads
    tape.start();
    run_(c_);
    tape.stop();
    std::size_t off = 0;
    for (DatD* d : out_) {
      const auto& lay = base_[d];
      tape.seed(*d, [&, off](int i, int j, int k, int c) { return w[off + lay.index(i, j, k, c)]; });
      off += lay.data.size();
    }
    for (auto* r : red_) tape.seed(*r, w[off++]);
    tape.reverse();
    ex_.wait_all();
    std::vector<double> g;
    g.reserve(n_in_);
    for (DatD* d : in_) {
      const auto a = d->adjoint();
      for (double x : a.data) g.push_back(scaled ? x * scale_[d] : x);
    }
    return g;
  }
  // Central difference of J along v (scaled as F).
  std::vector<double> Jv(const std::vector<double>& v, double h) {
    std::vector<double> vp = v;
    const auto yp = F(&vp, h), ym = F(&vp, -h);
    std::vector<double> r(yp.size());
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = (yp[i] - ym[i]) / (2 * h);
    return r;
  }
  // Which input field and scale an input entry belongs to.
  std::pair<DatD*, std::size_t> field_of(std::size_t e) const {
    for (DatD* d : in_) {
      const std::size_t n = base_.at(d).data.size();
      if (e < n) return {d, e};
      e -= n;
    }
    return {nullptr, 0};
  }
  std::pair<std::size_t, std::size_t> span_of(DatD* d) const {
    std::size_t off = 0;
    for (DatD* x : in_) {
      if (x == d) return {off, base_.at(d).data.size()};
      off += base_.at(x).data.size();
    }
    return {0, 0};
  }
  const std::vector<DatD*>& inputs() const { return in_; }
  // Sets one value of a field's base point.
  void set_base(const std::string& name, int i, int j, double v) {
    auto& lay = base_.at(&CloverTestAccess::dat(c_, name));
    lay.data[lay.index(i, j)] = v;
  }
  double scale(DatD* d) const { return scale_.at(d); }

 private:
  void load(const std::vector<double>* v, double h) {
    std::size_t off = 0;
    std::map<DatD*, std::size_t> offs;
    for (DatD* d : in_) {
      offs[d] = off;
      off += base_[d].data.size();
    }
    for (auto& [d, lay] : base_) {
      const auto it = offs.find(d);
      const double s = scale_[d];
      if (v && it != offs.end()) {
        const std::size_t o = it->second;
        d->set([&, o, s](int i, int j, int) { return lay.data[lay.index(i, j)] + h * s * (*v)[o + lay.index(i, j)]; });
      } else {
        d->set([&](int i, int j, int) { return lay.data[lay.index(i, j)]; });
      }
    }
    ex_.wait_all();
  }

  stardiff::SequentialExecutor ex_;
  Clover c_;
  std::function<void(Clover&)> run_;
  std::vector<DatD*> in_, out_;
  std::vector<Reduction<double>*> red_;
  std::map<DatD*, stardiff::mesh::DatView<double>> base_;
  std::map<DatD*, double> scale_;
  std::size_t n_in_ = 0, n_out_ = 0;
};

constexpr double kStep = 1e-6;

void check(Harness& H, const std::string& what) {
  // (a) dot-product test
  const auto dpt = stardiff::dot_product_test([&](const std::vector<double>& v) { return H.Jv(v, kStep); },
                                              [&](const std::vector<double>& w) { return H.JTw(w); }, H.n_in(),
                                              H.n_out(), 3);
  EXPECT_LT(dpt.rel_diff, 1e-7) << what << ": <Jv,w> = " << dpt.jv_w << ", <v,J^T w> = " << dpt.v_jtw;
  // (b) gradient of a random linear functional, entry by entry
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> U(-1, 1);
  std::vector<double> w(H.n_out());
  for (auto& x : w) x = U(rng);
  const auto g = H.JTw(w, false);
  auto L = [&](const std::vector<double>& y) {
    long double s = 0;
    for (std::size_t i = 0; i < y.size(); ++i) s += static_cast<long double>(w[i]) * y[i];
    return static_cast<double>(s);
  };
  double worst = 0;
  for (DatD* d : H.inputs()) {
    const auto [off, n] = H.span_of(d);
    std::vector<std::size_t> idx(n);
    for (std::size_t i = 0; i < n; ++i) idx[i] = off + i;
    std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return std::fabs(g[a]) > std::fabs(g[b]); });
    EXPECT_GT(std::fabs(g[idx[0]]), 0.0) << what << ": the gradient w.r.t. " << d->name() << " is zero";
    std::vector<std::size_t> pick(idx.begin(), idx.begin() + std::min<std::size_t>(8, n));
    std::uniform_int_distribution<std::size_t> P(0, n - 1);
    for (int r = 0; r < 12; ++r) pick.push_back(off + P(rng));
    for (std::size_t e : pick) {
      std::vector<double> v(H.n_in(), 0.0);
      v[e] = 1.0;
      const double fd = (L(H.F(&v, kStep)) - L(H.F(&v, -kStep))) / (2 * kStep * H.scale(d));
      const double err = std::fabs(g[e] - fd) / (1.0 + std::fabs(g[e]));
      worst = std::max(worst, err);
      EXPECT_LE(err, 1e-6) << what << ": d L / d " << d->name() << "[" << e - off << "]: adjoint " << g[e]
                           << ", central difference " << fd;
    }
  }
  std::printf("%-28s inputs %4zu outputs %4zu  dot-product rel %.2e  worst entry err %.2e\n", what.c_str(), H.n_in(),
              H.n_out(), dpt.rel_diff, worst);
}

using A = CloverTestAccess;

TEST(CloverKernelAdjoint, IdealGas) {
  Harness H({"density0", "energy0"}, {"pressure", "soundspeed"}, [](Clover& c) { c.ideal_gas(false); });
  check(H, "ideal_gas");
  Harness P({"density1", "energy1"}, {"pressure", "soundspeed"}, [](Clover& c) { c.ideal_gas(true); });
  check(P, "ideal_gas_predict");
  // energy 0 at one cell: soundspeed sqrt(0), whose derivative is taken as 0 (the pressure
  // still passes its derivative 0.4 rho to the energy)
  Harness Z({"density0", "energy0"}, {"pressure", "soundspeed"}, [](Clover& c) { c.ideal_gas(false); });
  Z.set_base("energy0", 4, 3, 0.0);
  Z.F(nullptr, 0);
  const auto rho = A::dat(Z.clover(), "density0").values();
  const auto ss = A::dat(Z.clover(), "soundspeed").values();
  EXPECT_EQ(ss(4, 3), 0.0);
  std::vector<double> w(Z.n_out(), 1.0);
  const auto g = Z.JTw(w, false);
  for (double x : g) ASSERT_TRUE(std::isfinite(x));
  const std::size_t off = Z.span_of(&A::dat(Z.clover(), "energy0")).first;
  EXPECT_DOUBLE_EQ(g[off + rho.index(4, 3)], (1.4 - 1.0) * rho(4, 3));
}

TEST(CloverKernelAdjoint, Viscosity) {
  Harness H({"density0", "pressure", "xvel0", "yvel0"}, {"viscosity"}, A::viscosity);
  // the q branch must be taken at some cells, or the test says nothing
  H.F(nullptr, 0);
  const auto q = A::dat(H.clover(), "viscosity").values();
  int on = 0;
  for (int j = 0; j < 7; ++j)
    for (int i = 0; i < 9; ++i) on += q(i, j) != 0.0;
  EXPECT_GE(on, 5) << "cells with viscosity";
  EXPECT_LE(on, 58) << "cells with viscosity";
  check(H, "viscosity");
}

TEST(CloverKernelAdjoint, PdvUpdate) {
  Harness H({"work_cell", "density0", "energy0", "pressure", "viscosity"}, {"density1", "energy1"},
            A::pdv_update);
  check(H, "pdv_update");
}

TEST(CloverKernelAdjoint, RevertAndResetField) {
  Harness R({"density0", "energy0"}, {"density1", "energy1"}, A::revert);
  check(R, "revert");
  Harness F({"density1", "energy1", "xvel1", "yvel1"}, {"density0", "energy0", "xvel0", "yvel0"}, A::reset_field);
  check(F, "reset_field");
}

TEST(CloverKernelAdjoint, Accelerate) {
  Harness H({"stepbymass", "pressure", "viscosity", "xvel0", "yvel0"}, {"xvel1", "yvel1"},
            A::accelerate_xy);
  check(H, "accelerate_x/y");
}

TEST(CloverKernelAdjoint, AdvecCell) {
  for (int dir : {0, 1})
    for (int sweep : {1, 2}) {
      const std::string mf = dir == 0 ? "mass_flux_x" : "mass_flux_y";
      std::vector<std::string> in{"density1", "energy1"};
      // pre_vol reads both fluxes in the first sweep, the sweep's own in the second
      if (sweep == 1 || dir == 0) in.push_back("vol_flux_x");
      if (sweep == 1 || dir == 1) in.push_back("vol_flux_y");
      Harness H(in, {"density1", "energy1", "pre_vol", mf, "ener_flux"},
                [dir, sweep](Clover& c) { A::advec_cell(c, dir, sweep); }, false, 11 + 2 * dir + sweep);
      check(H, "advec_cell dir " + std::to_string(dir) + " sweep " + std::to_string(sweep));
    }
}

TEST(CloverKernelAdjoint, AdvecMom) {
  for (int dir : {0, 1})
    for (int sweep : {1, 2}) {
      std::vector<std::string> in{dir == 0 ? "mass_flux_x" : "mass_flux_y", "density1", "xvel1", "yvel1"};
      // the post_vol loop (mom_sweep 1: x first, 2: y first) reads the other direction's flux
      if (sweep == 1) in.push_back(dir == 0 ? "vol_flux_y" : "vol_flux_x");
      Harness H(in, {"xvel1", "yvel1", "post_vol", "node_flux", "node_mass_post", "node_mass_pre", "mom_flux"},
                [dir, sweep](Clover& c) { A::advec_mom(c, dir, sweep); }, false, 21 + 2 * dir + sweep);
      check(H, "advec_mom dir " + std::to_string(dir) + " sweep " + std::to_string(sweep));
    }
}

TEST(CloverKernelAdjoint, UpdateHalo) {
  // cell fields (a group of 3 and one of 1), node fields with the normal-velocity sign
  // flips, face fields; depth 2 and 1
  for (int depth : {1, 2}) {
    const std::vector<std::string> cells{"density0", "energy0", "pressure", "viscosity"};
    Harness C(cells, cells, [&](Clover& c) { A::update_halo(c, cells, depth); });
    check(C, "update_halo cells d" + std::to_string(depth));
    const std::vector<std::string> nodes{"xvel0", "yvel0"};
    Harness N(nodes, nodes, [&](Clover& c) { A::update_halo(c, nodes, depth); });
    check(N, "update_halo nodes d" + std::to_string(depth));
    const std::vector<std::string> faces{"vol_flux_x", "mass_flux_y", "vol_flux_y"};
    Harness F(faces, faces, [&](Clover& c) { A::update_halo(c, faces, depth); });
    check(F, "update_halo faces d" + std::to_string(depth));
  }
}

TEST(CloverKernelAdjoint, FieldSummary) {
  // summary(): ideal_gas, then the SUM reductions
  Harness H({"density0", "energy0", "xvel0", "yvel0"}, {}, [](Clover& c) { c.summary(); }, true);
  check(H, "field_summary");
}

TEST(CloverKernelAdjoint, SetUp) {
  // The set-up loops that read active dats: cell centres from vertices, areas from widths.
  Harness X({"vertexx", "vertexy"}, {"cellx", "celly"}, A::cell_axes, false, 7, true);
  check(X, "initialise_cell_x/y");
  Harness Y({"celldx", "celldy"}, {"xarea", "yarea"}, A::areas, false, 7, true);
  check(Y, "initialise_x/yarea");
  // Every set-up loop has an adjoint: initialise() records and reverses; what it writes
  // depends on the deck's constants only, so a seed on its outputs reaches no input.
  stardiff::SequentialExecutor ex;
  Clover c(ex, small_deck(), 3, true, false, true);
  Tape tape("initialise");
  tape.start();
  c.initialise();
  tape.stop();
  EXPECT_GT(tape.nodes(), 20u);
  tape.seed(c.density0(), [](int i, int j, int, int) { return 1.0 + i + 10.0 * j; });
  tape.seed(c.xvel0(), [](int i, int j, int, int) { return 2.0 - i * j; });
  tape.reverse();
  ex.wait_all();
  for (const char* n : {"density0", "energy0", "xvel0", "yvel0", "vertexx", "celldx", "volume", "xarea"}) {
    const auto a = A::dat(c, n).adjoint();
    EXPECT_EQ(*std::max_element(a.data.begin(), a.data.end()), 0.0) << n;
    EXPECT_EQ(*std::min_element(a.data.begin(), a.data.end()), 0.0) << n;
  }
}

TEST(CloverKernelAdjoint, AdvectionSweeps) {
  // the whole advection of a step: halo updates, cell and momentum sweeps in both directions
  // (the mass fluxes are written before they are read: not inputs)
  Harness H({"vol_flux_x", "vol_flux_y", "density1", "energy1", "xvel1", "yvel1"},
            {"density1", "energy1", "xvel1", "yvel1"}, A::advection, false, 31);
  check(H, "advection (x then y)");
}

}  // namespace
}  // namespace cloverleaf
