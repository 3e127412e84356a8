// SPDX-License-Identifier: LGPL-2.1-or-later
// src/mesh/block.cpp — Block tiling, Range and Stencil (see stardiff/mesh/block.hpp).
#include "stardiff/mesh/block.hpp"

#include <algorithm>
#include <cstdlib>


namespace stardiff::mesh {

Range::Range(std::initializer_list<int> bounds) {
  require(bounds.size() % 2 == 0 && bounds.size() >= 2 && bounds.size() <= 6,
          "stardiff::mesh::Range: give {lo, hi} pairs for 1 to 3 dimensions");
  auto it = bounds.begin();
  for (std::size_t d = 0; d < bounds.size() / 2; ++d) {
    lo[d] = *it++;
    hi[d] = *it++;
  }
}

long long Range::points(int dims) const {
  long long n = 1;
  for (int d = 0; d < dims; ++d) n *= std::max(0, hi[d] - lo[d]);
  return n;
}

std::string Range::str(int dims) const {
  std::string s = "[";
  for (int d = 0; d < dims; ++d) {
    if (d) s += " x ";
    s += std::to_string(lo[d]) + "," + std::to_string(hi[d]) + ")";
  }
  return s + "]";
}

Block::Block(Executor& exec, std::string name, std::vector<int> size, int tiles)
    : exec_(&exec), name_(std::move(name)), dims_(static_cast<int>(size.size())) {
  require(dims_ >= 1 && dims_ <= 3, "stardiff::mesh::Block '" + name_ + "': 1, 2 or 3 dimensions, got " +
                                        std::to_string(dims_));
  for (int d = 0; d < dims_; ++d) {
    require(size[d] >= 1, "stardiff::mesh::Block '" + name_ + "': size in dimension " + std::to_string(d) +
                              " must be >= 1, got " + std::to_string(size[d]));
    size_[d] = size[d];
  }
  require(tiles >= 0, "stardiff::mesh::Block '" + name_ + "': tiles must be >= 0");
  if (tiles == 0) {
    // 2 tiles per worker keeps a few tasks per worker per loop (load balance) while each
    // task streams many rows (task overhead stays far below the work).
    const int workers = exec.concurrency(), ranks = mpi_size();
    tiles = workers <= 1 && ranks == 1 ? 1 : 2 * workers * ranks;
  }
  int rows = size_[dims_ - 1];
  tiles = std::min(tiles, rows);
  bounds_.resize(tiles + 1);
  for (int t = 0; t <= tiles; ++t) bounds_[t] = static_cast<int>((static_cast<long long>(rows) * t) / tiles);
  owners_.resize(tiles);
  const int ranks = mpi_size();
  for (int t = 0; t < tiles; ++t) owners_[t] = static_cast<int>((static_cast<long long>(t) * ranks) / tiles);
}

void Block::set_owners(std::vector<int> owners) {
  require(static_cast<int>(owners.size()) == tiles(), "stardiff::mesh::Block '" + name_ + "': set_owners needs " +
                                                          std::to_string(tiles()) + " ranks (one per tile), got " +
                                                          std::to_string(owners.size()));
  for (int r : owners)
    require(r >= 0 && r < mpi_size(), "stardiff::mesh::Block '" + name_ + "': set_owners: rank " + std::to_string(r) +
                                          " is not in [0, " + std::to_string(mpi_size()) + ")");
  owners_ = std::move(owners);
}

Range Block::interior() const {
  Range r;
  for (int d = 0; d < dims_; ++d) {
    r.lo[d] = 0;
    r.hi[d] = size_[d];
  }
  return r;
}

Stencil::Stencil(int dims, std::vector<int> points, std::string name)
    : dims_(dims), pts_(std::move(points)), name_(std::move(name)) {
  require(dims >= 1 && dims <= 3, "stardiff::mesh::Stencil '" + name_ + "': 1 to 3 dimensions");
  require(!pts_.empty() && pts_.size() % dims == 0,
          "stardiff::mesh::Stencil '" + name_ + "': point list length must be a positive multiple of " +
              std::to_string(dims));
  for (int d = 0; d < dims; ++d) {
    min_[d] = max_[d] = pts_[d];
    for (int p = 0; p < npoints(); ++p) {
      min_[d] = std::min(min_[d], offset(p, d));
      max_[d] = std::max(max_[d], offset(p, d));
    }
  }
}

Stencil Stencil::zero(int dims) { return Stencil(dims, std::vector<int>(dims, 0), "zero"); }

bool Stencil::is_zero() const {
  return std::all_of(pts_.begin(), pts_.end(), [](int v) { return v == 0; });
}

}  // namespace stardiff::mesh
