// SPDX-License-Identifier: LGPL-2.1-or-later
// src/core/amd_graph.hpp — SuiteSparse AMD on a graph the caller has already built.
//
// Contract: amd_graph(n, p, idx, info) orders the symmetric pattern given as CSC of A + A^T
// without its diagonal (column j: idx[p[j] .. p[j+1]), no duplicates; rows need not be
// sorted) and returns perm (perm[k] = the k-th vertex eliminated). It calls amd_2 directly,
// as CHOLMOD does, on a copy with 20 % elbow room: amd_order would rebuild and re-check
// exactly this pattern first. info (optional, AMD_INFO doubles) receives AMD's statistics
// (AMD_LNZ, AMD_NDIV, AMD_NMULTSUBS_LDL, ...). A graph without edges keeps the identity.
#pragma once
#include <vector>

namespace stardiff::detail {

std::vector<int> amd_graph(int n, const int* p, const int* idx, double* info = nullptr);

}  // namespace stardiff::detail
