// stardiff/forward.hpp — forward-mode AD: dual numbers, column colouring, sparse Jacobians.
#pragma once
#include "stardiff/forward/coloring.hpp"
#include "stardiff/forward/dual.hpp"
#include "stardiff/forward/row_range.hpp"
#include "stardiff/forward/sparse_jacobian.hpp"
