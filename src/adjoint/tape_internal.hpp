// SPDX-License-Identifier: LGPL-2.1-or-later
// src/adjoint/tape_internal.hpp — the tape's snapshot type (shared by tape.cpp and tape_steps.cpp).
#pragma once
#include <vector>

#include "stardiff/adjoint/tape.hpp"

namespace stardiff {

// One copy of every state dat's tile buffers (ghost rows included), as StarPU vector handles.
struct Tape::Snapshot {
  std::vector<mesh::Checkpoint> parts;  // dat, tile, bytes = the whole tile buffer
};

}  // namespace stardiff
