// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/cloverleaf/clover.cpp — the hydro cycle as par_loops (contract in clover.hpp).
// Loop ranges are the reference's, less points whose values no later loop reads before
// they are overwritten (noted where a range is shorter than the reference's).
#include "clover.hpp"

#include <algorithm>
#include <cmath>

#include <stardiff/mesh/par_loop.hpp>

#include "kernels.hpp"

namespace cloverleaf {

using namespace stardiff::mesh;
namespace k = kern;

namespace {
Stencil S(std::initializer_list<int> p) { return Stencil(2, std::vector<int>(p)); }
const Stencil& zero() {
  static const Stencil s = Stencil::zero(2);
  return s;
}
}  // namespace

Clover::Clover(stardiff::Executor& ex, const Deck& deck, int tiles, bool active, bool active_dt, bool active_geometry)
    : deck_(deck), active_(active), active_dt_(active && active_dt), active_geometry_(active && active_geometry),
      nx_(deck.x_cells), ny_(deck.y_cells) {
  dx_ = (deck.xmax - deck.xmin) / static_cast<float>(nx_);
  dy_ = (deck.ymax - deck.ymin) / static_cast<float>(ny_);
  // tiles = 0: the mesh's default (Block: 2 per worker, per rank under StarPU-MPI); every
  // tile keeps >= 2 rows (halo depth 2), so at most ny / 2 tiles.
  const int most = std::max(1, ny_ / 2);
  block_ = std::make_unique<Block>(ex, "clover", std::vector<int>{nx_, ny_}, std::min(tiles, most));
  if (block_->tiles() > most) block_ = std::make_unique<Block>(ex, "clover", std::vector<int>{nx_, ny_}, most);
  density0_ = &make("density0", Shape::Cell, true);
  density1_ = &make("density1", Shape::Cell, true);
  energy0_ = &make("energy0", Shape::Cell, true);
  energy1_ = &make("energy1", Shape::Cell, true);
  pressure_ = &make("pressure", Shape::Cell, true);
  viscosity_ = &make("viscosity", Shape::Cell, true);
  soundspeed_ = &make("soundspeed", Shape::Cell);
  xvel0_ = &make("xvel0", Shape::Node, true);
  xvel1_ = &make("xvel1", Shape::Node, true);
  yvel0_ = &make("yvel0", Shape::Node, true);
  yvel1_ = &make("yvel1", Shape::Node, true);
  vol_flux_x_ = &make("vol_flux_x", Shape::XFace, true);
  mass_flux_x_ = &make("mass_flux_x", Shape::XFace, true);
  vol_flux_y_ = &make("vol_flux_y", Shape::YFace, true);
  mass_flux_y_ = &make("mass_flux_y", Shape::YFace, true);
  volume_ = &make("volume", Shape::Cell, false, true);
  xarea_ = &make("xarea", Shape::XFace, false, true);
  yarea_ = &make("yarea", Shape::YFace, false, true);
  work_cell_ = &make("work_cell", Shape::Cell);
  pre_vol_ = &make("pre_vol", Shape::Cell);
  post_vol_ = &make("post_vol", Shape::Cell);
  ener_flux_ = &make("ener_flux", Shape::Node);
  node_flux_ = &make("node_flux", Shape::Node);
  node_mass_post_ = &make("node_mass_post", Shape::Node);
  node_mass_pre_ = &make("node_mass_pre", Shape::Node);
  mom_flux_ = &make("mom_flux", Shape::Node);
  stepbymass_ = &make("stepbymass", Shape::Node);
  auto axis_dat = [&](const std::string& name, int axis, int n) -> DatD& {
    DatOptions o;
    o.active = active_geometry_;
    o.axes = {axis};
    o.size = axis == 0 ? std::vector<int>{n, 1} : std::vector<int>{1, n};
    dats_.push_back(std::make_unique<DatD>(*block_, name, Halo{2}, o));
    return *dats_.back();
  };
  vertexx_ = &axis_dat("vertexx", 0, nx_ + 1);
  vertexdx_ = &axis_dat("vertexdx", 0, nx_ + 1);
  cellx_ = &axis_dat("cellx", 0, nx_);
  celldx_ = &axis_dat("celldx", 0, nx_);
  vertexy_ = &axis_dat("vertexy", 1, ny_ + 1);
  vertexdy_ = &axis_dat("vertexdy", 1, ny_ + 1);
  celly_ = &axis_dat("celly", 1, ny_);
  celldy_ = &axis_dat("celldy", 1, ny_);
  if (active_dt_) {
    DatOptions o;
    o.no_axes = true;
    dats_.push_back(std::make_unique<DatD>(*block_, "dt", Halo{}, o));
    dt_dat_ = dats_.back().get();
  }
  auto red = [&](ReduceOp op, const char* name) { return std::make_unique<Reduction<double>>(*block_, op, name); };
  dt_min_ = red(ReduceOp::MIN, "dt_min");
  control_ = red(ReduceOp::SUM, "dt_control");
  xpos_ = red(ReduceOp::SUM, "dt_x");
  ypos_ = red(ReduceOp::SUM, "dt_y");
  s_vol_ = red(ReduceOp::SUM, "vol");
  s_mass_ = red(ReduceOp::SUM, "mass");
  s_ie_ = red(ReduceOp::SUM, "ie");
  s_ke_ = red(ReduceOp::SUM, "ke");
  s_press_ = red(ReduceOp::SUM, "press");
}

Clover::~Clover() = default;

Clover::DatD& Clover::make(const std::string& name, Shape s, bool mirror, bool geometry) {
  DatOptions o;
  o.active = geometry ? active_geometry_ : active_;
  const int ex = s == Shape::Node || s == Shape::XFace ? 1 : 0;
  const int ey = s == Shape::Node || s == Shape::YFace ? 1 : 0;
  o.size = {nx_ + ex, ny_ + ey};
  dats_.push_back(std::make_unique<DatD>(*block_, name, Halo{2}, o));
  DatD* d = dats_.back().get();
  Meta meta{s, nullptr, nullptr, nullptr};
  if (mirror) {
    auto add = [&](const std::string& n, const DatOptions& mo) {
      dats_.push_back(std::make_unique<DatD>(*block_, n, Halo{2}, mo));
      return dats_.back().get();
    };
    meta.mirror_y = add(name + "_mirror", o);
    // The x sides' halo columns [-2, 0) and [N, N + 2): two columns each, all rows.
    DatOptions ox = o;
    ox.size = {2, o.size[1]};
    ox.base = {-2, 0};
    meta.mirror_xlo = add(name + "_mirror_xlo", ox);
    ox.base = {o.size[0], 0};
    meta.mirror_xhi = add(name + "_mirror_xhi", ox);
  }
  meta_.push_back({d, meta});
  return *d;
}

// ---- update_halo ---------------------------------------------------------------------
void Clover::update_halo(const std::vector<DatD*>& fields, int depth) {
  std::vector<HaloField> groups[4];
  for (DatD* f : fields) {
    auto it = std::find_if(meta_.begin(), meta_.end(), [&](const auto& p) { return p.first == f; });
    const Meta& m = it->second;
    const std::string& n = f->name();
    const bool xnormal = n.rfind("xvel", 0) == 0 || n == "vol_flux_x" || n == "mass_flux_x";
    const bool ynormal = n.rfind("yvel", 0) == 0 || n == "vol_flux_y" || n == "mass_flux_y";
    groups[static_cast<int>(m.shape)].push_back({f, m.shape, xnormal ? -1.0 : 1.0, ynormal ? -1.0 : 1.0});
  }
  for (auto& g : groups)
    for (std::size_t i = 0; i < g.size(); i += 3)
      reflect(std::vector<HaloField>(g.begin() + i, g.begin() + std::min(g.size(), i + 3)), depth);
}

namespace {
void mirror_loop(const std::string& name, Block& b, const Range& r, const k::ReflectSide& kern, const Stencil& st,
                 const std::vector<Clover::DatD*>& f, const std::vector<Clover::DatD*>& m) {
  switch (f.size()) {
    case 1:
      par_loop(name, b, r, k::Reflect<1>{kern}, arg_idx(), arg_dat(*f[0], st, READ), arg_dat(*m[0], WRITE));
      break;
    case 2:
      par_loop(name, b, r, k::Reflect<2>{kern}, arg_idx(), arg_dat(*f[0], st, READ), arg_dat(*f[1], st, READ),
               arg_dat(*m[0], WRITE), arg_dat(*m[1], WRITE));
      break;
    default:
      par_loop(name, b, r, k::Reflect<3>{kern}, arg_idx(), arg_dat(*f[0], st, READ), arg_dat(*f[1], st, READ),
               arg_dat(*f[2], st, READ), arg_dat(*m[0], WRITE), arg_dat(*m[1], WRITE), arg_dat(*m[2], WRITE));
  }
}
void copy_back(const std::string& name, Block& b, const Range& r, const std::vector<Clover::DatD*>& f,
               const std::vector<Clover::DatD*>& m) {
  switch (f.size()) {
    case 1:
      par_loop(name, b, r, k::CopyBack<1>{}, arg_dat(*m[0], READ), arg_dat(*f[0], WRITE));
      break;
    case 2:
      par_loop(name, b, r, k::CopyBack<2>{}, arg_dat(*m[0], READ), arg_dat(*m[1], READ), arg_dat(*f[0], WRITE),
               arg_dat(*f[1], WRITE));
      break;
    default:
      par_loop(name, b, r, k::CopyBack<3>{}, arg_dat(*m[0], READ), arg_dat(*m[1], READ), arg_dat(*m[2], READ),
               arg_dat(*f[0], WRITE), arg_dat(*f[1], WRITE), arg_dat(*f[2], WRITE));
  }
}
}  // namespace

// Reflection about the boundary: cell fields mirror about the face (-1/2 and N-1/2);
// node and face fields about the boundary node (0 and N-1) along both axes, as the
// reference's update_halo_kernel does (also for face fields along their cell axis).
// The y sides go first over the interior x range, then the x sides over all rows, as
// the reference's order leaves the corners.
void Clover::reflect(const std::vector<HaloField>& group, int depth) {
  const Shape s = group[0].shape;
  const int Nx = nx_ + (s == Shape::Node || s == Shape::XFace ? 1 : 0);
  const int Ny = ny_ + (s == Shape::Node || s == Shape::YFace ? 1 : 0);
  const int lo2c = s == Shape::Cell ? -1 : 0;
  auto hi2c = [&](int N) { return s == Shape::Cell ? 2 * N - 1 : 2 * N - 2; };
  std::vector<DatD*> f, my, mxlo, mxhi;
  for (const auto& h : group) {
    f.push_back(h.f);
    const Meta& mt = std::find_if(meta_.begin(), meta_.end(), [&](const auto& p) { return p.first == h.f; })->second;
    my.push_back(mt.mirror_y);
    mxlo.push_back(mt.mirror_xlo);
    mxhi.push_back(mt.mirror_xhi);
  }
  struct Side {
    int axis;
    bool low;
  };
  auto side_range = [&](Side sd) {
    const int N = sd.axis == 0 ? Nx : Ny;
    const int a0 = sd.low ? -depth : N, a1 = sd.low ? 0 : N + depth;
    if (sd.axis == 1) return Range{0, Nx, a0, a1};
    return Range{a0, a1, -depth, Ny + depth};
  };
  auto side_kernel = [&](Side sd, Stencil& st) {
    const int N = sd.axis == 0 ? Nx : Ny;
    k::ReflectSide r{};
    r.axis = sd.axis;
    r.twoc = sd.low ? lo2c : hi2c(N);
    for (std::size_t i = 0; i < group.size(); ++i) r.sign[i] = sd.axis == 0 ? group[i].sign_x : group[i].sign_y;
    std::vector<int> pts;
    for (int q = 1; q <= depth; ++q) {
      const int p = sd.low ? -q : N - 1 + q;
      const int o = r.twoc - 2 * p;
      if (sd.axis == 0) pts.insert(pts.end(), {o, 0});
      else pts.insert(pts.end(), {0, o});
    }
    st = Stencil(2, pts);
    return r;
  };
  for (int axis : {1, 0}) {
    const Side lo{axis, true}, hi{axis, false};
    Stencil sl = zero(), sh = zero();
    const k::ReflectSide kl = side_kernel(lo, sl), kh = side_kernel(hi, sh);
    const char* nm = axis == 1 ? "update_halo_y" : "update_halo_x";
    const std::vector<DatD*>& mlo = axis == 1 ? my : mxlo;
    const std::vector<DatD*>& mhi = axis == 1 ? my : mxhi;
    mirror_loop(std::string(nm) + "_mirror", *block_, side_range(lo), kl, sl, f, mlo);
    mirror_loop(std::string(nm) + "_mirror", *block_, side_range(hi), kh, sh, f, mhi);
    copy_back(std::string(nm) + "_copy", *block_, side_range(lo), f, mlo);
    copy_back(std::string(nm) + "_copy", *block_, side_range(hi), f, mhi);
  }
}

// ---- set-up --------------------------------------------------------------------------
kern::StateTable Clover::state_table() const {
  k::StateTable st{};
  st.n = static_cast<int>(deck_.states.size());
  st.xmin0 = deck_.xmin;
  st.ymin0 = deck_.ymin;
  st.dx = dx_;
  st.dy = dy_;
  for (int s = 0; s < st.n; ++s) {
    const State& x = deck_.states[s];
    st.density[s] = x.density;
    st.energy[s] = x.energy;
    st.xvel[s] = x.xvel;
    st.yvel[s] = x.yvel;
    st.xmin[s] = x.xmin;
    st.xmax[s] = x.xmax;
    st.ymin[s] = x.ymin;
    st.ymax[s] = x.ymax;
    st.radius[s] = x.radius;
    st.geometry[s] = static_cast<int>(x.geometry);
  }
  return st;
}

std::vector<Clover::DatD*> Clover::state() {
  std::vector<DatD*> s{density0_, energy0_, xvel0_, yvel0_};
  if (dt_dat_) s.push_back(dt_dat_);
  return s;
}

void Clover::generate() {
  Block& b = *block_;
  const int nx = nx_, ny = ny_;
  par_loop("initialise_vertex_x", b, Range{-2, nx + 3, 0, 1}, k::VertexAxis{deck_.xmin, dx_, 0}, arg_idx(),
           arg_dat(*vertexx_, WRITE), arg_dat(*vertexdx_, WRITE));
  par_loop("initialise_vertex_y", b, Range{0, 1, -2, ny + 3}, k::VertexAxis{deck_.ymin, dy_, 1}, arg_idx(),
           arg_dat(*vertexy_, WRITE), arg_dat(*vertexdy_, WRITE));
  par_loop("initialise_cell_x", b, Range{-2, nx + 2, 0, 1}, k::CellAxis{dx_, 0}, arg_dat(*vertexx_, S({0, 0, 1, 0}), READ),
           arg_dat(*cellx_, WRITE), arg_dat(*celldx_, WRITE));
  par_loop("initialise_cell_y", b, Range{0, 1, -2, ny + 2}, k::CellAxis{dy_, 1}, arg_dat(*vertexy_, S({0, 0, 0, 1}), READ),
           arg_dat(*celly_, WRITE), arg_dat(*celldy_, WRITE));
  const Range all_cells{-2, nx + 2, -2, ny + 2};
  par_loop("initialise_volume", b, all_cells, k::Fill{dx_ * dy_}, arg_dat(*volume_, WRITE));
  par_loop("initialise_xarea", b, all_cells, k::CopyAxis{}, arg_dat(*celldy_, READ), arg_dat(*xarea_, WRITE));
  par_loop("initialise_yarea", b, all_cells, k::CopyAxis{}, arg_dat(*celldx_, READ), arg_dat(*yarea_, WRITE));

  const k::StateTable st = state_table();
  par_loop("generate_chunk_cells", b, all_cells, k::GenerateCells{st}, arg_idx(), arg_dat(*density0_, WRITE),
           arg_dat(*energy0_, WRITE));
  par_loop("generate_chunk_nodes", b, Range{-2, nx + 3, -2, ny + 3}, k::GenerateNodes{st, nx, ny}, arg_idx(),
           arg_dat(*xvel0_, WRITE), arg_dat(*yvel0_, WRITE));
  if (dt_dat_) par_loop("initialise_dt", b, Range{0, 1, 0, 1}, k::Fill{deck_.dtinit}, arg_dat(*dt_dat_, WRITE));
}

void Clover::initialise_fields() {
  ideal_gas(false);
  update_halo({density0_, energy0_, pressure_, viscosity_, density1_, energy1_, xvel0_, yvel0_, xvel1_, yvel1_}, 2);
  time_ = 0;
  dt_ = dtold_ = deck_.dtinit;
  advect_x_ = true;
  steps_done_ = 0;
}

// ---- the cycle -----------------------------------------------------------------------
void Clover::ideal_gas(bool predict) {
  par_loop(predict ? "ideal_gas_predict" : "ideal_gas", *block_, block_->interior(), k::IdealGas{},
           arg_dat(predict ? *density1_ : *density0_, READ), arg_dat(predict ? *energy1_ : *energy0_, READ),
           arg_dat(*pressure_, WRITE), arg_dat(*soundspeed_, WRITE));
}

void Clover::viscosity() {
  static const Stencil vel = S({0, 0, 1, 0, 0, 1, 1, 1}), p = S({1, 0, -1, 0, 0, 1, 0, -1});
  static const Stencil dx01 = S({0, 0, 1, 0}), dy01 = S({0, 0, 0, 1});
  par_loop("viscosity", *block_, block_->interior(), k::Viscosity{}, arg_dat(*celldx_, dx01, READ),
           arg_dat(*celldy_, dy01, READ), arg_dat(*density0_, READ), arg_dat(*pressure_, p, READ),
           arg_dat(*xvel0_, vel, READ), arg_dat(*yvel0_, vel, READ), arg_dat(*viscosity_, WRITE));
}

void Clover::timestep(StepInfo& info) {
  ideal_gas(false);
  update_halo({pressure_, energy0_, density0_, xvel0_, yvel0_}, 1);
  viscosity();
  update_halo({viscosity_}, 1);
  static const Stencil vel = S({0, 0, 1, 0, 0, 1, 1, 1}), xa = S({0, 0, 1, 0}), ya = S({0, 0, 0, 1});
  Block& b = *block_;
  par_loop("calc_dt_sound", b, b.interior(), k::DtSound{deck_.dtc_safe}, arg_dat(*celldx_, READ),
           arg_dat(*celldy_, READ), arg_dat(*soundspeed_, READ), arg_dat(*viscosity_, READ),
           arg_dat(*density0_, READ), arg_dat(*work_cell_, WRITE));
  const k::DtTerms terms{deck_.dtu_safe, deck_.dtv_safe, deck_.dtdiv_safe};
  // The reductions only steer the host: recording, they run unrecorded (they write no dat).
  auto loop = [&](const std::string& name, const Range& r, const auto& kernel, const auto&... args) {
    if (active_) par_loop_passive(name, b, r, kernel, args...);
    else par_loop(name, b, r, kernel, args...);
  };
  dt_min_->reset();
  loop("calc_dt", b.interior(), terms, arg_dat(*work_cell_, READ), arg_dat(*xvel0_, vel, READ),
       arg_dat(*yvel0_, vel, READ), arg_dat(*xarea_, xa, READ), arg_dat(*yarea_, ya, READ), arg_dat(*volume_, READ),
       arg_reduce(*dt_min_));
  const double dtl = dt_min_->value();
  const auto at = dt_min_->arg();
  control_->reset();
  xpos_->reset();
  ypos_->reset();
  const Range cell{at[0], at[0] + 1, at[1], at[1] + 1};
  loop("calc_dt_control", cell, k::DtControl{terms}, arg_dat(*work_cell_, READ), arg_dat(*xvel0_, vel, READ),
       arg_dat(*yvel0_, vel, READ), arg_dat(*xarea_, xa, READ), arg_dat(*yarea_, ya, READ), arg_dat(*volume_, READ),
       arg_dat(*cellx_, READ), arg_dat(*celly_, READ), arg_reduce(*control_), arg_reduce(*xpos_),
       arg_reduce(*ypos_));
  if (dt_dat_)
    par_loop("calc_dt_set", b, cell, k::DtSet{terms, deck_.dtrise, deck_.dtmax}, arg_dat(*work_cell_, READ),
             arg_dat(*xvel0_, vel, READ), arg_dat(*yvel0_, vel, READ), arg_dat(*xarea_, xa, READ),
             arg_dat(*yarea_, ya, READ), arg_dat(*volume_, READ), arg_dat(*dt_dat_, RW));
  info.j = at[0] + 1;  // the control and position are read at the end of step()
  info.k = at[1] + 1;
  double dt = std::min({dtl, dtold_ * deck_.dtrise, deck_.dtmax});
  if (!fixed_dt_.empty()) {
    if (steps_done_ >= static_cast<int>(fixed_dt_.size()))
      throw stardiff::Error("timestep: step " + std::to_string(steps_done_ + 1) + " has no fixed dt (" +
                            std::to_string(fixed_dt_.size()) + " given)");
    dt = fixed_dt_[steps_done_];
  }
  if (dt < deck_.dtmin)
    throw stardiff::Error("timestep: small timestep " + std::to_string(dt) + " < dtmin " +
                          std::to_string(deck_.dtmin) + " at cell " + std::to_string(info.j) + "," +
                          std::to_string(info.k));
  dt_ = dt;
  dtold_ = dt;
  info.dt = dt;
}

void Clover::pdv(bool predict) {
  static const Stencil vel = S({0, 0, 1, 0, 0, 1, 1, 1}), xa = S({0, 0, 1, 0}), ya = S({0, 0, 0, 1});
  Block& b = *block_;
  if (predict && dt_dat_)
    par_loop("pdv_flux_predict", b, b.interior(), k::PdvFluxPredictD{}, arg_dat(*xarea_, xa, READ),
             arg_dat(*yarea_, ya, READ), arg_dat(*xvel0_, vel, READ), arg_dat(*yvel0_, vel, READ),
             arg_dat(*dt_dat_, READ), arg_dat(*work_cell_, WRITE));
  else if (predict)
    par_loop("pdv_flux_predict", b, b.interior(), k::PdvFluxPredict{dt_}, arg_dat(*xarea_, xa, READ),
             arg_dat(*yarea_, ya, READ), arg_dat(*xvel0_, vel, READ), arg_dat(*yvel0_, vel, READ),
             arg_dat(*work_cell_, WRITE));
  else if (dt_dat_)
    par_loop("pdv_flux_correct", b, b.interior(), k::PdvFluxCorrectD{}, arg_dat(*xarea_, xa, READ),
             arg_dat(*yarea_, ya, READ), arg_dat(*xvel0_, vel, READ), arg_dat(*yvel0_, vel, READ),
             arg_dat(*xvel1_, vel, READ), arg_dat(*yvel1_, vel, READ), arg_dat(*dt_dat_, READ),
             arg_dat(*work_cell_, WRITE));
  else
    par_loop("pdv_flux_correct", b, b.interior(), k::PdvFluxCorrect{dt_}, arg_dat(*xarea_, xa, READ),
             arg_dat(*yarea_, ya, READ), arg_dat(*xvel0_, vel, READ), arg_dat(*yvel0_, vel, READ),
             arg_dat(*xvel1_, vel, READ), arg_dat(*yvel1_, vel, READ), arg_dat(*work_cell_, WRITE));
  par_loop(predict ? "pdv_predict" : "pdv_correct", b, b.interior(), k::PdvUpdate{}, arg_dat(*volume_, READ),
           arg_dat(*work_cell_, READ), arg_dat(*density0_, READ), arg_dat(*energy0_, READ),
           arg_dat(*pressure_, READ), arg_dat(*viscosity_, READ), arg_dat(*density1_, WRITE),
           arg_dat(*energy1_, WRITE));
  if (predict) {
    ideal_gas(true);
    update_halo({pressure_}, 1);
    revert();
  }
}

void Clover::revert() {
  par_loop("revert", *block_, block_->interior(), k::Copy2{}, arg_dat(*density0_, READ), arg_dat(*energy0_, READ),
           arg_dat(*density1_, WRITE), arg_dat(*energy1_, WRITE));
}

void Clover::accelerate() {
  static const Stencil cells = S({-1, -1, 0, -1, 0, 0, -1, 0}), xa = S({0, 0, 0, -1}), ya = S({0, 0, -1, 0});
  Block& b = *block_;
  const Range nodes{0, nx_ + 1, 0, ny_ + 1};
  if (dt_dat_)
    par_loop("accelerate_mass", b, nodes, k::StepByMassD{}, arg_dat(*density0_, cells, READ),
             arg_dat(*volume_, cells, READ), arg_dat(*dt_dat_, READ), arg_dat(*stepbymass_, WRITE));
  else
    par_loop("accelerate_mass", b, nodes, k::StepByMass{0.5 * dt_}, arg_dat(*density0_, cells, READ),
             arg_dat(*volume_, cells, READ), arg_dat(*stepbymass_, WRITE));
  par_loop("accelerate_x", b, nodes, k::AccelerateX{}, arg_dat(*stepbymass_, READ), arg_dat(*xarea_, xa, READ),
           arg_dat(*pressure_, cells, READ), arg_dat(*viscosity_, cells, READ), arg_dat(*xvel0_, READ),
           arg_dat(*xvel1_, WRITE));
  par_loop("accelerate_y", b, nodes, k::AccelerateY{}, arg_dat(*stepbymass_, READ), arg_dat(*yarea_, ya, READ),
           arg_dat(*pressure_, cells, READ), arg_dat(*viscosity_, cells, READ), arg_dat(*yvel0_, READ),
           arg_dat(*yvel1_, WRITE));
}

void Clover::flux_calc() {
  static const Stencil xv = S({0, 0, 0, 1}), yv = S({0, 0, 1, 0});
  const Range r{0, nx_ + 1, 0, ny_ + 1};
  if (dt_dat_) {  // two loops (at most 8 dat arguments), the same arithmetic
    par_loop("flux_calc_x", *block_, r, k::FluxCalcD<0>{}, arg_dat(*xarea_, READ), arg_dat(*xvel0_, xv, READ),
             arg_dat(*xvel1_, xv, READ), arg_dat(*dt_dat_, READ), arg_dat(*vol_flux_x_, WRITE));
    par_loop("flux_calc_y", *block_, r, k::FluxCalcD<1>{}, arg_dat(*yarea_, READ), arg_dat(*yvel0_, yv, READ),
             arg_dat(*yvel1_, yv, READ), arg_dat(*dt_dat_, READ), arg_dat(*vol_flux_y_, WRITE));
  } else
    par_loop("flux_calc", *block_, r, k::FluxCalc{dt_}, arg_dat(*xarea_, READ), arg_dat(*yarea_, READ),
             arg_dat(*xvel0_, xv, READ), arg_dat(*yvel0_, yv, READ), arg_dat(*xvel1_, xv, READ),
             arg_dat(*yvel1_, yv, READ), arg_dat(*vol_flux_x_, WRITE), arg_dat(*vol_flux_y_, WRITE));
}

void Clover::advec_cell(int dir, int sweep) {
  static const Stencil fx = S({0, 0, 1, 0}), fy = S({0, 0, 0, 1});
  static const Stencil px = S({-1, 0, 0, 0}), py = S({0, -1, 0, 0});
  static const Stencil vx = S({-1, 0, 0, 0, 1, 0}), vy = S({0, -1, 0, 0, 0, 1});
  static const Stencil dxs = S({-2, 0, -1, 0, 0, 0, 1, 0}), dys = S({0, -2, 0, -1, 0, 0, 0, 1});
  Block& b = *block_;
  const int nx = nx_, ny = ny_;
  // pre_vol where the flux loop's donors and the update read it (the reference: all cells).
  const Range pre = dir == 0 ? Range{-1, nx + 1, 0, ny} : Range{0, nx, -1, ny + 1};
  par_loop("advec_cell_pre_vol", b, pre, k::AdvecCellPreVol{dir, sweep}, arg_dat(*volume_, READ),
           arg_dat(*vol_flux_x_, fx, READ), arg_dat(*vol_flux_y_, fy, READ), arg_dat(*pre_vol_, WRITE));
  // Faces 0..n (the reference also computes face n+1, which no loop reads before
  // update_halo overwrites it).
  if (dir == 0) {
    par_loop("advec_cell_flux_x", b, Range{0, nx + 1, 0, ny}, k::AdvecCellFlux<0>{}, arg_dat(*vol_flux_x_, READ),
             arg_dat(*pre_vol_, px, READ), arg_dat(*vertexdx_, vx, READ), arg_dat(*density1_, dxs, READ),
             arg_dat(*energy1_, dxs, READ), arg_dat(*mass_flux_x_, WRITE), arg_dat(*ener_flux_, WRITE));
    par_loop("advec_cell_x", b, b.interior(), k::AdvecCellUpdate<0>{}, arg_dat(*pre_vol_, READ),
             arg_dat(*mass_flux_x_, fx, READ), arg_dat(*ener_flux_, fx, READ), arg_dat(*vol_flux_x_, fx, READ),
             arg_dat(*density1_, RW), arg_dat(*energy1_, RW));
  } else {
    par_loop("advec_cell_flux_y", b, Range{0, nx, 0, ny + 1}, k::AdvecCellFlux<1>{}, arg_dat(*vol_flux_y_, READ),
             arg_dat(*pre_vol_, py, READ), arg_dat(*vertexdy_, vy, READ), arg_dat(*density1_, dys, READ),
             arg_dat(*energy1_, dys, READ), arg_dat(*mass_flux_y_, WRITE), arg_dat(*ener_flux_, WRITE));
    par_loop("advec_cell_y", b, b.interior(), k::AdvecCellUpdate<1>{}, arg_dat(*pre_vol_, READ),
             arg_dat(*mass_flux_y_, fy, READ), arg_dat(*ener_flux_, fy, READ), arg_dat(*vol_flux_y_, fy, READ),
             arg_dat(*density1_, RW), arg_dat(*energy1_, RW));
  }
}

void Clover::advec_mom(int dir, int sweep) {
  static const Stencil fx = S({0, 0, 1, 0}), fy = S({0, 0, 0, 1});
  static const Stencil nfx = S({0, -1, 0, 0, 1, -1, 1, 0}), nfy = S({-1, 0, 0, 0, -1, 1, 0, 1});
  static const Stencil cells = S({0, -1, 0, 0, -1, -1, -1, 0});
  static const Stencil lx = S({-1, 0, 0, 0}), ly = S({0, -1, 0, 0});
  static const Stencil mx = S({0, 0, 1, 0}), my = S({0, 0, 0, 1});
  static const Stencil cx = S({-1, 0, 0, 0, 1, 0}), cy = S({0, -1, 0, 0, 0, 1});
  static const Stencil vx = S({-1, 0, 0, 0, 1, 0, 2, 0}), vy = S({0, -1, 0, 0, 0, 1, 0, 2});
  Block& b = *block_;
  const int nx = nx_, ny = ny_;
  const int mom_sweep = (dir == 0 ? 1 : 2) + 2 * (sweep - 1);
  DatD* pv = volume_;  // mom_sweep 3 and 4: post_vol = volume
  if (mom_sweep <= 2) {
    const Range r = dir == 0 ? Range{-2, nx + 2, -1, ny + 1} : Range{-1, nx + 1, -2, ny + 2};
    par_loop("advec_mom_post_vol", b, r, k::AdvecMomPostVol{mom_sweep}, arg_dat(*volume_, READ),
             arg_dat(*vol_flux_x_, fx, READ), arg_dat(*vol_flux_y_, fy, READ), arg_dat(*post_vol_, WRITE));
    pv = post_vol_;
  }
  const Range nodes{0, nx + 1, 0, ny + 1};
  // post_vol active, or the passive volume (mom_sweep 3, 4): the kernel whose adjoint fits.
  auto node_mass = [&](const auto& on_post_vol, const auto& on_volume, const Range& r, const Stencil& lo) {
    const std::string name = dir == 0 ? "advec_mom_node_mass_x" : "advec_mom_node_mass_y";
    auto run = [&](const auto& kernel) {
      par_loop(name, b, r, kernel, arg_dat(*density1_, cells, READ), arg_dat(*pv, cells, READ),
               arg_dat(*node_flux_, lo, READ), arg_dat(*node_mass_post_, WRITE), arg_dat(*node_mass_pre_, WRITE));
    };
    if (pv->active() == density1_->active()) run(on_post_vol);
    else run(on_volume);
  };
  if (dir == 0) {
    par_loop("advec_mom_node_flux_x", b, Range{-2, nx + 2, 0, ny + 1}, k::NodeFlux<0>{},
             arg_dat(*mass_flux_x_, nfx, READ), arg_dat(*node_flux_, WRITE));
    node_mass(k::NodeMass<0>{}, k::NodeMassVolume<0>{}, Range{-1, nx + 2, 0, ny + 1}, lx);
    for (DatD* vel : {xvel1_, yvel1_}) {
      par_loop("advec_mom_flux_x", b, Range{-1, nx + 1, 0, ny + 1}, k::MomFlux<0>{}, arg_dat(*node_flux_, READ),
               arg_dat(*node_mass_pre_, mx, READ), arg_dat(*celldx_, cx, READ), arg_dat(*vel, vx, READ),
               arg_dat(*mom_flux_, WRITE));
      par_loop("advec_mom_x", b, nodes, k::MomUpdate<0>{}, arg_dat(*node_mass_pre_, READ),
               arg_dat(*mom_flux_, lx, READ), arg_dat(*node_mass_post_, READ), arg_dat(*vel, RW));
    }
  } else {
    par_loop("advec_mom_node_flux_y", b, Range{0, nx + 1, -2, ny + 2}, k::NodeFlux<1>{},
             arg_dat(*mass_flux_y_, nfy, READ), arg_dat(*node_flux_, WRITE));
    node_mass(k::NodeMass<1>{}, k::NodeMassVolume<1>{}, Range{0, nx + 1, -1, ny + 2}, ly);
    for (DatD* vel : {xvel1_, yvel1_}) {
      par_loop("advec_mom_flux_y", b, Range{0, nx + 1, -1, ny + 1}, k::MomFlux<1>{}, arg_dat(*node_flux_, READ),
               arg_dat(*node_mass_pre_, my, READ), arg_dat(*celldy_, cy, READ), arg_dat(*vel, vy, READ),
               arg_dat(*mom_flux_, WRITE));
      par_loop("advec_mom_y", b, nodes, k::MomUpdate<1>{}, arg_dat(*node_mass_pre_, READ),
               arg_dat(*mom_flux_, ly, READ), arg_dat(*node_mass_post_, READ), arg_dat(*vel, RW));
    }
  }
}

void Clover::advection() {
  const std::vector<DatD*> mom_fields{density1_, energy1_, xvel1_, yvel1_, mass_flux_x_, mass_flux_y_};
  int dir = advect_x_ ? 0 : 1;
  update_halo({energy1_, density1_, vol_flux_x_, vol_flux_y_}, 2);
  advec_cell(dir, 1);
  update_halo(mom_fields, 2);
  advec_mom(dir, 1);
  dir = advect_x_ ? 1 : 0;
  advec_cell(dir, 2);
  update_halo(mom_fields, 2);
  advec_mom(dir, 2);
}

void Clover::reset_field() {
  par_loop("reset_field_cells", *block_, block_->interior(), k::Copy2{}, arg_dat(*density1_, READ),
           arg_dat(*energy1_, READ), arg_dat(*density0_, WRITE), arg_dat(*energy0_, WRITE));
  par_loop("reset_field_nodes", *block_, Range{0, nx_ + 1, 0, ny_ + 1}, k::Copy2{}, arg_dat(*xvel1_, READ),
           arg_dat(*yvel1_, READ), arg_dat(*xvel0_, WRITE), arg_dat(*yvel0_, WRITE));
}

StepInfo Clover::step() {
  StepInfo info;
  timestep(info);
  pdv(true);
  accelerate();
  pdv(false);
  flux_calc();
  advection();
  reset_field();
  advect_x_ = !advect_x_;
  time_ += dt_;
  ++steps_done_;
  static const char* names[] = {"sound", "xvel", "yvel", "div"};
  const int c = static_cast<int>(control_->value());
  info.control = c >= 1 && c <= 4 ? names[c - 1] : "?";
  info.x = xpos_->value();
  info.y = ypos_->value();
  return info;
}

Summary Clover::summary() {
  ideal_gas(false);
  static const Stencil vel = S({0, 0, 1, 0, 0, 1, 1, 1});
  for (auto* r : {s_vol_.get(), s_mass_.get(), s_ie_.get(), s_ke_.get(), s_press_.get()}) r->reset();
  par_loop("field_summary", *block_, block_->interior(), k::FieldSummary{}, arg_dat(*volume_, READ),
           arg_dat(*density0_, READ), arg_dat(*energy0_, READ), arg_dat(*pressure_, READ),
           arg_dat(*xvel0_, vel, READ), arg_dat(*yvel0_, vel, READ), arg_reduce(*s_vol_), arg_reduce(*s_mass_),
           arg_reduce(*s_ie_), arg_reduce(*s_ke_), arg_reduce(*s_press_));
  Summary s;
  s.vol = s_vol_->value();
  s.mass = s_mass_->value();
  s.ie = s_ie_->value();
  s.ke = s_ke_->value();
  s.press = s_press_->value();
  return s;
}

}  // namespace cloverleaf

namespace cloverleaf {

bool Clover::known_objective(const std::string& n) {
  return n == "ke" || n == "ie" || n == "pressure" || n == "mass-weighted-energy";
}

double Clover::objective(const std::string& n, const Summary& s) {
  if (n == "ke") return s.ke;
  if (n == "ie") return s.ie;
  if (n == "pressure") return s.pressure();
  if (n == "mass-weighted-energy") return s.te() / s.mass;
  throw stardiff::Error("unknown objective '" + n + "' (ke, ie, pressure, mass-weighted-energy)");
}

void Clover::seed_objective(stardiff::Tape& tape, const std::string& n, const Summary& s) {
  if (n == "ke") {
    tape.seed(*s_ke_, 1.0);
  } else if (n == "ie") {
    tape.seed(*s_ie_, 1.0);
  } else if (n == "pressure") {
    tape.seed(*s_press_, 1.0 / s.vol);
    tape.seed(*s_vol_, -s.press / (s.vol * s.vol));
  } else if (n == "mass-weighted-energy") {
    tape.seed(*s_ie_, 1.0 / s.mass);
    tape.seed(*s_ke_, 1.0 / s.mass);
    tape.seed(*s_mass_, -s.te() / (s.mass * s.mass));
  } else {
    throw stardiff::Error("unknown objective '" + n + "' (ke, ie, pressure, mass-weighted-energy)");
  }
}

}  // namespace cloverleaf
