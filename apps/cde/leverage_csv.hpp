// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/cde/leverage_csv.hpp — reads a leverage surface L(t, s) from CSV.
//
// Format: lines starting with '#' and blank lines are skipped; the first other line is a
// header "label,s_1,...,s_M" (the label is ignored, s_m the spot nodes); each further line is
// "t_k,L(t_k,s_1),...,L(t_k,s_M)" (t_k calendar time in years). Every cell must be a whole
// number. Throws stardiff::Error naming the line on a malformed cell, a row with missing or
// extra nodes, or no rows; check_leverage (cde_solver.hpp) then checks signs and axis order.
#pragma once
#include <string>

#include "cde_solver.hpp"

namespace stardiff::cde {

Leverage read_leverage_csv(const std::string& path);

}  // namespace stardiff::cde
