// SPDX-License-Identifier: LGPL-2.1-or-later
// tests/support/scoped_env.hpp — sets an environment variable for a scope and restores the
// previous value (or its absence) on exit.
#pragma once
#include <cstdlib>
#include <string>

namespace stardiff::testing {
struct ScopedEnv {
  std::string name, old;
  bool had;
  ScopedEnv(const char* n, const char* v) : name(n) {
    const char* o = std::getenv(n);
    had = o != nullptr;
    if (had) old = o;
    setenv(n, v, 1);
  }
  ~ScopedEnv() {
    if (had) setenv(name.c_str(), old.c_str(), 1);
    else unsetenv(name.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
};
}  // namespace stardiff::testing
