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
//    tile into a checkpoint buffer (its own handle, so StarPU may place or evict it) —
//    under SavePolicy::Needed only if some recorded adjoint (this loop's included, for
//    RW/INC arguments) reads that dat's primal value (to-be-recorded analysis; a linear
//    stencil saves nothing); under SavePolicy::All always (OPS's policy). Reductions
//    save their values before and after each loop.
//  * SavePolicy::Verify (or SavePolicy::Needed with STARDIFF_CHECK_ADJOINT_READS=1 in the
//    environment) saves what Needed saves and checks each kernel's adjoint_reads mask:
//    adjoint tasks see NaN for every primal the mask does not declare, and one whose
//    adjoint result carries such a NaN fails (Error from wait_all naming the task
//    "<loop>_adjoint", the argument index and the dat). Results are otherwise Needed's.
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
//  * clear() drops nodes and checkpoints and forgets the objects seen (record again
//    afterwards; the next recording zeroes their adjoints again).
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "stardiff/mesh/dat.hpp"
#include "stardiff/mesh/recorder.hpp"
#include "stardiff/mesh/scalars.hpp"

namespace stardiff {

enum class SavePolicy { Needed, All, Verify };

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

  void before_loop(mesh::RecordedLoop& loop) override;
  void after_loop(std::unique_ptr<mesh::RecordedLoop> loop) override;
  bool awaiting_reverse() const override { return !nodes_.empty() && !reversed_; }
  void forget(const void* object, const std::string& what) override;

 private:
  void check_seed(const std::string& what) const;
  void check_alive(const std::string& op) const;
  void see(mesh::Tracked* object);
  void unlink_all();
  std::string name_;
  SavePolicy policy_;
  bool accumulate_ = false;
  bool reversed_ = false;
  std::string destroyed_;  // what was destroyed while recorded loops held it
  std::size_t bytes_ = 0;
  std::vector<std::unique_ptr<mesh::RecordedLoop>> nodes_;
  std::set<mesh::DatBase*> needed_;  // dats whose primal a recorded adjoint reads
  std::vector<mesh::DatBase*> dats_;
  std::vector<mesh::ReductionBase*> reds_;
  std::vector<mesh::ScalarBase*> scalars_;
};

}  // namespace stardiff
