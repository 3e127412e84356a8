// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/mesh.hpp — umbrella of the structured-mesh DSL (blocks, dats, stencils, loops).
#pragma once
#include "stardiff/mesh/block.hpp"
#include "stardiff/mesh/dat.hpp"
#include "stardiff/mesh/par_loop.hpp"
#include "stardiff/mesh/recorder.hpp"
#include "stardiff/mesh/scalars.hpp"
