// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/mesh/dat.hpp — data on a block (OPS ops_dat), stored as one handle per tile.
//
// Contract:
//  * Dat<T> on a Block has `size` points per dimension (default: the block's), a base
//    (block index of its element 0, default 0), halo depths d_m / d_p per dimension,
//    `dim` components per point (interleaved) and is active (has an adjoint) or passive.
//    Valid loop indices of dimension d are [base - d_m, base + size + d_p).
//  * Storage: x fastest (after components), then y, then z. Tile t of the block owns
//    outer rows [bound(t), bound(t+1)) (tile 0 also the lower halo rows, the last tile
//    the upper ones) and holds d_m / d_p ghost rows copied from its neighbours.
//    Ghost rows are refreshed by halo-exchange tasks before a loop that reads across a
//    tile boundary; the adjoint's ghost rows collect increments and are always zero
//    outside a reverse exchange. Every tile must own >= max(d_m, d_p, 1) outer rows.
//  * Host access (set, values, adjoint, set_adjoint) waits for the tiles' tasks.
//    adjoint() throws Error while a tape holding the dat has recorded but not reversed.
//    DatView holds a full copy (halo included) indexed by loop indices.
//  * Low-dimensional dats (DatOptions::axes lists the dimensions the dat varies along):
//    along a missing axis the dat has size 1, base 0, no halo, and every loop index reads
//    that one element (stride 0: READ broadcasts; a write needs the loop's range to be
//    one index there, any index: that point writes the one element). DatOptions::no_axes
//    makes a dat lacking every axis (one value per component, e.g. a time step read by
//    every point and written by a loop over one point). A dat lacking the outer axis is not tiled: one handle serves every
//    tile's task (tile(t), geom(t) ignore t); its READ adjoints go to per-tile partials
//    added in tile order. A dat lacking only inner axes is tiled with row length 1 there.
//    set() / values() use index 0 along missing axes (DatView broadcasts them too).
//  * StarPU-MPI: tile t (primal, adjoint, adjoint partials) is owned by block().owner(t)
//    as it was when the dat was made (owners()); an untiled dat by rank 0. On a distributed
//    executor (Executor::distributed()) a rank allocates host memory only for the tiles it
//    owns (local_bytes()); StarPU-MPI allocates copies of other ranks' tiles where a task
//    needs them. A halo exchange between tiles of two ranks moves only the ghost rows
//    (pack, send, unpack; the reverse exchange adds them in the same order: same bits).
//    Host access is collective (every rank calls it): set* writes on the owner
//    only, values()/adjoint() bring every tile to every rank for the copy and drop the
//    copies of other ranks' tiles afterwards.
#pragma once
#include <array>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "stardiff/mesh/block.hpp"
#include "stardiff/mesh/recorder.hpp"
#include "stardiff/runtime/handle.hpp"

namespace stardiff::mesh {

struct Halo {
  std::array<int, 3> m{0, 0, 0}, p{0, 0, 0};
  Halo() = default;
  explicit Halo(int depth) : m{depth, depth, depth}, p{depth, depth, depth} {}
  Halo(std::array<int, 3> minus, std::array<int, 3> plus) : m(minus), p(plus) {}
};

struct DatOptions {
  int dim = 1;               // components per point
  bool active = true;        // has an adjoint
  std::vector<int> size{};   // default: the block's size
  std::vector<int> base{};   // default: 0
  std::vector<int> axes{};   // dimensions the dat varies along (default: all); see above
  bool no_axes = false;      // lacks every axis (axes must then be empty); see above
};

// Element layout of one tile, as loop kernels see it (trivially copyable).
struct TileGeom {
  long long origin = 0;               // element offset of loop index (0,0,0) in the tile buffer
  long long s[3] = {0, 0, 0};         // element strides per dimension (s[0] = dim)
};

template <class T>
struct DatView {
  std::vector<T> data;
  int dims = 1, dim = 1;
  std::array<int, 3> lo{0, 0, 0}, ext{1, 1, 1};  // first loop index and extent per dimension
  std::array<bool, 3> bcast{false, false, false};  // missing axes: any index reads index 0
  T operator()(int i, int j = 0, int k = 0, int c = 0) const {
    return data[index(i, j, k, c)];
  }
  std::size_t index(int i, int j = 0, int k = 0, int c = 0) const {
    if (bcast[0]) i = lo[0];
    if (bcast[1]) j = lo[1];
    if (bcast[2]) k = lo[2];
    return static_cast<std::size_t>(c) +
           dim * (static_cast<std::size_t>(i - lo[0]) +
                  ext[0] * (static_cast<std::size_t>(j - lo[1]) + ext[1] * static_cast<std::size_t>(k - lo[2])));
  }
};

class DatBase : public Tracked {
 public:
  DatBase(Block& block, std::string name, Halo halo, DatOptions opts, std::size_t elemsize);
  virtual ~DatBase();
  DatBase(const DatBase&) = delete;
  DatBase& operator=(const DatBase&) = delete;

  Block& block() const { return *block_; }
  const std::string& name() const { return name_; }
  int dims() const { return dims_; }
  int dim() const { return dim_; }
  bool active() const { return active_; }
  std::size_t elemsize() const { return elemsize_; }
  int size(int d) const { return size_[d]; }
  int base(int d) const { return base_[d]; }
  int d_m(int d) const { return dm_[d]; }
  int d_p(int d) const { return dp_[d]; }
  int first(int d) const { return base_[d] - dm_[d]; }              // lowest valid loop index
  int last(int d) const { return base_[d] + size_[d] + dp_[d]; }    // one past the highest
  int tiles() const { return static_cast<int>(tiles_.size()); }  // 1 when not tiled
  bool has_axis(int d) const { return has_[d]; }                 // false: broadcast along d
  bool tiled() const { return has_[dims_ - 1]; }
  long long row_len() const { return stride_[dims_ - 1]; }          // elements per outer row
  std::size_t tile_rows(int t) const;                               // rows held (ghosts included)
  // First loop row held by tile t's buffer (outer dimension).
  int tile_first_row(int t) const { return row0_[t] - dm_[dims_ - 1] + base_[dims_ - 1]; }
  TileGeom geom(int t) const;  // strides 0 along missing axes
  Handle& tile(int t) { return tiles_.at(tiled() ? t : 0); }
  Handle& adjoint_tile(int t);
  // Untiled dats: tile t's partial of a READ adjoint (the loop task zeroes it), and
  // the task adding the partials of `tiles` into the adjoint, in that order.
  Handle& adjoint_partial(int t);
  void sum_adjoint_partials(const std::vector<int>& tiles, const std::string& loop);
  std::size_t bytes() const;  // primal storage (ghosts included)
  // Host memory this rank allocated for tiles (primal, adjoint, adjoint partials, halo strips).
  std::size_t local_bytes() const { return local_bytes_; }

  // Ghost-row state (used by loops and the tape).
  bool ghosts_stale() const { return stale_; }
  void mark_written() { stale_ = true; }
  // Submits halo-exchange tasks if ghost rows are stale (no-op with one tile).
  void exchange_halos();
  // Submits reverse exchange tasks: adjoint ghost rows added into their owners (fixed
  // order: even boundaries, then odd), ghosts zeroed.
  void reverse_exchange_adjoint();
  // Submits tasks setting the whole adjoint (ghosts included) to zero.
  void zero_adjoint();
  int id() const { return id_; }
  // StarPU-MPI owner of each block tile's data when the dat was made (Block::owners()).
  const std::vector<int>& owners() const { return owners_; }

 protected:
  void host_copy_out(bool adjoint, void* dst);                  // full padded array
  void host_fill(bool adjoint, const std::function<void(void* dst, int i, int j, int k)>& f,
                 bool zero_ghosts);

  Block* block_;
  std::string name_;
  int dims_, dim_;
  bool active_;
  std::size_t elemsize_;
  std::array<int, 3> size_{1, 1, 1}, base_{0, 0, 0}, dm_{0, 0, 0}, dp_{0, 0, 0}, pext_{1, 1, 1};
  std::array<bool, 3> has_{true, true, true};
  std::array<long long, 3> stride_{0, 0, 0};
  std::vector<int> row0_;  // interior rows (element coordinates) of tile t: [row0_[t], row0_[t+1])
  std::vector<Handle> tiles_, adj_tiles_;
  std::vector<void*> mem_, adj_mem_, part_mem_;
  std::vector<Handle> adj_part_;
  bool stale_ = false;
  int id_;
  std::vector<int> owners_;
  std::size_t local_bytes_ = 0;

 private:
  bool local(int owner) const;  // this rank holds the tiles of `owner` in its own memory
  // Distributed executor, tiles t and t+1 on two ranks: halo exchanges move ghost rows
  // through strips (one per boundary and direction, owned by the sending tile's rank).
  bool across_ranks(int t) const;
  enum { kFwdUp, kFwdDown, kRevUp, kRevDown };
  Handle& strip(int kind, int t, int owner, std::size_t bytes);
  std::map<int, Handle> strips_;
  std::vector<void*> strip_mem_;
  Handle tile_handle(int owner, std::size_t n, const std::string& name, std::vector<void*>& mem);
  void fill_tile(int t, void* data, const std::function<void(void*, int, int, int)>& f, bool zero_ghosts);
};

template <class T>
class Dat : public DatBase {
 public:
  Dat(Block& block, std::string name, Halo halo = Halo{}, DatOptions opts = {})
      : DatBase(block, std::move(name), halo, std::move(opts), sizeof(T)) {}

  // Sets every point (halo included) from f(i, j, k) (component c from f for dim 1;
  // use set_components for dim > 1).
  void set(const std::function<T(int, int, int)>& f) {
    host_fill(false, [&](void* dst, int i, int j, int k) {
      T* p = static_cast<T*>(dst);
      for (int c = 0; c < dim_; ++c) p[c] = f(i, j, k);
    }, false);
  }
  void set_components(const std::function<T(int, int, int, int)>& f) {
    host_fill(false, [&](void* dst, int i, int j, int k) {
      T* p = static_cast<T*>(dst);
      for (int c = 0; c < dim_; ++c) p[c] = f(i, j, k, c);
    }, false);
  }
  DatView<T> values() { return view(false); }
  // The adjoint (halo included); raw per-tile access: adjoint_tile(t).
  DatView<T> adjoint() { return view(true); }
  void set_adjoint(const std::function<T(int, int, int, int)>& f) {
    host_fill(true, [&](void* dst, int i, int j, int k) {
      T* p = static_cast<T*>(dst);
      for (int c = 0; c < dim_; ++c) p[c] = f(i, j, k, c);
    }, true);
  }

 private:
  DatView<T> view(bool adj) {
    DatView<T> v;
    v.dims = dims_;
    v.dim = dim_;
    std::size_t n = dim_;
    for (int d = 0; d < 3; ++d) {
      v.lo[d] = d < dims_ ? first(d) : 0;
      v.ext[d] = pext_[d];
      v.bcast[d] = d < dims_ && !has_[d];
      n *= pext_[d];
    }
    v.data.resize(n);
    host_copy_out(adj, v.data.data());
    return v;
  }
};

}  // namespace stardiff::mesh
