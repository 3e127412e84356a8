// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/runtime/error.hpp — the one exception type of stardiff.
//
// Contract: API misuse, bad input and environment failures throw stardiff::Error
// (a std::runtime_error) whose message names the input or call and what is wrong.
// Numerical outcomes (singular, not converged) are returned values, never thrown.
#pragma once
#include <stdexcept>
#include <string>

namespace stardiff {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// Throws Error(msg) when cond is false. Used for argument checks.
inline void require(bool cond, const std::string& msg) {
  if (!cond) throw Error(msg);
}

}  // namespace stardiff
