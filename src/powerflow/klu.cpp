// SPDX-License-Identifier: LGPL-2.1-or-later
// src/powerflow/klu.cpp — see stardiff/powerflow/klu.hpp.
#include "stardiff/powerflow/klu.hpp"

#include <klu.h>

#include <cmath>
#include <string>

#include "stardiff/runtime/error.hpp"

namespace stardiff::powerflow {

struct KluSolver::Impl {
  klu_symbolic* sym = nullptr;
  klu_numeric* num = nullptr;
  klu_common common;
};

KluSolver::KluSolver() : k_(new Impl) {
  klu_defaults(&k_->common);
  k_->common.halt_if_singular = 1;
  k_->common.btf = 0;  // power-flow Jacobians are one irreducible block: BTF only costs time
}

KluSolver::~KluSolver() {
  free_numeric();
  if (k_->sym) klu_free_symbolic(&k_->sym, &k_->common);
  delete k_;
}

void KluSolver::free_numeric() {
  if (k_->num) klu_free_numeric(&k_->num, &k_->common);
  k_->num = nullptr;
}

void KluSolver::analyze(std::int32_t n, const std::int32_t* Ap, const std::int32_t* Ai, const std::int32_t* perm) {
  free_numeric();
  if (k_->sym) klu_free_symbolic(&k_->sym, &k_->common);
  n_ = n;
  Ap_ = Ap;
  Ai_ = Ai;
  k_->sym = perm ? klu_analyze_given(n, const_cast<int*>(Ap), const_cast<int*>(Ai), const_cast<int*>(perm),
                                     const_cast<int*>(perm), &k_->common)
                 : klu_analyze(n, const_cast<int*>(Ap), const_cast<int*>(Ai), &k_->common);
  if (!k_->sym) throw Error("klu_analyze failed (status " + std::to_string(k_->common.status) + ")");
}

bool KluSolver::factor(const double* Ax) {
  if (!k_->sym) throw Error("KluSolver::factor before analyze");
  for (std::int32_t k = 0; k < Ap_[n_]; ++k)
    if (!std::isfinite(Ax[k])) return false;
  if (k_->num) {
    int ok = klu_refactor(const_cast<int*>(Ap_), const_cast<int*>(Ai_), const_cast<double*>(Ax), k_->sym, k_->num, &k_->common);
    if (ok && k_->common.status == KLU_OK && klu_rcond(k_->sym, k_->num, &k_->common) && std::isfinite(k_->common.rcond) &&
        k_->common.rcond > 1e-12) {
      ++refactors_;
      rcond_ = k_->common.rcond;
      return true;
    }
    free_numeric();
  }
  k_->num = klu_factor(const_cast<int*>(Ap_), const_cast<int*>(Ai_), const_cast<double*>(Ax), k_->sym, &k_->common);
  if (!k_->num || k_->common.status != KLU_OK) {
    free_numeric();
    return false;
  }
  ++factors_;
  klu_rcond(k_->sym, k_->num, &k_->common);
  rcond_ = k_->common.rcond;
  if (!std::isfinite(rcond_) || rcond_ == 0.0) {
    free_numeric();
    return false;
  }
  return true;
}

bool KluSolver::factored() const { return k_->num != nullptr; }

bool KluSolver::solve(double* b, bool transpose) const {
  if (!k_->num) throw Error("KluSolver::solve without a factorization");
  int ok = transpose ? klu_tsolve(k_->sym, k_->num, n_, 1, b, &k_->common) : klu_solve(k_->sym, k_->num, n_, 1, b, &k_->common);
  if (!ok) return false;
  for (std::int32_t k = 0; k < n_; ++k)
    if (!std::isfinite(b[k])) return false;
  return true;
}

}  // namespace stardiff::powerflow
