// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/runtime/access.hpp — data access modes of a task (StarPU's, without StarPU).
//
// R, W, RW as usual; RW|COMMUTE: tasks may run in any order relative to each other
// but never at the same time; REDUX: per-worker contributions combined by the handle's
// reduction codelet (declared with Handle::set_reduction). Under the sequential
// executor COMMUTE and REDUX behave like RW (submission order).
#pragma once
#include <cstdint>

namespace stardiff {

enum class Access : std::uint8_t {
  R = 1,
  W = 2,
  RW = 3,
  COMMUTE = 4,  // only combined with RW
  REDUX = 8,
};

constexpr Access operator|(Access a, Access b) {
  return static_cast<Access>(static_cast<std::uint8_t>(a) | static_cast<std::uint8_t>(b));
}
constexpr bool has(Access a, Access bit) {
  return (static_cast<std::uint8_t>(a) & static_cast<std::uint8_t>(bit)) != 0;
}
constexpr bool reads(Access a) { return has(a, Access::R) || has(a, Access::REDUX); }
constexpr bool writes(Access a) { return has(a, Access::W) || has(a, Access::REDUX); }
const char* to_string(Access a);

}  // namespace stardiff
