// SPDX-License-Identifier: LGPL-2.1-or-later
// src/runtime/access.cpp — names of access modes and handle kinds.
#include "stardiff/runtime/access.hpp"

#include "stardiff/runtime/handle.hpp"

namespace stardiff {

const char* to_string(Access a) {
  switch (static_cast<unsigned>(a)) {
    case 1: return "R";
    case 2: return "W";
    case 3: return "RW";
    case 7: return "RW|COMMUTE";
    case 8: return "REDUX";
    default: return "?";
  }
}

const char* to_string(HandleKind k) {
  switch (k) {
    case HandleKind::Vector: return "vector";
    case HandleKind::Matrix: return "matrix";
    case HandleKind::Block: return "block";
    case HandleKind::Variable: return "variable";
  }
  return "?";
}

}  // namespace stardiff
