// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/cloverleaf/vtk.hpp — the legacy-VTK rectilinear grid of a deck's mesh.
//
// Contract: write_vtk_grid(out, deck, title) writes the header, the x_cells+1 by y_cells+1
// vertex coordinates (%.17g) and the CELL_DATA line; the caller then writes its SCALARS
// (cells in x-fastest order) and POINT_DATA sections.
#pragma once
#include <cstdio>
#include <ostream>

#include "deck.hpp"

namespace cloverleaf {

inline void write_vtk_grid(std::ostream& out, const Deck& d, const char* title) {
  const int nx = d.x_cells, ny = d.y_cells;
  const double dx = (d.xmax - d.xmin) / nx, dy = (d.ymax - d.ymin) / ny;
  char buf[64];
  out << "# vtk DataFile Version 3.0\n" << title << "\nASCII\nDATASET RECTILINEAR_GRID\n";
  out << "DIMENSIONS " << nx + 1 << " " << ny + 1 << " 1\n";
  out << "X_COORDINATES " << nx + 1 << " double\n";
  for (int j = 0; j <= nx; ++j) {
    std::snprintf(buf, sizeof buf, "%.17g\n", d.xmin + dx * j);
    out << buf;
  }
  out << "Y_COORDINATES " << ny + 1 << " double\n";
  for (int k = 0; k <= ny; ++k) {
    std::snprintf(buf, sizeof buf, "%.17g\n", d.ymin + dy * k);
    out << buf;
  }
  out << "Z_COORDINATES 1 double\n0\n";
  out << "CELL_DATA " << static_cast<long long>(nx) * ny << "\n";
}

}  // namespace cloverleaf
