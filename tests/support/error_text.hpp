// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/support/error_text.hpp — the message of the stardiff::Error a statement throws.
//
// error_of(f) runs f and returns the Error's what(), or "(no error)" if none was thrown.
// EXPECT_ERROR_HAS(stmt, "a", "b", ...) expects stmt to throw an Error whose message holds
// every given piece (a gtest non-fatal failure per missing piece, the message shown).
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "stardiff/runtime/error.hpp"

namespace stardiff::testing {
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace stardiff::testing

#define EXPECT_ERROR_HAS(stmt, ...)                                                                  \
  do {                                                                                               \
    std::string msg_ = ::stardiff::testing::error_of([&] { stmt; });                                 \
    for (const char* s_ : {__VA_ARGS__}) EXPECT_NE(msg_.find(s_), std::string::npos) << msg_;      \
  } while (0)
