// SPDX-License-Identifier: LGPL-2.1-or-later
// src/adjoint/fixed_point.cpp — reverse accumulation for fixed-point loops on a nested tape
// (see fixed_point.hpp): the section recorder, the node the outer tape reverses, its passes.
#include "stardiff/adjoint/fixed_point.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <set>

#include "adjoint/tape_internal.hpp"
#include "stardiff/mesh/par_loop.hpp"
#include "starpu/mesh/cl_halo.hpp"

namespace stardiff {

const char* to_string(FixedPointStatus s) {
  switch (s) {
    case FixedPointStatus::Pending: return "pending";
    case FixedPointStatus::Converged: return "converged";
    case FixedPointStatus::NotConverged: return "not converged";
    case FixedPointStatus::NotFinite: return "not finite";
  }
  return "?";
}

namespace {
std::string num(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

// Copies every tile buffer of d (ghost rows included) into new handles appended to out.
std::size_t copy_whole(mesh::DatBase* d, std::vector<mesh::Checkpoint>& out, const std::string& tag) {
  Executor& ex = d->block().executor();
  std::size_t bytes = 0;
  for (int t = 0; t < d->tiles(); ++t) {
    mesh::Checkpoint c = whole_tile_checkpoint(*d, t, tag + "_" + d->name() + "[" + std::to_string(t) + "]");
    codelets::insert_rows_copy(ex, d->tile(t), 0, *c.buffer, 0, c.bytes, true, tag + "_" + d->name());
    bytes += c.bytes;
    out.push_back(std::move(c));
  }
  return bytes;
}

void put_back(std::vector<mesh::Checkpoint>& cs, const std::string& tag) {
  for (auto& c : cs) {
    codelets::insert_rows_copy(c.dat->block().executor(), *c.buffer, 0, c.dat->tile(c.tile), 0, c.bytes, true,
                               tag + "_" + c.dat->name());
    c.dat->mark_written();
  }
}
}  // namespace

namespace detail {

struct FixedPointNode final : mesh::RecordedLoop {
  FixedPointNode(const std::string& n, Tape& outer, FixedPointOptions o, std::shared_ptr<FixedPointReport> r)
      : inner(outer.name() + "/" + n, outer.policy()), opts(o), report(std::move(r)) {
    name = n;
    inner.set_accumulate(outer.accumulates());
  }

  // A loop of the open section: copy the dats it first overwrites whose primal an adjoint
  // recorded before the section reads.
  void watch(mesh::RecordedLoop& loop, const Tape& outer) {
    if (!block) block = loop.block;
    for (auto& a : loop.args)
      if (a.writes() && outer.needed_.count(a.dat) && entry_saved.insert(a.dat).second)
        report->copy_bytes += copy_whole(a.dat, entry, inner.name() + ":entry");
  }

  // The iteration is recorded: end-of-iteration copies, the state's element offsets.
  void finish() {
    std::set<mesh::DatBase*> restored;
    for (auto& n : inner.nodes_)
      for (auto& c : n->saves) restored.insert(c.dat);
    for (auto* d : restored) report->copy_bytes += copy_whole(d, end, inner.name() + ":end");
    for (auto* d : inner.dats_) {
      if (!d->active()) continue;
      std::vector<Touch> acc;  // every access of d in the iteration, in order
      bool written = false;
      for (auto& n : inner.nodes_)
        for (auto& a : n->args) {
          if (a.kind != mesh::LoopArgDesc::Kind::Dat || a.dat != d) continue;
          Touch x;
          x.region = n->range;
          x.writes = a.writes();
          x.plain_write = a.mode == mesh::Mode::Write;
          if (!x.writes)
            for (int q = 0; q < 3; ++q) {
              x.region.lo[q] += a.st_min[q];
              x.region.hi[q] += a.st_max[q];
            }
          written = written || x.writes;
          acc.push_back(x);
        }
      if (!written) continue;
      require(d->elemsize() == 8 || d->elemsize() == 4,
              "FixedPointAdjoint '" + name + "': state dat '" + d->name() + "' has elements of " +
                  std::to_string(d->elemsize()) + " bytes (float or double expected)");
      add_state(d, acc);
    }
    for (auto& s : state) report->host_bytes += s.offs.size() * (sizeof(std::uint32_t) + sizeof(double));
    report->tape_bytes = inner.bytes();
  }

  struct Touch {
    mesh::Range region;  // points touched (reads: the range widened by the stencil)
    bool writes = false, plain_write = false;
  };
  // The state points of d: written by the iteration, and not first accessed by a plain
  // WRITE (such a temporary's adjoint is zero after every pass).
  void add_state(mesh::DatBase* d, const std::vector<Touch>& acc) {
    const int dims = d->dims(), o = dims - 1;
    const long long rl = d->row_len();
    auto inside = [&](const mesh::Range& r, const std::array<int, 3>& idx) {
      for (int q = 0; q < dims; ++q)
        if (d->has_axis(q) && (idx[q] < r.lo[q] || idx[q] >= r.hi[q])) return false;
      return true;
    };
    for (int t = 0; t < d->tiles(); ++t) {
      const mesh::TileGeom g = d->geom(t);
      const int rows = static_cast<int>(d->tile_rows(t));
      const bool tiled = d->tiled();
      const int r0 = tiled && t > 0 ? d->d_m(o) : 0;
      const int r1 = tiled && t < d->tiles() - 1 ? rows - d->d_p(o) : rows;
      std::array<int, 3> ext{1, 1, 1}, lo{0, 0, 0};
      for (int q = 0; q < o; ++q) {
        ext[q] = d->has_axis(q) ? d->size(q) + d->d_m(q) + d->d_p(q) : 1;
        lo[q] = d->has_axis(q) ? d->first(q) : 0;
      }
      StatePart part;
      part.dat = d;
      part.tile = t;
      for (int r = r0; r < r1; ++r) {
        std::array<int, 3> idx{0, 0, 0};
        idx[o] = tiled ? d->tile_first_row(t) + r : 0;
        const int na = o >= 1 ? ext[0] : 1, nb = o >= 2 ? ext[1] : 1;
        for (int b = 0; b < nb; ++b)
          for (int a = 0; a < na; ++a) {
            if (o >= 1) idx[0] = lo[0] + a;
            if (o >= 2) idx[1] = lo[1] + b;
            const Touch* first = nullptr;
            bool written = false;
            for (const Touch& x : acc)
              if (inside(x.region, idx)) {
                if (!first) first = &x;
                written = written || x.writes;
              }
            if (!written || first->plain_write) continue;
            long long e = static_cast<long long>(r) * rl;
            if (o >= 1) e += static_cast<long long>(a) * g.s[0];
            if (o >= 2) e += static_cast<long long>(b) * g.s[1];
            for (int c = 0; c < d->dim(); ++c) part.offs.push_back(static_cast<std::uint32_t>(e + c));
          }
      }
      part.w.assign(part.offs.size(), 0.0);
      if (!part.offs.empty()) state.push_back(std::move(part));
    }
  }

  // Host: first pass (init) sets w = v, later ones add v; returns max|v|, max|w|.
  void measure(bool init, double& maxv, double& maxw) {
    maxv = maxw = 0;
    // One wait for the pass, then acquires that find nothing pending (a blocking acquire
    // per tile costs a hand-over between threads each on a loaded machine).
    if (!state.empty()) state.front().dat->block().executor().wait_all();
    for (auto& s : state) {
      Handle& h = s.dat->adjoint_tile(s.tile);
      auto guard = h.acquire(Access::R);
      const void* p = guard.data();
      const bool dbl = s.dat->elemsize() == 8;
      for (std::size_t i = 0; i < s.offs.size(); ++i) {
        const double v = dbl ? static_cast<const double*>(p)[s.offs[i]]
                             : static_cast<double>(static_cast<const float*>(p)[s.offs[i]]);
        s.w[i] = init ? v : s.w[i] + v;
        maxv = std::max(maxv, std::isnan(v) ? HUGE_VAL : std::fabs(v));
        maxw = std::max(maxw, std::isnan(s.w[i]) ? HUGE_VAL : std::fabs(s.w[i]));
      }
    }
  }

  // The passes of reverse accumulation (called by the outer tape's reverse sweep).
  void submit_adjoint() override {
    FixedPointReport& rep = *report;
    inner.check_alive("FixedPointAdjoint '" + name + "'");
    inner.reversed_ = true;  // its nodes are reversed below, as often as it takes
    double maxv = 0, maxw = 0;
    measure(true, maxv, maxw);
    rep.status = FixedPointStatus::NotConverged;
    for (int k = 1; k <= opts.max_iterations; ++k) {
      put_back(end, inner.name() + ":restore_end");
      inner.reverse_nodes(0, inner.nodes_.size());
      if (k == 1)
        for (auto* r : inner.reds_) r->zero_adjoint();
      measure(false, maxv, maxw);
      rep.iterations = k;
      rep.change = maxw == 0 ? (maxv == 0 ? 0.0 : HUGE_VAL) : maxv / maxw;
      if (!std::isfinite(maxv) || !std::isfinite(maxw)) {
        rep.status = FixedPointStatus::NotFinite;
        rep.change = std::nan("");
        break;
      }
      if (rep.change <= opts.tolerance) {
        rep.status = FixedPointStatus::Converged;
        break;
      }
    }
    put_back(entry, inner.name() + ":restore_entry");
    if (rep.status != FixedPointStatus::Converged && opts.throw_on_failure)
      throw Error("FixedPointAdjoint '" + name + "' (tape '" + inner.name() + "'): the adjoint is " +
                  to_string(rep.status) + " after " + std::to_string(rep.iterations) + " passes (change " +
                  num(rep.change) + ", tolerance " + num(opts.tolerance) + ", max_iterations " +
                  std::to_string(opts.max_iterations) + ")");
  }

  struct StatePart {
    mesh::DatBase* dat = nullptr;
    int tile = 0;
    std::vector<std::uint32_t> offs;  // elements of the tile buffer that are state points
    std::vector<double> w;            // the accumulated adjoint there
  };
  Tape inner;
  FixedPointOptions opts;
  std::shared_ptr<FixedPointReport> report;
  std::vector<mesh::Checkpoint> entry, end;  // section-entry and end-of-iteration copies
  std::set<mesh::DatBase*> entry_saved;
  std::vector<StatePart> state;
};

}  // namespace detail

class FixedPointAdjoint::Section final : public mesh::Recorder {
 public:
  explicit Section(FixedPointAdjoint& fp) : fp_(fp), name_(fp.outer_->name() + "/" + fp.name_) {}
  void before_loop(mesh::RecordedLoop& loop) override {
    if (!fp_.node_) return;
    if (fp_.outer_) fp_.node_->watch(loop, *fp_.outer_);
    if (recording) fp_.node_->inner.before_loop(loop);
  }
  void after_loop(std::unique_ptr<mesh::RecordedLoop> loop) override {
    if (recording && fp_.node_) fp_.node_->inner.after_loop(std::move(loop));
  }
  const std::string& name() const override { return name_; }
  bool awaiting_reverse() const override { return false; }
  void forget(const void*, const std::string&) override {}
  bool recording = false;

 private:
  FixedPointAdjoint& fp_;
  std::string name_;
};

FixedPointAdjoint::FixedPointAdjoint(Tape& outer, std::string name, FixedPointOptions options)
    : outer_(&outer), name_(std::move(name)), opts_(options), report_(std::make_shared<FixedPointReport>()) {
  const std::string who = "FixedPointAdjoint '" + name_ + "' (tape '" + outer.name() + "')";
  require(std::isfinite(opts_.tolerance) && opts_.tolerance > 0,
          who + ": the tolerance must be positive and finite (got " + num(opts_.tolerance) + ")");
  require(opts_.max_iterations > 0,
          who + ": max_iterations must be positive (got " + std::to_string(opts_.max_iterations) + ")");
  require(!outer.reversed(), who + ": the tape was reversed; clear() it and record again");
  require(!outer.checkpointed(), who + ": the tape is checkpointed with " + outer.checkpointing().describe() +
                                     "; fixed-point sections need save-all");
  require(outer.open_fp_ == nullptr,
          who + ": the tape has an open fixed-point section '" + (outer.open_fp_ ? outer.open_fp_->name_ : "") + "'");
  require(outer.recording(), who + ": the tape is not recording (start() it first)");
  node_ = std::make_unique<detail::FixedPointNode>(name_, outer, opts_, report_);
  section_ = std::make_unique<Section>(*this);
  outer.open_fp_ = this;
  mesh::set_active_recorder(section_.get());
}

void FixedPointAdjoint::detach() {
  if (mesh::active_recorder() == section_.get()) mesh::set_active_recorder(nullptr);
  outer_ = nullptr;
  node_.reset();
}

FixedPointAdjoint::~FixedPointAdjoint() {
  if (outer_ && !recorded_) {
    outer_->broken_ = "fixed-point section '" + name_ + "' was closed without record()";
    outer_->open_fp_ = nullptr;
    if (mesh::active_recorder() == section_.get()) mesh::set_active_recorder(outer_);
  }
  if (mesh::active_recorder() == section_.get()) mesh::set_active_recorder(nullptr);
}

void FixedPointAdjoint::record(const std::function<void()>& iteration) {
  const std::string who = "FixedPointAdjoint::record ('" + name_ + "')";
  require(!recorded_, who + ": called again (one iteration per section)");
  require(outer_ != nullptr, who + ": its tape was destroyed or cleared");
  require(mesh::active_recorder() == section_.get(),
          who + ": another tape is recording; the section records only while it is the active recorder");
  Tape& outer = *outer_;
  auto fail = [&](const std::string& why) {
    outer.broken_ = "fixed-point section '" + name_ + "': " + why;
    outer.open_fp_ = nullptr;
    recorded_ = true;  // closed
    node_.reset();
    if (mesh::active_recorder() == section_.get()) mesh::set_active_recorder(&outer);
  };
  section_->recording = true;
  try {
    iteration();
  } catch (const std::exception& e) {
    section_->recording = false;
    fail(std::string("the iteration threw: ") + e.what());
    throw;
  }
  section_->recording = false;
  if (node_->inner.nodes() == 0) {
    fail("the iteration recorded no loop on active data");
    throw Error(who + ": the iteration recorded no loop on active data");
  }
  try {
    node_->finish();
  } catch (const Error& e) {
    fail(e.what());
    throw;
  }
  outer.adopt(node_->inner);
  outer.nodes_.push_back(std::move(node_));
  outer.open_fp_ = nullptr;
  recorded_ = true;
  mesh::set_active_recorder(&outer);
}

}  // namespace stardiff
