// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/cloverleaf/adjoint.hpp — the gradient of a final field-summary quantity of a
// CloverLeaf run with respect to the initial fields, by the loop-level tape.
//
// Contract: run_adjoint(ex, deck, tiles, steps, dts, options) records the run of `steps`
// hydro steps (the primal's count; dts its dt history, to check the recording against
// and to hold dt fixed with passive_dt) on an active Clover: generate_chunk unrecorded,
// then the prefix (initialise_fields), a step mark per step over Clover::state(), and the
// final summary as the tail. Checkpointing: snapshots <= 0 save-all, else
// Checkpointing::revolve_exact(steps, snapshots) (the steps run untaped save nothing).
// active dt (default): the derivative of the program as it runs, through calc_dt's MIN and
// clamps; passive_dt: dt held at the run's values.
// Results: the objective J, the gradient with respect to density0, energy0 (cells) and
// xvel0, yvel0 (nodes) as they are after generate_chunk (interior points; halo points
// are overwritten by the first halo update: their gradient is 0), per deck state the
// gradient summed over the cells (nodes) generate_chunk gave that state (the derivative
// of J with respect to its density, energy, xvel, yvel values), the tape's figures and
// times, an FNV-1a hash of the gradient bytes (bitwise comparisons), and on request
// central differences of J in each state's density and energy values (rel step fd_step;
// the perturbed programs rerun with the same step count, with passive_dt at the recorded
// dts) and a Taylor test of the whole gradient (taylor) along a random direction that is
// uniform inside each state (see run_adjoint: other directions meet the limiters' kinks);
// dot_test: a dot-product test of the map initial fields -> final fields (density0,
// energy0, xvel0, yvel0, interior) along that direction: <J v, w> by central differences
// (relative step 1e-6) against <v, J^T w> from a second recording seeded with random w.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <stardiff/adjoint/gradient_check.hpp>
#include <stardiff/runtime/executor.hpp>

#include "clover.hpp"
#include "deck.hpp"

namespace cloverleaf {

struct AdjointOptions {
  std::string objective = "ke";
  int snapshots = 0;  // <= 0: save-all
  bool passive_dt = false;
  double fd_step = 0;  // > 0: central differences of the states' values
  bool taylor = false;
  bool dot_test = false;  // <J v, w> (central differences) against <v, J^T w> on the final fields
};

struct StateGradient {
  double density = 0, energy = 0, xvel = 0, yvel = 0;
};

struct AdjointResult {
  double J = 0;
  Summary summary;
  bool recorded_matches_primal = false;
  std::string checkpointing;
  std::int64_t recomputed_steps = 0;
  int snapshots = 0;
  std::size_t peak_bytes = 0, peak_snapshot_bytes = 0;
  double forward_s = 0, adjoint_s = 0;
  std::vector<StateGradient> dstate, fd;  // fd: central differences (density, energy)
  std::string gradient_hash;
  // Interior gradients (cells nx x ny, nodes (nx+1) x (ny+1), x fastest).
  std::vector<double> g_density, g_energy, g_xvel, g_yvel;
  bool has_taylor = false;
  stardiff::TaylorTest taylor;
  bool has_dot = false;
  double dot_jv_w = 0, dot_v_jtw = 0, dot_rel_diff = 0;
};

AdjointResult run_adjoint(stardiff::Executor& ex, const Deck& deck, int tiles, int steps,
                          const std::vector<double>& dts, const AdjointOptions& opt);

// Final summary of `steps` steps from the deck's initial fields plus h times the direction
// (per field, interior points; null: none); dts non-empty: dt held at those values.
Summary run_primal(stardiff::Executor& ex, const Deck& deck, int tiles, int steps, const std::vector<double>& dts,
                   const std::vector<std::vector<double>>* direction = nullptr, double h = 0);

void write_gradient_vtk(const std::string& path, const Deck& deck, const AdjointResult& r);

}  // namespace cloverleaf
