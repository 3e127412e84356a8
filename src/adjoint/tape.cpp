// SPDX-License-Identifier: LGPL-2.1-or-later
// src/adjoint/tape.cpp — recording, checkpoint saves and the reverse sweep (see tape.hpp);
// time steps and checkpointing strategies: tape_steps.cpp.
#include "stardiff/adjoint/tape.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "adjoint/tape_internal.hpp"
#include "stardiff/adjoint/fixed_point.hpp"
#include "stardiff/mesh/par_loop.hpp"
#include "starpu/mesh/cl_halo.hpp"

namespace stardiff {

using mesh::LoopArgDesc;

namespace {
bool env_check_adjoint_reads() {
  const char* e = std::getenv("STARDIFF_CHECK_ADJOINT_READS");
  return e != nullptr && *e != '\0' && std::strcmp(e, "0") != 0;
}
}  // namespace

Tape::Tape(std::string name, SavePolicy policy) : name_(std::move(name)), policy_(policy) {
  if (policy_ == SavePolicy::Needed && env_check_adjoint_reads()) policy_ = SavePolicy::Verify;
}

Tape::~Tape() {
  if (open_fp_) open_fp_->detach();
  stop();
  unlink_all();
}

void Tape::unlink_all() {
  for (auto* d : dats_) d->unlink(this);
  for (auto* r : reds_) r->unlink(this);
  for (auto* s : scalars_) s->unlink(this);
  for (auto* d : state_) d->unlink(this);  // the state is linked by step(), maybe before any loop
}

void Tape::forget(const void* object, const std::string& what) {
  auto drop = [&](auto& v) {
    for (auto it = v.begin(); it != v.end(); ++it)
      if (static_cast<const void*>(static_cast<const mesh::Tracked*>(*it)) == object) {
        v.erase(it);
        return true;
      }
    return false;
  };
  bool held = drop(dats_) || drop(reds_) || drop(scalars_);
  held = drop(state_) || held;
  for (auto it = needed_.begin(); it != needed_.end();)
    it = static_cast<const void*>(static_cast<const mesh::Tracked*>(*it)) == object ? needed_.erase(it) : std::next(it);
  for (auto it = reads_.begin(); it != reads_.end();)
    it = static_cast<const void*>(static_cast<const mesh::Tracked*>(it->first)) == object ? reads_.erase(it)
                                                                                            : std::next(it);
  if (held && !nodes_.empty() && !reversed_ && destroyed_.empty()) destroyed_ = what;
}

void Tape::check_alive(const std::string& op) const {
  require(broken_.empty(), op + ": tape '" + name_ + "': " + broken_ + " (clear() the tape)");
  require(destroyed_.empty(), op + ": " + destroyed_ + " was destroyed while tape '" + name_ +
                                  "' held loops recorded on it (clear() the tape)");
}

void Tape::see(mesh::Tracked* object) {
  object->link(this);
}

void Tape::start() {
  require(!reversed_, "Tape::start: tape '" + name_ + "' was reversed; clear() it before recording again");
  mesh::Recorder* r = mesh::active_recorder();
  require(r == nullptr || r == this, "Tape::start: another tape is recording (one at a time)");
  mesh::set_active_recorder(this);
}

void Tape::stop() {
  if (mesh::active_recorder() == this) mesh::set_active_recorder(nullptr);
}

bool Tape::recording() const { return mesh::active_recorder() == this; }

// Adds p to v the first time; then links it to the tape and (unless accumulating) zeroes
// an adjoint that may be non-zero.
template <class P>
static bool add_unique(std::vector<P*>& v, P* p) {
  if (std::find(v.begin(), v.end(), p) != v.end()) return false;
  v.push_back(p);
  return true;
}

// The column runs of tile t of d that a loop writing [lo, hi) (stencil widened) covers, when
// they are narrower than whole outer rows: the axes below the outer one all present, and some
// of them not covered whole. false: save whole rows.
static bool column_runs(const mesh::DatBase& d, const LoopArgDesc& a, int t, const int lo[3], const int hi[3],
                        mesh::Checkpoint& c) {
  const int o = d.dims() - 1;
  if (o < 1 || o > 2) return false;
  for (int k = 0; k <= o; ++k)
    if (!d.has_axis(k)) return false;
  int l[3], h[3];
  for (int k = 0; k <= o; ++k) {
    l[k] = lo[k];
    h[k] = hi[k];
    if (k < o) {
      l[k] = std::max(lo[k] + a.st_min[k], d.first(k));
      h[k] = std::min(hi[k] + a.st_max[k], d.last(k));
    }
    if (h[k] <= l[k]) return false;
  }
  int c0 = 0;  // leading axes covered whole
  while (c0 < o && l[c0] == d.first(c0) && h[c0] == d.last(c0)) ++c0;
  if (c0 == o) return false;
  const mesh::TileGeom g = d.geom(t);
  const std::size_t es = d.elemsize();
  long long off = g.origin;
  for (int k = 0; k <= o; ++k) off += static_cast<long long>(l[k]) * g.s[k];
  if (off < 0) return false;
  c.offset = static_cast<std::size_t>(off) * es;
  c.run = static_cast<std::size_t>(h[c0] - l[c0]) * static_cast<std::size_t>(g.s[c0]) * es;
  c.n1 = static_cast<std::size_t>(h[c0 + 1] - l[c0 + 1]);
  c.stride1 = static_cast<std::size_t>(g.s[c0 + 1]) * es;
  c.n2 = 1;
  c.stride2 = 0;
  if (c0 + 2 <= o) {
    c.n2 = static_cast<std::size_t>(h[c0 + 2] - l[c0 + 2]);
    c.stride2 = static_cast<std::size_t>(g.s[c0 + 2]) * es;
  }
  c.bytes = c.run * c.n1 * c.n2;
  return true;
}

static codelets::Runs runs_of(const mesh::Checkpoint& c) {
  codelets::Runs r;
  r.off = c.offset;
  r.run = c.run;
  r.n1 = c.n1;
  r.stride1 = c.stride1;
  r.n2 = c.n2;
  r.stride2 = c.stride2;
  return r;
}

// Saves what a.dat's points that `loop` writes, tile by tile: the written column runs when
// the loop writes part of each row (column_runs), else the written rows whole (a pooled
// buffer of the same size when one is free).
void Tape::save_dat(mesh::RecordedLoop& loop, const LoopArgDesc& a) {
  Executor& ex = loop.block->executor();
  const std::size_t rb = static_cast<std::size_t>(a.dat->row_len()) * a.dat->elemsize();
  for (int t = 0; t < loop.block->tiles(); ++t) {
    int lo[3], hi[3];
    if (!mesh::detail::tile_range(*loop.block, loop.range, t, lo, hi)) continue;
    const int o = loop.block->outer();
    mesh::Checkpoint shape;
    if (!column_runs(*a.dat, a, t, lo, hi, shape)) {
      // A dat lacking the outer axis has one row (a one-index range writes it, any index).
      const int first = a.dat->tile_first_row(a.dat->tiled() ? t : 0);  // an untiled dat has one buffer
      const int row = a.dat->has_axis(o) ? lo[o] : first;
      shape.offset = static_cast<std::size_t>(row - first) * rb;
      shape.bytes = static_cast<std::size_t>(hi[o] - lo[o]) * rb;
    }
    const std::size_t bytes = shape.bytes;
    mesh::Checkpoint c;
    const int owner = a.dat->tile(t).owner();  // StarPU-MPI: the save stays on the tile's rank
    auto it = std::find_if(pool_.begin(), pool_.end(),
                           [&](const mesh::Checkpoint& p) { return p.bytes == bytes && p.buffer->owner() == owner; });
    if (it != pool_.end()) {
      c = std::move(*it);
      *it = std::move(pool_.back());
      pool_.pop_back();
      pool_bytes_ -= bytes;
    }
    c.dat = a.dat;
    c.tile = t;
    c.offset = shape.offset;
    c.bytes = bytes;
    c.run = shape.run;
    c.n1 = shape.n1;
    c.stride1 = shape.stride1;
    c.n2 = shape.n2;
    c.stride2 = shape.stride2;
    if (!c.buffer) {
      c.buffer = std::make_unique<Handle>(
          Handle::managed_vector(c.bytes, 1, loop.name + ":save_" + a.dat->name() + "[" + std::to_string(t) + "]"));
      c.buffer->set_owner(owner);
    }
    if (c.run > 0)
      codelets::insert_runs_copy(ex, a.dat->tile(t), *c.buffer, runs_of(c), true, loop.name + ":save_" + a.dat->name());
    else
      codelets::insert_rows_copy(ex, a.dat->tile(t), c.offset, *c.buffer, 0, c.bytes, true,
                                 loop.name + ":save_" + a.dat->name());
    bytes_ += c.bytes;
    loop.saves.push_back(std::move(c));
  }
  note_bytes();
}

void Tape::before_loop(mesh::RecordedLoop& loop) {
  Executor& ex = loop.block->executor();
  if (checkpointed() && boundaries_ > 0 && loop.block != &state_.front()->block())
    throw Error("Tape '" + name_ + "': loop '" + loop.name + "' on block '" + loop.block->name() +
                "' runs inside a checkpointed step, but the state (dat '" + state_.front()->name() +
                "') lives on block '" + state_.front()->block().name() + "'");
  loop.verify_reads = policy_ == SavePolicy::Verify;
  // revolve_exact: a step the schedule runs untaped (a boundary before the declared end, not
  // the firstturn) needs no saves.
  const bool untaped = ckpt_.exact && boundaries_ > 0 && tentative_.has_value() && !pending_taped_;
  auto first_seen = [&](auto* p) {
    see(p);
    if (!accumulate_ && p->adjoint_dirty()) p->zero_adjoint();
  };
  for (std::size_t i = 0; i < loop.args.size(); ++i) {
    LoopArgDesc& a = loop.args[i];
    if (a.kind == LoopArgDesc::Kind::Dat) {
      if (add_unique(dats_, a.dat)) first_seen(a.dat);
      a.poison = loop.verify_reads && !a.adjoint_reads;
      if (!a.writes()) continue;
      const bool own = (a.mode == mesh::Mode::RW || a.mode == mesh::Mode::Inc) && a.adjoint_reads;
      if (own) needed_.insert(a.dat);
      // External functions keep the dat-level rule (some recorded adjoint reads the dat).
      a.save = policy_ == SavePolicy::All || own ||
               (loop.exact_extents() ? read_since_write(a.dat, touched(loop, a)) : needed_.count(a.dat) > 0);
      if (untaped || !a.save) continue;
      save_dat(loop, a);
    } else if (a.kind == LoopArgDesc::Kind::Reduce) {
      if (add_unique(reds_, a.red)) first_seen(a.red);
      const std::string base = loop.name + ":" + a.red->name();
      loop.red_pre[i] = a.red->make_like(base + "_pre");
      loop.red_post[i] = a.red->make_like(base + "_post");
      loop.red_eff[i] = a.red->make_like(base + "_a1s_loop");
      codelets::insert_rows_copy(ex, a.red->value_handle(), 0, *loop.red_pre[i], 0, a.red->record_bytes(), true,
                                 base + "_save_pre");
      bytes_ += 3 * a.red->record_bytes();
      note_bytes();
    } else if (a.kind == LoopArgDesc::Kind::Scalar) {
      if (add_unique(scalars_, a.scalar)) first_seen(a.scalar);
    }
  }
  note_writes_and_reads(loop);
}

// The loop-index box argument a of `loop` touches in its dat (a read: widened by the
// stencil): the whole axis along axes the dat lacks, and the whole dat when the node's
// extents are not exact (external functions).
Tape::Box Tape::touched(const mesh::RecordedLoop& loop, const LoopArgDesc& a) {
  Box b;
  for (int k = 0; k < 3; ++k) {
    if (!loop.exact_extents() || !a.dat->has_axis(k)) {
      b.lo[k] = std::numeric_limits<int>::min();
      b.hi[k] = std::numeric_limits<int>::max();
      continue;
    }
    const bool read = a.mode == mesh::Mode::Read;
    b.lo[k] = loop.range.lo[k] + (read ? a.st_min[k] : 0);
    b.hi[k] = loop.range.hi[k] + (read ? a.st_max[k] : 0);
  }
  return b;
}

bool Tape::read_since_write(const mesh::DatBase* d, const Box& w) const {
  auto it = reads_.find(d);
  if (it == reads_.end()) return false;
  for (const Box& r : it->second) {
    bool meet = true;
    for (int k = 0; k < 3; ++k) meet = meet && std::max(r.lo[k], w.lo[k]) < std::min(r.hi[k], w.hi[k]);
    if (meet) return true;
  }
  return false;
}

// After a loop: its writes (exact extents only) cover the reads inside them; its READ
// arguments whose primal the adjoint reads add their boxes.
void Tape::note_writes_and_reads(const mesh::RecordedLoop& loop) {
  for (const auto& a : loop.args) {
    if (!a.writes() || !loop.exact_extents()) continue;
    auto it = reads_.find(a.dat);
    if (it == reads_.end()) continue;
    const Box w = touched(loop, a);
    auto& v = it->second;
    v.erase(std::remove_if(v.begin(), v.end(),
                           [&](const Box& r) {
                             for (int k = 0; k < 3; ++k)
                               if (r.lo[k] < w.lo[k] || r.hi[k] > w.hi[k]) return false;
                             return true;
                           }),
            v.end());
  }
  for (const auto& a : loop.args)
    if (a.kind == LoopArgDesc::Kind::Dat && a.mode == mesh::Mode::Read && a.adjoint_reads) {
      needed_.insert(a.dat);
      const Box b = touched(loop, a);
      auto& v = reads_[a.dat];
      if (std::find_if(v.begin(), v.end(), [&](const Box& r) { return r.lo == b.lo && r.hi == b.hi; }) == v.end())
        v.push_back(b);
    }
}

void Tape::after_loop(std::unique_ptr<mesh::RecordedLoop> loop) {
  Executor& ex = loop->block->executor();
  for (std::size_t i = 0; i < loop->args.size(); ++i) {
    auto& a = loop->args[i];
    if (a.kind == LoopArgDesc::Kind::Reduce)
      codelets::insert_rows_copy(ex, a.red->value_handle(), 0, *loop->red_post[i], 0, a.red->record_bytes(), true,
                                 loop->name + ":" + a.red->name() + "_save_post");
  }
  bytes_ += loop->kept_bytes();
  note_bytes();
  nodes_.push_back(std::move(loop));
}

void Tape::check_seed(const std::string& what) const {
  check_alive("Tape::seed(" + what + ")");
  require(!nodes_.empty(), "Tape::seed(" + what + "): tape '" + name_ +
                               "' has recorded nothing (start() it before the loops to differentiate)");
  require(!reversed_, "Tape::seed(" + what + "): tape '" + name_ + "' was already reversed");
}

void Tape::adopt(Tape& inner) {
  for (auto* d : inner.dats_)
    if (add_unique(dats_, d)) see(d);
  for (auto* r : inner.reds_)
    if (add_unique(reds_, r)) see(r);
  for (auto* s : inner.scalars_)
    if (add_unique(scalars_, s)) see(s);
  needed_.insert(inner.needed_.begin(), inner.needed_.end());
  // The section's adjoint reads these dats' primal values: later writes save them.
  for (auto* d : inner.needed_) {
    Box all;
    all.lo.fill(std::numeric_limits<int>::min());
    all.hi.fill(std::numeric_limits<int>::max());
    reads_[d].push_back(all);
  }
}

void Tape::reverse_nodes(std::size_t first, std::size_t last) {
  for (std::size_t i = last; i-- > first;) {
    mesh::RecordedLoop& n = *nodes_[i];
    for (auto& c : n.saves) {
      if (c.run > 0)
        codelets::insert_runs_copy(n.block->executor(), c.dat->tile(c.tile), *c.buffer, runs_of(c), false,
                                   n.name + ":restore_" + c.dat->name());
      else
        codelets::insert_rows_copy(n.block->executor(), *c.buffer, 0, c.dat->tile(c.tile), c.offset, c.bytes, false,
                                   n.name + ":restore_" + c.dat->name());
      c.dat->mark_written();
    }
    n.submit_adjoint();
  }
}

void Tape::reverse() {
  require(!reversed_, "Tape::reverse: tape '" + name_ + "' was already reversed (clear() and record again)");
  require(!nodes_.empty(), "Tape::reverse: tape '" + name_ + "' has recorded nothing");
  check_alive("Tape::reverse");
  const auto L = static_cast<std::int64_t>(boundaries_) - 1;
  if (ckpt_.exact && L != ckpt_.steps)
    throw Error("Tape::reverse: tape '" + name_ + "' is checkpointed with revolve_exact(" + std::to_string(ckpt_.steps) +
                ", " + std::to_string(ckpt_.snapshots) + ") but recorded " + std::to_string(L) +
                " steps (the untaped steps saved nothing; use revolve() for a run that may end early)");
  stop();
  reversed_ = true;  // also when a fixed-point node throws (not converged): reversing again is refused
  if (!checkpointed() || boundaries_ < 2) {
    drop_tentative();
    reverse_nodes(0, nodes_.size());
    return;
  }
  reverse_checkpointed();
}

void Tape::zero_adjoints() {
  check_alive("Tape::zero_adjoints");
  for (auto* d : dats_) d->zero_adjoint();
  for (auto* r : reds_) r->zero_adjoint();
  for (auto* s : scalars_) s->zero_adjoint();
}

void Tape::clear() {
  if (open_fp_) open_fp_->detach();
  open_fp_ = nullptr;
  broken_.clear();
  stop();
  unlink_all();
  destroyed_.clear();
  nodes_.clear();
  needed_.clear();
  reads_.clear();
  dats_.clear();
  reds_.clear();
  scalars_.clear();
  bytes_ = 0;
  reversed_ = false;
  clear_steps();
}

}  // namespace stardiff
