// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/cloverleaf/deck.hpp — CloverLeaf 1.3 input decks (clover.in format).
//
// Contract: read_deck(path) parses the lines between `*clover` and `*endclover` the way
// CloverLeaf's parser does (case-insensitive; `!` and `;` start comments; `=` and `,`
// separate like blanks; `key value` or `key=value`). Known keys: state (with density,
// energy, xvel, yvel, geometry=rectangle|circle|point, xmin, xmax, ymin, ymax, radius),
// x_cells, y_cells, xmin, xmax, ymin, ymax, initial_timestep, timestep_rise, max_timestep,
// end_time, end_step, summary_frequency, visit_frequency, tiles_per_chunk,
// tiles_per_problem, test_problem, profiler_on, use_fortran_kernels, use_c_kernels,
// use_oa_kernels. Defaults are CloverLeaf's; x_cells, y_cells, xmin, xmax, ymin, ymax are
// required. Unknown keys are collected in Deck::warnings ("FILE:LINE: ...").
// Throws DeckError ("FILE:LINE: what") for: a file that cannot be read, no `*clover`, a
// missing `*endclover`, a key without its value, a value that is not a number (integers
// for counts), cells <= 0, xmax <= xmin, end_time <= 0, end_step <= 0, timesteps <= 0,
// summary_frequency < 0, a state index < 1, a state defined twice, states not numbered
// 1..N, a state without density or energy, state 1 with a geometry (it is the
// background), a state >= 2 without geometry, a rectangle with xmax <= xmin, a circle
// without radius > 0, more than kMaxStates states, a missing required key (named at the
// `*endclover` line).
// Like CloverLeaf (read_input.f90), states 2..N have their boxes shrunk by dx/100 and
// dy/100 on each side (xmin += dx/100, xmax -= dx/100, ...) after reading.
#pragma once
#include <climits>
#include <stdexcept>
#include <string>
#include <vector>

namespace cloverleaf {

inline constexpr int kMaxStates = 16;

struct DeckError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class Geometry : int { None = 0, Rectangle = 1, Circle = 2, Point = 3 };

struct State {
  double density = 0, energy = 0, xvel = 0, yvel = 0;
  double xmin = 0, xmax = 0, ymin = 0, ymax = 0, radius = 0;
  Geometry geometry = Geometry::None;
  int line = 0;  // deck line that defined it
};

struct Deck {
  std::string path;
  int x_cells = 10, y_cells = 10;
  double xmin = 0, ymin = 0, xmax = 100, ymax = 100;
  double dtinit = 0.1, dtmax = 1.0, dtmin = 1e-7, dtrise = 1.5;
  double dtc_safe = 0.7, dtu_safe = 0.5, dtv_safe = 0.5, dtdiv_safe = 0.7;
  double end_time = 10.0;
  int end_step = INT_MAX;
  int summary_frequency = 10, visit_frequency = 0, tiles_per_chunk = 1, test_problem = 0;
  bool profiler_on = false;
  std::vector<State> states;          // states[0] is state 1 (the background)
  std::vector<std::string> warnings;  // unknown keys
};

Deck read_deck(const std::string& path);
Deck parse_deck(const std::string& text, const std::string& name);

}  // namespace cloverleaf
