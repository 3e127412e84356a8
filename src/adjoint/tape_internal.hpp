// SPDX-License-Identifier: LGPL-2.1-or-later
// src/adjoint/tape_internal.hpp — the tape's snapshot type and whole-tile checkpoints (shared by
// tape.cpp, tape_steps.cpp and fixed_point.cpp).
#pragma once
#include <string>
#include <vector>

#include "stardiff/adjoint/tape.hpp"

namespace stardiff {

// One copy of every state dat's tile buffers (ghost rows included), as StarPU vector handles.
struct Tape::Snapshot {
  std::vector<mesh::Checkpoint> parts;  // dat, tile, bytes = the whole tile buffer
};

// A checkpoint of tile t of d covering its whole buffer (ghost rows included): a new
// Handle::managed_vector named `name` (StarPU may evict it); nothing is copied into it yet.
mesh::Checkpoint whole_tile_checkpoint(mesh::DatBase& d, int t, const std::string& name);

}  // namespace stardiff
