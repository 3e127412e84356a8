// SPDX-License-Identifier: LGPL-2.1-or-later
// codelets/cpu/mesh/tridiag_box.hpp — the box and array descriptors of the batched
// tridiagonal kernels, shared by the CPU kernels (tridiag.hpp) and their CUDA twins
// (codelets/cuda/mesh/tridiag.cuh). Plain structs; their meaning is stated in tridiag.hpp.
#pragma once

namespace stardiff::cpu {

struct TridiagBox {
  long long n[3];  // extents (a 2-D box has n[2] = 1)
  int axis;        // the solve axis, 0, 1 or 2
};
struct TridiagArray {
  double* p;       // element (0,0,0)
  long long s[3];  // element strides
};
struct TridiagConstArray {
  const double* p;
  long long s[3];
};

}  // namespace stardiff::cpu
