// SPDX-License-Identifier: LGPL-2.1-or-later
// src/mesh/dat.cpp — tiled storage of a Dat, halo exchanges, host copies (see dat.hpp).
#include "stardiff/mesh/dat.hpp"
#include "stardiff/mesh/par_loop.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <utility>

#include <sys/mman.h>

#include "starpu/mesh/cl_halo.hpp"

namespace stardiff::mesh {
namespace {
std::atomic<int> g_next_id{1};

// Tile buffers. Small ones (< 64 KiB) are 64-byte aligned heap blocks zeroed here. Larger
// ones are anonymous mappings: zero pages that the kernel fills on first touch, so memory a
// dat never touches (the interior of a dat only its halo rows are written to) costs nothing
// and the first loop writing a tile places it. With huge_pages() (par_loop.hpp), buffers of at
// least half a huge page are rounded up to whole huge pages, start on a huge-page boundary and
// are advised for transparent huge pages (MADV_HUGEPAGE, advisory: without THP they are plain
// pages), so streaming loops take one TLB entry per 2 MiB instead of per 4 KiB.
// release_zeroed() frees either kind. Under AddressSanitizer every buffer is a heap block
// (its redzones catch a kernel reading or writing past a tile).
constexpr std::size_t kHugePage = std::size_t(2) << 20;
#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kMapMin = ~std::size_t(0);
#else
constexpr std::size_t kMapMin = std::size_t(64) << 10;
#endif
std::mutex g_maps_mutex;
std::unordered_map<void*, std::pair<void*, std::size_t>> g_maps;  // buffer -> (mapping, length)
void* alloc_zeroed(std::size_t bytes) {
  std::size_t n = ((bytes + 63) / 64) * 64;
  if (n == 0) n = 64;
  auto oom = [&] { return Error("stardiff::mesh::Dat: out of memory allocating " + std::to_string(n) + " bytes"); };
  if (n < kMapMin) {
    void* p = nullptr;
    if (posix_memalign(&p, 64, n) != 0 || p == nullptr) throw oom();
    std::memset(p, 0, n);
    return p;
  }
  const bool huge = n >= kHugePage / 2 && huge_pages();
  if (huge) n = (n + kHugePage - 1) / kHugePage * kHugePage;
  const std::size_t len = huge ? n + kHugePage : n;
  void* m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw oom();
  void* p = m;
  if (huge) {
    const auto a = (reinterpret_cast<std::uintptr_t>(m) + kHugePage - 1) / kHugePage * kHugePage;
    p = reinterpret_cast<void*>(a);
    madvise(p, n, MADV_HUGEPAGE);  // advisory: failure is harmless
  }
  std::lock_guard<std::mutex> lock(g_maps_mutex);
  g_maps.emplace(p, std::make_pair(m, len));
  return p;
}
void release_zeroed(void* p) {
  if (!p) return;
  {
    std::lock_guard<std::mutex> lock(g_maps_mutex);
    auto it = g_maps.find(p);
    if (it != g_maps.end()) {
      munmap(it->second.first, it->second.second);
      g_maps.erase(it);
      return;
    }
  }
  std::free(p);
}
}  // namespace

DatBase::DatBase(Block& block, std::string name, Halo halo, DatOptions opts, std::size_t elemsize)
    : block_(&block), name_(std::move(name)), dims_(block.dims()), dim_(opts.dim), active_(opts.active),
      elemsize_(elemsize), id_(g_next_id++), owners_(block.owners()) {
  const std::string who = "stardiff::mesh::Dat '" + name_ + "'";
  require(dim_ >= 1, who + ": dim (components per point) must be >= 1");
  require(opts.size.empty() || static_cast<int>(opts.size.size()) == dims_,
          who + ": size needs " + std::to_string(dims_) + " entries (the block's dimensions)");
  require(opts.base.empty() || static_cast<int>(opts.base.size()) == dims_,
          who + ": base needs " + std::to_string(dims_) + " entries (the block's dimensions)");
  require(!opts.no_axes || opts.axes.empty(), who + ": no_axes and axes both given");
  if (opts.no_axes) {
    has_ = {false, false, false};
    for (int d = dims_; d < 3; ++d) has_[d] = true;
  } else if (!opts.axes.empty()) {
    has_ = {false, false, false};
    for (int d : opts.axes) {
      require(d >= 0 && d < dims_, who + ": axis " + std::to_string(d) + " is not a dimension of block '" +
                                       block.name() + "' (" + std::to_string(dims_) + "-D)");
      require(!has_[d], who + ": axis " + std::to_string(d) + " listed twice");
      has_[d] = true;
    }
    for (int d = dims_; d < 3; ++d) has_[d] = true;
  }
  for (int d = 0; d < dims_; ++d) {
    size_[d] = opts.size.empty() ? block.size(d) : opts.size[d];
    base_[d] = opts.base.empty() ? 0 : opts.base[d];
    dm_[d] = halo.m[d];
    dp_[d] = halo.p[d];
    if (!has_[d]) {
      require(opts.size.empty() || size_[d] == 1,
              who + ": lacks axis " + std::to_string(d) + ", so its size there must be 1");
      require(base_[d] == 0, who + ": lacks axis " + std::to_string(d) + ", so its base there must be 0");
      size_[d] = 1;
      dm_[d] = dp_[d] = 0;  // broadcast: no halo
    }
    require(size_[d] >= 1, who + ": size in dimension " + std::to_string(d) + " must be >= 1");
    require(dm_[d] >= 0 && dp_[d] >= 0, who + ": halo depths must be >= 0");
    pext_[d] = size_[d] + dm_[d] + dp_[d];
  }
  stride_[0] = dim_;
  stride_[1] = stride_[0] * pext_[0];
  stride_[2] = stride_[1] * pext_[1];
  const int o = dims_ - 1, nt = has_[o] ? block.tiles() : 1;
  row0_.resize(nt + 1);
  row0_[0] = 0;
  row0_[nt] = size_[o];
  for (int t = 1; t < nt; ++t) row0_[t] = block.bound(t) - base_[o];
  const int need = std::max({dm_[o], dp_[o], 1});
  for (int t = 0; t < nt; ++t) {
    int rows = row0_[t + 1] - row0_[t];
    if (rows < need)
      throw Error(who + ": tile " + std::to_string(t) + " of block '" + block.name() + "' would hold " +
                  std::to_string(rows) + " rows along dimension " + std::to_string(o) +
                  ", fewer than max(halo depth, 1) = " + std::to_string(need) + "; use fewer tiles");
  }
  for (int t = 0; t < nt; ++t) {
    std::size_t n = tile_rows(t) * static_cast<std::size_t>(row_len());
    const int owner = has_[o] ? owners_[t] : 0;
    tiles_.push_back(tile_handle(owner, n, name_ + "[" + std::to_string(t) + "]", mem_));
    if (active_) adj_tiles_.push_back(tile_handle(owner, n, name_ + "_a1s[" + std::to_string(t) + "]", adj_mem_));
  }
}

bool DatBase::local(int owner) const { return !block_->executor().distributed() || owner == mpi_rank(); }

Handle DatBase::tile_handle(int owner, std::size_t n, const std::string& name, std::vector<void*>& mem) {
  if (local(owner)) {
    mem.push_back(alloc_zeroed(n * elemsize_));
    local_bytes_ += n * elemsize_;
  } else {
    mem.push_back(nullptr);  // another rank's tile: StarPU-MPI allocates a copy when a task here needs it
  }
  Handle h = mem.back() ? Handle::vector(mem.back(), n, elemsize_, name) : Handle::managed_vector(n, elemsize_, name);
  h.set_owner(owner);
  return h;
}

DatBase::~DatBase() {
  notify_destroyed("dat '" + name_ + "'");
  tiles_.clear();  // unregister (waits for tasks) before the memory goes
  adj_tiles_.clear();
  for (void* p : mem_) release_zeroed(p);
  for (void* p : adj_mem_) release_zeroed(p);
  adj_part_.clear();
  for (void* p : part_mem_) release_zeroed(p);
  strips_.clear();
  for (void* p : strip_mem_) release_zeroed(p);
}

std::size_t DatBase::tile_rows(int t) const {
  const int o = dims_ - 1;
  return static_cast<std::size_t>(row0_[t + 1] - row0_[t] + dm_[o] + dp_[o]);
}

TileGeom DatBase::geom(int t) const {
  TileGeom g;
  const int o = dims_ - 1;
  if (!tiled()) t = 0;
  long long origin = 0;
  for (int d = 0; d < o; ++d) origin += static_cast<long long>(dm_[d] - base_[d]) * stride_[d];
  origin += static_cast<long long>(dm_[o] - row0_[t] - base_[o]) * stride_[o];
  g.origin = origin;
  for (int d = 0; d < 3; ++d) g.s[d] = d < dims_ && has_[d] ? stride_[d] : 0;
  return g;
}

Handle& DatBase::adjoint_tile(int t) {
  require(active_, "stardiff::mesh::Dat '" + name_ + "' is passive: it has no adjoint");
  adj_dirty_ = true;
  return adj_tiles_.at(tiled() ? t : 0);
}

Handle& DatBase::adjoint_partial(int t) {
  require(active_, "stardiff::mesh::Dat '" + name_ + "' is passive: it has no adjoint");
  while (static_cast<int>(adj_part_.size()) <= t) {
    const std::size_t n = tile_rows(0) * static_cast<std::size_t>(row_len());
    const int i = static_cast<int>(adj_part_.size());
    adj_part_.push_back(tile_handle(owners_.at(i), n, name_ + "_a1s_part[" + std::to_string(i) + "]", part_mem_));
  }
  return adj_part_[t];
}

void DatBase::sum_adjoint_partials(const std::vector<int>& tiles, const std::string& loop) {
  adj_dirty_ = true;
  for (int t : tiles)
    codelets::insert_add_into(block_->executor(), adj_tiles_.at(0), adj_part_.at(t), elemsize_,
                              loop + ":sum_" + name_ + "_a1s");
}

std::size_t DatBase::bytes() const {
  std::size_t b = 0;
  for (int t = 0; t < tiles(); ++t) b += tile_rows(t) * row_len() * elemsize_;
  return b;
}

void DatBase::exchange_halos() {
  const int o = dims_ - 1;
  if (!stale_) return;
  stale_ = false;
  if (tiles() < 2 || (dm_[o] == 0 && dp_[o] == 0)) return;
  Executor& ex = block_->executor();
  const std::size_t rb = row_len() * elemsize_;
  for (int parity = 0; parity < 2; ++parity)
    for (int t = parity; t + 1 < tiles(); t += 2) {
      const std::size_t n_lo = row0_[t + 1] - row0_[t];
      if (!across_ranks(t)) {
        codelets::insert_halo_exchange(ex, tiles_[t], tiles_[t + 1], n_lo, rb, dm_[o], dp_[o], "halo_" + name_);
        continue;
      }
      // Tiles on two ranks: only the ghost rows travel, as strips owned by the sending tile's rank.
      if (dm_[o] > 0) {  // lo's last d_m rows -> hi's lower ghosts
        Handle& up = strip(kFwdUp, t, tiles_[t].owner(), dm_[o] * rb);
        codelets::insert_rows_copy(ex, tiles_[t], n_lo * rb, up, 0, dm_[o] * rb, true, "halo_pack_" + name_);
        codelets::insert_rows_copy(ex, up, 0, tiles_[t + 1], 0, dm_[o] * rb, false, "halo_unpack_" + name_);
      }
      if (dp_[o] > 0) {  // hi's first d_p rows -> lo's upper ghosts
        Handle& down = strip(kFwdDown, t, tiles_[t + 1].owner(), dp_[o] * rb);
        codelets::insert_rows_copy(ex, tiles_[t + 1], dm_[o] * rb, down, 0, dp_[o] * rb, true, "halo_pack_" + name_);
        codelets::insert_rows_copy(ex, down, 0, tiles_[t], (dm_[o] + n_lo) * rb, dp_[o] * rb, false,
                                   "halo_unpack_" + name_);
      }
    }
}

bool DatBase::across_ranks(int t) const {
  return block_->executor().distributed() && tiles_[t].owner() != tiles_[t + 1].owner();
}

Handle& DatBase::strip(int kind, int t, int owner, std::size_t bytes) {
  auto it = strips_.find(4 * t + kind);
  if (it != strips_.end()) return it->second;
  static const char* what[] = {"up", "down", "a1s_up", "a1s_down"};
  const std::string name = name_ + "_strip_" + what[kind] + "[" + std::to_string(t) + "]";
  return strips_.emplace(4 * t + kind, tile_handle(owner, bytes / elemsize_, name, strip_mem_)).first->second;
}

void DatBase::reverse_exchange_adjoint() {
  const int o = dims_ - 1;
  if (!active_ || tiles() < 2 || (dm_[o] == 0 && dp_[o] == 0)) return;
  Executor& ex = block_->executor();
  const std::size_t rb = row_len() * elemsize_;
  for (int parity = 0; parity < 2; ++parity)
    for (int t = parity; t + 1 < tiles(); t += 2) {
      const std::size_t n_lo = row0_[t + 1] - row0_[t];
      if (!across_ranks(t)) {
        codelets::insert_halo_reverse(ex, adj_tiles_[t], adj_tiles_[t + 1], n_lo, row_len(), elemsize_, dm_[o],
                                      dp_[o], "halo_reverse_" + name_ + "_a1s");
        continue;
      }
      // Tiles on two ranks: the ghost rows' adjoints travel as strips, added in
      // halo_reverse_add_cpu's order (hi's first rows, then lo's last rows): same bits.
      if (dp_[o] > 0) {  // lo's upper ghosts added into hi's first d_p rows
        Handle& a = strip(kRevUp, t, adj_tiles_[t].owner(), dp_[o] * rb);
        codelets::insert_rows_take(ex, adj_tiles_[t], (dm_[o] + n_lo) * rb, a, dp_[o] * rb,
                                   "halo_reverse_pack_" + name_ + "_a1s");
        codelets::insert_rows_add(ex, adj_tiles_[t + 1], dm_[o] * rb, a, dp_[o] * rb, elemsize_,
                                  "halo_reverse_add_" + name_ + "_a1s");
      }
      if (dm_[o] > 0) {  // hi's lower ghosts added into lo's last d_m rows
        Handle& b = strip(kRevDown, t, adj_tiles_[t + 1].owner(), dm_[o] * rb);
        codelets::insert_rows_take(ex, adj_tiles_[t + 1], 0, b, dm_[o] * rb, "halo_reverse_pack_" + name_ + "_a1s");
        codelets::insert_rows_add(ex, adj_tiles_[t], n_lo * rb, b, dm_[o] * rb, elemsize_,
                                  "halo_reverse_add_" + name_ + "_a1s");
      }
    }
}

void DatBase::zero_adjoint() {
  if (!active_) return;
  adj_dirty_ = false;
  for (auto& h : adj_tiles_) codelets::insert_fill_zero(block_->executor(), h, "zero_" + name_ + "_a1s");
}

namespace {
void check_not_in_external(const std::string& dat) {
  if (const char* ext = running_external())
    throw Error("external function '" + std::string(ext) + "' accessed dat '" + dat + "', which it did not declare");
}
}  // namespace

void DatBase::host_copy_out(bool adjoint, void* dst) {
  check_not_in_external(name_);
  require(!adjoint || active_, "stardiff::mesh::Dat '" + name_ + "' is passive: it has no adjoint");
  if (adjoint) require_adjoint_ready("stardiff::mesh::Dat '" + name_ + "'");
  const int o = dims_ - 1, nt = tiles();
  const std::size_t rb = row_len() * elemsize_;
  for (int t = 0; t < nt; ++t) {
    Handle& h = adjoint ? adj_tiles_[t] : tiles_[t];
    {
      auto guard = h.acquire(Access::R);
      int e0 = t == 0 ? -dm_[o] : row0_[t];
      int e1 = t == nt - 1 ? size_[o] + dp_[o] : row0_[t + 1];
      int local0 = e0 - (row0_[t] - dm_[o]);
      std::memcpy(static_cast<unsigned char*>(dst) + static_cast<std::size_t>(e0 + dm_[o]) * rb,
                  static_cast<const unsigned char*>(guard.data()) + static_cast<std::size_t>(local0) * rb,
                  static_cast<std::size_t>(e1 - e0) * rb);
    }
    // Distributed: the ranks that do not own the tile free the copy this read brought them.
    if (block_->executor().distributed()) h.drop_remote_copies();
  }
}

void DatBase::host_fill(bool adjoint, const std::function<void(void*, int, int, int)>& f, bool zero_ghosts) {
  check_not_in_external(name_);
  require(!adjoint || active_, "stardiff::mesh::Dat '" + name_ + "' is passive: it has no adjoint");
  if (adjoint) adj_dirty_ = true;
  const int nt = tiles();
  const bool dist = block_->executor().distributed();
  for (int t = 0; t < nt; ++t) {
    Handle& h = adjoint ? adj_tiles_[t] : tiles_[t];
    if (dist) {
      // The owner alone writes the tile (every element: W, no collective read first); the
      // other ranks drop whatever copy of it they hold.
      if (local(h.owner())) fill_tile(t, h.acquire(Access::W).data(), f, zero_ghosts);
      h.drop_remote_copies();
    } else {
      fill_tile(t, h.acquire(Access::RW).data(), f, zero_ghosts);
    }
  }
  if (!adjoint) stale_ = false;
}

void DatBase::fill_tile(int t, void* data, const std::function<void(void*, int, int, int)>& f, bool zero_ghosts) {
  const int o = dims_ - 1, nt = tiles();
  const std::size_t rb = row_len() * elemsize_;
  {
    auto* buf = static_cast<unsigned char*>(data);
    const int first = row0_[t] - dm_[o];
    for (int r = 0; r < static_cast<int>(tile_rows(t)); ++r) {
      const int e = first + r;
      const bool ghost = (t > 0 && e < row0_[t]) || (t < nt - 1 && e >= row0_[t + 1]);
      unsigned char* row = buf + static_cast<std::size_t>(r) * rb;
      if (ghost && zero_ghosts) {
        std::memset(row, 0, rb);
        continue;
      }
      std::array<int, 3> idx{0, 0, 0};
      idx[o] = e + base_[o];
      const int ny = o >= 2 ? pext_[1] : 1, nx = o >= 1 ? pext_[0] : 1;
      for (int b = 0; b < ny; ++b)
        for (int a = 0; a < nx; ++a) {
          if (o >= 1) idx[0] = a - dm_[0] + base_[0];
          if (o >= 2) idx[1] = b - dm_[1] + base_[1];
          f(row + (static_cast<std::size_t>(a) * stride_[0] + static_cast<std::size_t>(b) * stride_[1]) * elemsize_,
            idx[0], idx[1], idx[2]);
        }
    }
  }
}

}  // namespace stardiff::mesh
