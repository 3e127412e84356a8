// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/cloverleaf/clover.hpp — CloverLeaf 1.3's 2-D hydro cycle on the stardiff mesh DSL.
//
// Contract: Clover holds one chunk: a Block of x_cells x y_cells cells (tiled along y)
// and the reference's fields at their true sizes with halo depth 2 (loop indices are
// 0-based; the reference's cell j is index j-1): cell fields nx x ny, node fields
// (nx+1) x (ny+1), x-face fields (nx+1) x ny, y-face fields nx x (ny+1); vertexx,
// vertexdx, cellx, celldx are dats along x only, vertexy, vertexdy, celly, celldy along
// y only. Every operation on the mesh is a par_loop; the host only reads reductions.
// tiles: row tiles, at most y_cells / 2 (each tile keeps >= 2 rows: halo depth 2); 0 takes
// the mesh's default (Block: 2 per worker, 2 per worker per rank under StarPU-MPI, whose
// block distribution along y then gives every rank rows when y_cells allows).
//  * initialise(): initialise_chunk + generate_chunk + ideal_gas + update_halo(all, 2).
//  * step(): one hydro cycle (timestep, PdV predictor, accelerate, PdV corrector,
//    flux_calc, advection with the alternating sweep order, reset_field); returns the
//    dt used and the control that set it (the limit of the cell with the smallest dt, as
//    the reference's calc_dt names it, with that cell's 1-based index and centre).
//  * summary(): field_summary (ideal_gas, then SUM reductions over the cells).
//  * update_halo(): reflective boundaries with the reference's offsets and sign flips
//    (normal velocity and face fluxes change sign), for depth 1 or 2.
// The step lines of CloverLeaf 1.3's Fortran kernels always name "sound" at cell (1,1)
// (calc_dt_kernel.f90 fixes jk_control); here the limit and cell are the real arg-min.
// dt below dtmin throws stardiff::Error ("small timestep"). Results do not depend on
// the tiling or executor (reductions fold row by row in a fixed order).
// Recording (active = true: every field has an adjoint; the mesh geometry (volume, xarea,
// yarea and the axis dats: constants of the deck) stays passive unless active_geometry, for
// tests of the set-up loops' adjoints; the kernels' adjoints take it passive, kernels.hpp):
// initialise() is generate()
// (mesh and generate_chunk, never recorded: the inputs are the fields it sets) then
// initialise_fields() (ideal_gas and the halo update: recorded as the tape's prefix).
// The calc_dt reductions only steer the host (dt, the control, the cell that set dt) and
// run unrecorded. With active_dt, dt is also a dat lacking both axes (dt_dat()), updated
// by a one-point loop at the cell that set dt (kern::DtSet: the same arithmetic as the
// host's, so the value is bitwise the host's) and read by every kernel using dt: the
// tape then differentiates through calc_dt's MIN and clamps. Without it (--passive-dt)
// the kernels take dt as the constant of the run, as OPS does. state() lists the dats a
// step reads that an earlier step wrote (the tape's step state). fix_dt(h) makes step k
// use h[k] instead of calc_dt's value (the program with dt held fixed), for checks.
// seed_objective() seeds the final summary()'s reductions for an objective.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <stardiff/adjoint/tape.hpp>
#include <stardiff/mesh/dat.hpp>
#include <stardiff/mesh/scalars.hpp>

#include "deck.hpp"
#include "kernels.hpp"

namespace cloverleaf {

struct Summary {
  double vol = 0, mass = 0, press = 0, ie = 0, ke = 0;
  double density() const { return mass / vol; }
  double pressure() const { return press / vol; }
  double te() const { return ie + ke; }
};

struct StepInfo {
  double dt = 0;
  std::string control;  // sound, xvel, yvel, div
  int j = 0, k = 0;     // 1-based cell of the control
  double x = 0, y = 0;  // its centre
};

class Clover {
 public:
  using DatD = stardiff::mesh::Dat<double>;
  // active: every dat gets an adjoint (for a tape recording the cycle); the primal
  // driver runs passive dats (no adjoint storage).
  Clover(stardiff::Executor& ex, const Deck& deck, int tiles, bool active = false, bool active_dt = false,
         bool active_geometry = false);
  ~Clover();
  void initialise() {
    generate();
    initialise_fields();
  }
  void generate();
  void initialise_fields();
  std::vector<DatD*> state();
  void fix_dt(std::vector<double> h) { fixed_dt_ = std::move(h); }
  // Objectives of the final field summary: ke, ie, pressure (press / vol), or
  // mass-weighted-energy ((ie + ke) / mass, the mass-weighted mean specific total energy).
  static bool known_objective(const std::string& name);
  static double objective(const std::string& name, const Summary& s);
  // Seeds the reductions of the last summary() (recorded on `tape`) with d objective / d reduction.
  void seed_objective(stardiff::Tape& tape, const std::string& name, const Summary& s);
  DatD* dt_dat() { return dt_dat_; }
  StepInfo step();
  Summary summary();
  int tiles() const { return block_->tiles(); }
  int owner(int t) const { return block_->owner(t); }  // StarPU-MPI rank of tile t
  double time() const { return time_; }
  int nx() const { return nx_; }
  int ny() const { return ny_; }

  // Cell and node fields for output (values at loop indices; halo included).
  DatD& density0() { return *density0_; }
  DatD& energy0() { return *energy0_; }
  DatD& pressure() { return *pressure_; }
  DatD& xvel0() { return *xvel0_; }
  DatD& yvel0() { return *yvel0_; }
  // The deck's states as generate_chunk applies them (cell and node membership tests).
  kern::StateTable state_table() const;
  void ideal_gas(bool predict);

 private:
  friend struct CloverTestAccess;  // apps/cloverleaf/test_kernel_adjoints.cpp: the loops one by one
  enum class Shape { Cell, Node, XFace, YFace };
  struct HaloField {
    DatD* f;
    Shape shape;
    double sign_x, sign_y;  // applied on the x sides (left/right) and y sides (bottom/top)
  };
  DatD& make(const std::string& name, Shape s, bool mirror = false, bool geometry = false);
  void update_halo(const std::vector<DatD*>& fields, int depth);
  void reflect(const std::vector<HaloField>& group, int depth);
  void timestep(StepInfo& info);
  void viscosity();
  void pdv(bool predict);
  void revert();
  void accelerate();
  void flux_calc();
  void advection();
  void advec_cell(int dir, int sweep);
  void advec_mom(int dir, int sweep);
  void reset_field();

  Deck deck_;
  bool active_, active_dt_, active_geometry_;
  DatD* dt_dat_ = nullptr;
  std::vector<double> fixed_dt_;
  int steps_done_ = 0;
  int nx_, ny_;
  double dx_, dy_;
  std::unique_ptr<stardiff::mesh::Block> block_;
  std::vector<std::unique_ptr<DatD>> dats_;
  struct Meta {  // reflect()'s scratch: the y sides' mirror (the field's size; only its halo
    Shape shape;  // rows are written) and the x sides' (2 columns at base -2 and at N)
    DatD *mirror_y, *mirror_xlo, *mirror_xhi;
  };
  std::vector<std::pair<DatD*, Meta>> meta_;
  DatD *density0_, *density1_, *energy0_, *energy1_, *pressure_, *viscosity_, *soundspeed_;
  DatD *xvel0_, *xvel1_, *yvel0_, *yvel1_, *vol_flux_x_, *vol_flux_y_, *mass_flux_x_, *mass_flux_y_;
  DatD *volume_, *xarea_, *yarea_;
  DatD *vertexx_, *vertexdx_, *vertexy_, *vertexdy_, *cellx_, *celldx_, *celly_, *celldy_;
  DatD *work_cell_, *pre_vol_, *post_vol_, *ener_flux_, *node_flux_, *node_mass_post_, *node_mass_pre_, *mom_flux_,
      *stepbymass_;
  std::unique_ptr<stardiff::mesh::Reduction<double>> dt_min_, control_, xpos_, ypos_;
  std::unique_ptr<stardiff::mesh::Reduction<double>> s_vol_, s_mass_, s_ie_, s_ke_, s_press_;
  double time_ = 0, dt_ = 0, dtold_ = 0;
  bool advect_x_ = true;
};

}  // namespace cloverleaf
