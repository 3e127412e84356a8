// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/mesh/block.hpp — structured blocks, iteration ranges and stencils (OPS model).
//
// Contract:
//  * A Block is a 1-, 2- or 3-D index space of size[0..dims) points with an Executor that
//    every loop over it submits to. It fixes the tiling: the outermost dimension
//    (x in 1-D, y in 2-D, z in 3-D) is split into `tiles` contiguous row ranges
//    [bound(t), bound(t+1)); every Dat on the block is stored as one handle per tile.
//    tiles = 0 picks 2 per worker of the executor (1 where exec.concurrency() is 1),
//    clipped so that every tile keeps at least one row.
//  * StarPU-MPI distribution: tile t's data (every dat's tile t, reduction and scalar
//    partials) is owned by rank owner(t); by default a block distribution along the outer
//    axis (owner(t) = t * ranks / tiles; all 0 without MPI). set_owners changes it for
//    dats, reductions and scalars made afterwards (one rank per tile, each in [0, ranks));
//    a loop over dats of different distributions is rejected at submission (Error).
//    Under MPI with more than one rank, tiles = 0 picks 2 per worker per rank.
//  * A Range is a box [lo[d], hi[d]) in block coordinates (may reach into halos).
//  * A Stencil is a list of integer offsets, one per dimension of its block.
#pragma once
#include <array>
#include <initializer_list>
#include <string>
#include <vector>

#include "stardiff/runtime/error.hpp"
#include "stardiff/runtime/executor.hpp"

namespace stardiff::mesh {

struct Range {
  std::array<int, 3> lo{0, 0, 0};
  std::array<int, 3> hi{1, 1, 1};
  Range() = default;
  // OPS style: {x0, x1, y0, y1, z0, z1} for as many dimensions as given.
  Range(std::initializer_list<int> bounds);
  long long points(int dims) const;
  std::string str(int dims) const;
};

class Block {
 public:
  Block(Executor& exec, std::string name, std::vector<int> size, int tiles = 0);
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  const std::string& name() const { return name_; }
  int dims() const { return dims_; }
  int outer() const { return dims_ - 1; }
  int size(int d) const { return size_[d]; }
  int tiles() const { return static_cast<int>(bounds_.size()) - 1; }
  // First block row of tile t along the outer dimension (bound(tiles()) = size(outer)).
  int bound(int t) const { return bounds_[t]; }
  Range interior() const;  // [0, size) in every dimension
  Executor& executor() const { return *exec_; }
  int owner(int t) const { return owners_.at(t); }
  const std::vector<int>& owners() const { return owners_; }
  void set_owners(std::vector<int> owners);

 private:
  Executor* exec_;
  std::string name_;
  int dims_;
  std::array<int, 3> size_{1, 1, 1};
  std::vector<int> bounds_;
  std::vector<int> owners_;
};

class Stencil {
 public:
  // points: offsets, dims entries per point, e.g. {0,0, 1,0, -1,0, 0,1, 0,-1}.
  Stencil(int dims, std::vector<int> points, std::string name = {});
  static Stencil zero(int dims);  // the single point (0,...)
  int dims() const { return dims_; }
  int npoints() const { return static_cast<int>(pts_.size()) / dims_; }
  int offset(int p, int d) const { return pts_[p * dims_ + d]; }
  int min(int d) const { return min_[d]; }
  int max(int d) const { return max_[d]; }
  bool is_zero() const;  // every offset is 0
  const std::string& name() const { return name_; }

 private:
  int dims_;
  std::vector<int> pts_;
  std::array<int, 3> min_{0, 0, 0}, max_{0, 0, 0};
  std::string name_;
};

}  // namespace stardiff::mesh
