// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/adjoint/tape.hpp — the loop-level tape (OPS ops_dag / ops_interpret_adjoints).
//
// Contract:
//  * start() makes this tape the active recorder (at most one records at a time); every
//    par_loop touching active data then becomes a node. stop() ends recording.
//  * Adjoints do not carry over between tapes: when a loop brings a dat, scalar or
//    reduction to this tape for the first time, the tape zeroes its adjoint (whatever an
//    earlier tape, seed or set_adjoint left there). set_accumulate(true) keeps them, for
//    users who sum gradients over several tapes on purpose.
//  * Before a recorded loop overwrites a dat, the tape saves the written rows of each
//    tile (only their written column runs when the loop, stencil included, writes part of
//    each row) into a checkpoint buffer (a Handle::managed_vector: under StarPU it has no
//    home node, so StarPU places it and, with STARPU_LIMIT_CPU_MEM and a disk node, evicts it) —
//    under SavePolicy::Needed only if a recorded adjoint reads the values it overwrites:
//    this loop's own (RW/INC arguments whose primal the adjoint reads), or one of a loop
//    recorded since those points were last written whose read box (range widened by the
//    stencil) meets the written range (to-be-recorded analysis; a linear stencil saves
//    nothing; external functions and nested tapes count as reading the whole dat, and an
//    external function's writes save when any recorded adjoint reads the dat). In a
//    checkpointed tape the reads of a step that will be recomputed before its adjoint (every
//    step but the one taped in the forward pass) count only within that step. Under
//    SavePolicy::All always (OPS's policy). Reductions save their values before and after
//    each loop.
//  * SavePolicy::Verify (or SavePolicy::Needed with STARDIFF_CHECK_ADJOINT_READS=1 in the
//    environment) saves what Needed saves and checks each kernel's adjoint_reads mask:
//    adjoint tasks see NaN for every primal the mask does not declare, and one whose
//    adjoint result carries such a NaN fails (Error from wait_all naming the task
//    "<loop>_adjoint", the argument index and the dat). Results are otherwise Needed's.
//    External functions have no mask to check: the tape takes every READ argument (and,
//    recomputing, every RW/INC one) as read by the adjoint and saves for it, and the adjoint
//    sees written arguments only as the call's own saved (or recomputed) outputs, so every
//    primal it can see is declared; access to a dat it was not given is the undeclared-access
//    Error of external.hpp. Verify therefore runs externals as Needed does.
//  * seed(...) sets an adjoint: of a reduction, a scalar or a dat (ghost rows zero).
//    Seeding a tape that recorded nothing or was already reversed throws Error.
//  * reverse() (once; Error the second time) submits, from the last node to the first:
//    restores of the node's checkpoints, then the node's adjoint tasks. It does not wait:
//    read results with dat.adjoint(), reduction.adjoint(), scalar.adjoint(). Reading a
//    dat's or scalar's adjoint while the tape has recorded but not reversed throws Error.
//    Afterwards primal dats hold unspecified values (only what adjoints read is restored).
//  * A dat, scalar or reduction destroyed while the tape holds recorded loops on it makes
//    seed, reverse and zero_adjoints throw Error naming it and the tape (clear() recovers).
//  * zero_adjoints() zeroes the adjoints of every dat, scalar and reduction the tape saw.
//  * clear() drops nodes, checkpoints and snapshots and forgets the objects seen (record
//    again afterwards; the next recording zeroes their adjoints again). The strategy stays.
//  * Time steps: step({dats...}) marks a step boundary while recording; the first call names
//    the state (dats of one block; later calls pass nothing or the same dats), loops between
//    boundaries k and k+1 are step k, loops before the first boundary the prefix, loops
//    after the last one the tail (e.g. the objective). With L steps, call it L+1 times.
//    The state must be all a step reads that an earlier step wrote (temporaries written
//    before being read inside a step, and data no step writes, need not be in it).
//  * set_checkpointing (before recording): Checkpointing::save_all() (default: every loop
//    keeps its checkpoints), ::revolve(l, s) (offline binomial schedule for l steps and s
//    snapshots, CheckpointSchedule::offline) or ::online(s) (unknown step count,
//    CheckpointSchedule::online); s <= 0 or l <= 0: Error. ::revolve_exact(l, s) is revolve(l, s)
//    for a recording of exactly l steps: the loops of a step the schedule runs untaped in the
//    forward pass save nothing (they need no checkpoints, but with revolve they might be the
//    tail of a run shorter than declared, which is reversed from its saves); reversing a
//    recording of fewer than l steps throws Error. describe() says "revolve(l, s)" for both. Checkpointed, the forward pass
//    keeps only the nodes (descriptors) of a step once the next boundary shows it ran untaped
//    (its saves go to a pool the next step reuses; external functions drop their outputs),
//    snapshots the state into managed vector handles (as checkpoint buffers: StarPU may evict
//    them) where the schedule asks, and tapes revolve's last step (firsturn). reverse()
//    reverses the tail, that step, then drives the schedule: snapshots are copied back into
//    the state, steps recomputed through RecordedLoop::submit_primal (reductions restarted
//    from their recorded values before each loop) and re-taped before their adjoints; the
//    prefix last. Gradients are bitwise those of save-all; afterwards each reduction holds its
//    value from the end of the forward pass (MIN/MAX: with its arg(); checkpoints copy the
//    whole record, ReductionBase::record_bytes). Fewer steps than declared: the schedule adapts;
//    a boundary after the l-th step: Error. Online holds one snapshot more while the step
//    after the latest boundary may still be the tail.
//  * Reports: recomputed_steps() (revolve's advance count: untaped step executions, the
//    first pass included), snapshots_held(), snapshot_bytes() / peak_snapshot_bytes(),
//    bytes() (checkpoint bytes held by taped loops, external functions' saved outputs
//    included), peak_bytes() (peak of checkpoints, pooled save buffers and snapshots together).
//  * Nested tapes (stardiff/adjoint/fixed_point.hpp): a FixedPointAdjoint opens a section
//    of a recording save-all tape; its loops run untaped and one iteration is recorded on a
//    nested tape, which becomes one node of this tape: reverse() runs, at that node, the
//    nested tape's adjoint until it converges (reverse accumulation), between the tail
//    recorded after the section and the prefix recorded before it, so gradients reach the
//    inputs of the whole tape. reverse() then waits for the adjoint tasks up to that node
//    (the convergence test reads adjoints on the host). The section's memory is in its
//    report, not in bytes(). A section closed without record(): seed, reverse and
//    zero_adjoints throw Error naming it (clear() recovers).
//  * Out of core: with STARPU_LIMIT_CPU_MEM below these bytes and StarPU's disk node on
//    (STARPU_DISK_SWAP=<dir>, STARPU_DISK_SWAP_BACKEND=unistd, STARPU_DISK_SWAP_SIZE >= 16 MB)
//    StarPU evicts snapshots and checkpoint buffers to files in <dir> and fetches them back
//    for the reverse sweep; gradients are unchanged. Dats (user memory) are never evicted. A
//    task whose managed buffers alone exceed the limit is refused (Error naming the handle).
//    (Runtime::memory_nodes() shows the bytes on the disk node.)
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "stardiff/adjoint/checkpoint_schedule.hpp"
#include "stardiff/mesh/dat.hpp"
#include "stardiff/mesh/recorder.hpp"
#include "stardiff/mesh/scalars.hpp"

namespace stardiff {

enum class SavePolicy { Needed, All, Verify };

// Time-step checkpointing strategy of a tape (see Tape::set_checkpointing).
struct Checkpointing {
  enum class Kind { SaveAll, Revolve, Online } kind = Kind::SaveAll;
  std::int64_t steps = 0;  // Revolve: declared step count
  int snapshots = 0;       // Revolve, Online: snapshot slots (x_0 takes one)
  bool exact = false;      // Revolve: exactly `steps` steps are recorded (revolve_exact)
  static Checkpointing save_all() { return {}; }
  static Checkpointing revolve(std::int64_t steps, int snapshots);
  static Checkpointing revolve_exact(std::int64_t steps, int snapshots);
  static Checkpointing online(int snapshots);
  std::string describe() const;  // "save-all", "revolve(l, s)", "online(s)"
};

class FixedPointAdjoint;
namespace detail {
struct FixedPointNode;
}

class Tape final : public mesh::Recorder {
 public:
  explicit Tape(std::string name = "tape", SavePolicy policy = SavePolicy::Needed);
  ~Tape() override;
  Tape(const Tape&) = delete;
  Tape& operator=(const Tape&) = delete;

  void start();
  void stop();
  bool recording() const;
  bool reversed() const { return reversed_; }
  std::size_t nodes() const { return nodes_.size(); }
  std::size_t bytes() const { return bytes_; }  // checkpoint bytes held
  SavePolicy policy() const { return policy_; }
  const std::string& name() const override { return name_; }
  // true: recording leaves existing adjoints in place (gradients accumulate).
  void set_accumulate(bool on) { accumulate_ = on; }
  bool accumulates() const { return accumulate_; }

  template <class T>
  void seed(mesh::Reduction<T>& r, T value) {
    check_seed("reduction '" + r.name() + "'");
    r.set_adjoint(value);
  }
  template <class T>
  void seed(mesh::Scalar<T>& s, T value) {
    check_seed("scalar '" + s.name() + "'");
    s.set_adjoint(value);
  }
  template <class T>
  void seed(mesh::Dat<T>& d, const std::type_identity_t<std::function<T(int, int, int, int)>>& value) {
    check_seed("dat '" + d.name() + "'");
    d.set_adjoint(value);
  }
  void reverse();
  void zero_adjoints();
  void clear();

  // Time steps and checkpointing (contract above).
  void set_checkpointing(const Checkpointing& c);
  const Checkpointing& checkpointing() const { return ckpt_; }
  void step(const std::vector<std::reference_wrapper<mesh::DatBase>>& state = {});
  std::int64_t steps() const { return boundaries_ > 0 ? static_cast<std::int64_t>(boundaries_) - 1 : 0; }
  std::int64_t recomputed_steps() const { return recomputed_; }
  int snapshots_held() const;
  std::size_t snapshot_bytes() const { return snap_bytes_; }
  std::size_t peak_snapshot_bytes() const { return peak_snap_bytes_; }
  std::size_t peak_bytes() const { return peak_bytes_; }

  void before_loop(mesh::RecordedLoop& loop) override;
  void after_loop(std::unique_ptr<mesh::RecordedLoop> loop) override;
  bool awaiting_reverse() const override { return !nodes_.empty() && !reversed_; }
  void forget(const void* object, const std::string& what) override;

 private:
  friend class FixedPointAdjoint;
  friend struct detail::FixedPointNode;
  void adopt(Tape& inner);  // a closed fixed-point section: its dats, reductions, scalars, needed set
  void check_seed(const std::string& what) const;
  void check_alive(const std::string& op) const;
  void see(mesh::Tracked* object);
  void unlink_all();
  struct Snapshot;  // the state's tile buffers copied at one boundary
  bool checkpointed() const { return ckpt_.kind != Checkpointing::Kind::SaveAll; }
  void save_dat(mesh::RecordedLoop& loop, const mesh::LoopArgDesc& a);
  void release_saves(std::size_t first, std::size_t last);
  void reverse_nodes(std::size_t first, std::size_t last);
  void reverse_checkpointed();
  void clear_steps();
  std::unique_ptr<Snapshot> new_snapshot();
  void recompute_step(std::int64_t k, bool tape);
  void take_snapshot(int slot, bool tentative);
  void restore_snapshot(int slot);
  void commit_boundary();
  void drop_tentative();
  void reset_schedule();
  void note_bytes();
  std::size_t nodes_end(std::int64_t k) const;  // one past step k's last node
  std::size_t snapshot_size() const;            // bytes of one snapshot of the state
  std::string name_;
  SavePolicy policy_;
  bool accumulate_ = false;
  bool reversed_ = false;
  std::string destroyed_;  // what was destroyed while recorded loops held it
  std::string broken_;     // a fixed-point section closed without its iteration
  FixedPointAdjoint* open_fp_ = nullptr;  // the open fixed-point section
  std::size_t bytes_ = 0;
  std::vector<std::unique_ptr<mesh::RecordedLoop>> nodes_;
  std::set<mesh::DatBase*> needed_;  // dats whose primal a recorded adjoint reads
  // Per dat: the loop-index boxes of its primal that recorded adjoints read since a later
  // recorded write covered them (a write meeting one saves what it overwrites).
  struct Box {
    std::array<int, 3> lo, hi;
  };
  std::map<const mesh::DatBase*, std::vector<Box>> reads_;
  static Box touched(const mesh::RecordedLoop& loop, const mesh::LoopArgDesc& a);
  bool read_since_write(const mesh::DatBase* d, const Box& w) const;
  void note_writes_and_reads(const mesh::RecordedLoop& loop);
  std::vector<mesh::DatBase*> dats_;
  std::vector<mesh::ReductionBase*> reds_;
  std::vector<mesh::ScalarBase*> scalars_;
  // Time steps and checkpointing.
  Checkpointing ckpt_;
  std::vector<mesh::DatBase*> state_;
  std::vector<std::size_t> step_begin_;  // boundary k: index of step k's first node
  std::size_t boundaries_ = 0;
  std::optional<CheckpointSchedule> sched_, tentative_;
  bool pending_taped_ = false;      // the step after the latest boundary is taped (firsturn)
  std::int64_t firstturn_ = -1;     // step taped in the forward pass
  std::vector<std::unique_ptr<Snapshot>> slots_;  // per schedule slot (null: never used)
  std::vector<std::unique_ptr<Snapshot>> free_snaps_;
  std::unique_ptr<Snapshot> displaced_;  // a slot's previous snapshot while the boundary is tentative
  int tentative_slot_ = -1;
  std::vector<mesh::Checkpoint> pool_;  // save buffers of untaped steps, reused
  std::vector<std::shared_ptr<Handle>> kept_;  // reduction values at the end of the forward pass
  std::size_t pool_bytes_ = 0, snap_bytes_ = 0, peak_snap_bytes_ = 0, peak_bytes_ = 0;
  std::int64_t recomputed_ = 0;
};

}  // namespace stardiff
