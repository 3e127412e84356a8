// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/sparse.hpp — umbrella for the sparse LDL^T module.
#pragma once
#include "stardiff/sparse/csc_matrix.hpp"
#include "stardiff/sparse/ldlt.hpp"
#include "stardiff/sparse/matrix_market.hpp"
