// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/adjoint/fixed_point.hpp — reverse accumulation (Christianson) for a fixed-point
// loop u <- G(u, p) inside a recording tape: one iteration on a nested tape, its adjoint
// run until it converges (OPS apps/c/poisson_a1s_iterative runs a fixed count instead).
//
// Contract:
//  * FixedPointAdjoint fp(outer, name, options) opens a fixed-point section of `outer`,
//    which must be recording with save-all (an open section, a checkpointed or reversed
//    outer tape: Error). In the section the outer tape records nothing: the primal
//    iterations run untaped. Before a loop of the section first overwrites a dat whose
//    primal an adjoint recorded earlier on the outer tape reads, the section copies that
//    dat whole (its tiles, StarPU handles); the copies are put back after the fixed point's
//    adjoint, before the outer tape reverses what came before the section.
//  * fp.record(iteration) calls `iteration` once, at the converged state, recording its
//    loops on the nested tape (same SavePolicy as the outer), copies the dats whose saved
//    values the nested reverse restores (their end-of-iteration values), and closes the
//    section: the outer tape records again (the tail, e.g. the objective). A second
//    record(), a record() after another tape started, or an iteration recording no loop on
//    active data: Error. Destroying fp before record() closes the section and makes the
//    outer tape's seed/reverse throw Error naming the section (clear() recovers).
//  * The state is every point of an active dat that a loop of the iteration writes; every
//    other adjoint the iteration touches (dats' unwritten points, scalars) is a parameter.
//  * When outer.reverse() reaches the section (after the tail), it waits for the tail's
//    adjoint tasks, reads v_0 = the state's adjoint (the seed from the objective), then
//    per pass k = 1, 2, ...: puts the end-of-iteration copies back and reverses the nested
//    tape (v_k = (dG/du)^T v_{k-1}; parameters accumulate (dG/dp)^T v_{k-1}), and waits.
//    With w_k = v_0 + ... + v_k (the adjoint u_bar of the brief: w_k = (dG/du)^T w_{k-1} +
//    v_0), change_k = max|w_k - w_{k-1}| / max|w_k| = max|v_k| / max|w_k| over the state
//    (0 when both are 0). It stops at the first k with change_k <= tolerance (Converged),
//    or at a non-finite change (NotFinite), or after max_iterations passes (NotConverged).
//    With a contraction rate rho, the remaining error of w (and of p_bar) is about
//    change * rho / (1 - rho) relative: for rho near 1 choose tolerance ~ target * (1 - rho).
//    Then p_bar = sum_{j<k} (dG/dp)^T v_j, and the state's adjoint holds v_k: the adjoint
//    of the iteration's start value (-> 0 as the loop converges), which flows on into the
//    outer tape's prefix. Reductions folded inside the iteration are outputs of its last
//    run only: their seeds act in pass 1; their adjoints are zeroed after it.
//  * Not converged or not finite with throw_on_failure (default): outer.reverse() throws
//    Error naming the section, passes, change and tolerance (the tape stays reversed);
//    without it, report() says so and the gradients hold the last pass's sums.
//  * Memory does not depend on how many iterations the primal or the adjoint runs: the
//    nested tape of one iteration, the end-of-iteration and section-entry copies, and on
//    the host w and the state's element offsets. report(): status, iterations (passes),
//    change, tape_bytes (nested checkpoints), copy_bytes (the copies), host_bytes (w and
//    offsets), bytes() their sum.
//  * Options: tolerance > 0 and finite, max_iterations > 0 (else Error at construction).
//    State dats are float or double (others: Error at record()).
#pragma once
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "stardiff/adjoint/tape.hpp"

namespace stardiff {

struct FixedPointOptions {
  double tolerance = 1e-10;  // on change_k, relative (see the contract)
  int max_iterations = 1000; // adjoint passes
  bool throw_on_failure = true;
};

enum class FixedPointStatus { Pending, Converged, NotConverged, NotFinite };
const char* to_string(FixedPointStatus s);

struct FixedPointReport {
  FixedPointStatus status = FixedPointStatus::Pending;
  int iterations = 0;  // adjoint passes run
  double change = std::numeric_limits<double>::quiet_NaN();
  std::size_t tape_bytes = 0, copy_bytes = 0, host_bytes = 0;
  std::size_t bytes() const { return tape_bytes + copy_bytes + host_bytes; }
};

namespace detail {
struct FixedPointNode;
}

class FixedPointAdjoint {
 public:
  FixedPointAdjoint(Tape& outer, std::string name, FixedPointOptions options = {});
  ~FixedPointAdjoint();
  FixedPointAdjoint(const FixedPointAdjoint&) = delete;
  FixedPointAdjoint& operator=(const FixedPointAdjoint&) = delete;

  void record(const std::function<void()>& iteration);
  bool recorded() const { return recorded_; }
  const std::string& name() const { return name_; }
  const FixedPointOptions& options() const { return opts_; }
  // Final once the outer tape's reverse() returned.
  const FixedPointReport& report() const { return *report_; }
  FixedPointStatus status() const { return report_->status; }
  int iterations() const { return report_->iterations; }
  double change() const { return report_->change; }
  std::size_t bytes() const { return report_->bytes(); }

 private:
  friend class Tape;
  class Section;
  void detach();  // the outer tape went away (destroyed or cleared) with the section open
  Tape* outer_;
  std::string name_;
  FixedPointOptions opts_;
  bool recorded_ = false;
  std::shared_ptr<FixedPointReport> report_;
  std::unique_ptr<detail::FixedPointNode> node_;  // until record() hands it to the outer tape
  std::unique_ptr<Section> section_;
};

}  // namespace stardiff
