// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/mesh/recorder.hpp — what a recorded loop looks like to a tape.
//
// Contract:
//  * par_loop (not par_loop_passive) asks active_recorder(); when one is set and the loop
//    touches an active dat, scalar or reduction, it builds a RecordedLoop, calls
//    before_loop (the recorder submits checkpoint saves), submits the primal tasks, then
//    hands the node to after_loop. A tape (stardiff/adjoint/tape.hpp) is the recorder.
//  * RecordedLoop::args describes every argument in order (kinds, dats, access modes,
//    whether the adjoint kernel reads the argument's primal value, stencil extents).
//  * submit_adjoint() submits the loop's adjoint: halo exchanges of primal data its
//    adjoint reads, one adjoint task per tile, scalar partial sums (tile order) and the
//    reverse halo exchange of adjoint ghost rows. Restoring checkpoints is the tape's job.
//  * submit_primal() submits the primal tasks again (no recording), for recomputation,
//    keeping what the adjoint needs (a re-taped step); submit_primal_untaped() for a step
//    that stays untaped (keeps nothing). kept_bytes() counts what a node holds for its
//    adjoint beyond `saves` (an external function's outputs); release_kept() drops it.
//  * Tracked (base of dats, reductions, scalars) knows the recorders holding it: its
//    destruction is reported to them (forget), and reading a dat's or scalar's adjoint
//    while a holder has recorded but not reversed throws Error naming both.
#pragma once
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "stardiff/mesh/block.hpp"
#include "stardiff/runtime/error.hpp"
#include "stardiff/runtime/handle.hpp"

namespace stardiff::mesh {

class DatBase;
class ReductionBase;
class ScalarBase;

enum class Mode : int { Read = 0, Write = 1, RW = 2, Inc = 3 };
const char* to_string(Mode m);

struct LoopArgDesc {
  enum class Kind { Dat, Gbl, Reduce, Idx, Scalar } kind = Kind::Gbl;
  DatBase* dat = nullptr;
  Mode mode = Mode::Read;
  bool adjoint_reads = false;        // the adjoint kernel reads this argument's primal value
  bool poison = false;               // verify mode: the adjoint sees NaN for this primal
  bool save = false;                 // written: the tape saves the points this loop overwrites
  std::array<int, 3> st_min{0, 0, 0}, st_max{0, 0, 0};
  ReductionBase* red = nullptr;
  ScalarBase* scalar = nullptr;
  bool writes() const { return kind == Kind::Dat && mode != Mode::Read; }
};

struct Checkpoint {
  DatBase* dat = nullptr;
  int tile = 0;
  std::size_t offset = 0, bytes = 0;  // byte range of the tile buffer saved
  // run > 0: column runs instead: n1 x n2 runs of `run` bytes, run (a, b) at byte offset
  // offset + a*stride1 + b*stride2 of the tile buffer, stored back to back (bytes in all).
  std::size_t run = 0, n1 = 1, stride1 = 0, n2 = 1, stride2 = 0;
  std::unique_ptr<Handle> buffer;     // the saved bytes (Handle::managed_vector: StarPU may evict it)
};

class RecordedLoop {
 public:
  virtual ~RecordedLoop() = default;
  virtual void submit_adjoint() = 0;
  // Submits the loop's primal tasks again on the same arguments, recording nothing
  // (checkpointing recomputes a time step from a snapshot this way).
  virtual void submit_primal() { throw Error("recorded loop '" + name + "' cannot be recomputed"); }
  virtual void submit_primal_untaped() { submit_primal(); }
  virtual std::size_t kept_bytes() const { return 0; }
  virtual void release_kept() {}
  // True when each dat argument touches exactly `range` widened by its stencil (a par_loop);
  // false: the tape takes it as touching the whole dat (external functions, nested tapes).
  virtual bool exact_extents() const { return false; }

  std::string name;
  Block* block = nullptr;
  Range range;
  std::vector<LoopArgDesc> args;
  std::vector<Checkpoint> saves;
  bool verify_reads = false;  // adjoint tasks give undeclared primal reads NaN and report them
  // Per argument: reduction value before / after the loop and the adjoint its tiles read.
  std::vector<std::shared_ptr<Handle>> red_pre, red_post, red_eff;  // shared_ptr: deletes the concrete type
};

class Recorder {
 public:
  virtual ~Recorder() = default;
  virtual void before_loop(RecordedLoop& loop) = 0;
  virtual void after_loop(std::unique_ptr<RecordedLoop> loop) = 0;
  virtual const std::string& name() const = 0;
  // True while it holds recorded loops not yet reversed (adjoints not computed).
  virtual bool awaiting_reverse() const = 0;
  // `object` (described by `what`, e.g. "dat 'u'") is being destroyed.
  virtual void forget(const void* object, const std::string& what) = 0;
};

class Tracked {
 public:
  Tracked() = default;
  Tracked(const Tracked&) = delete;
  Tracked& operator=(const Tracked&) = delete;
  virtual ~Tracked() = default;
  void link(Recorder* r);
  void unlink(Recorder* r);
  // Whether the adjoint may be non-zero (set by writes, cleared by zeroing).
  bool adjoint_dirty() const { return adj_dirty_; }

 protected:
  // Called first in the most derived destructor: tells the holders.
  void notify_destroyed(const std::string& what);
  // Error if a holder has recorded but not reversed ("what": "stardiff::mesh::Dat 'u'").
  void require_adjoint_ready(const std::string& what) const;
  bool adj_dirty_ = false;

 private:
  std::vector<Recorder*> recs_;
};

Recorder* active_recorder();
void set_active_recorder(Recorder* r);
// The external function whose user code runs on this thread (nullptr: none). Host access
// to a dat and par_loop submission there throw Error naming both (undeclared access).
const char* running_external();
void set_running_external(const char* name);

// Optional NaN check: every primal tile task scans the points it wrote and fails
// (stardiff::Error from wait_all, naming loop, dat and point) on a NaN.
void set_nan_check(bool on);
bool nan_check();

}  // namespace stardiff::mesh
