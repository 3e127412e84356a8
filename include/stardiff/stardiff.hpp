// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/stardiff.hpp — umbrella header: the runtime layer and every module.
#pragma once
#include "stardiff/version.hpp"
#include "stardiff/runtime/error.hpp"
#include "stardiff/runtime/access.hpp"
#include "stardiff/runtime/handle.hpp"
#include "stardiff/runtime/codelet.hpp"
#include "stardiff/runtime/executor.hpp"
#include "stardiff/runtime/runtime.hpp"
// Module umbrellas (each present once its module lands).
#if __has_include("stardiff/sparse.hpp")
#include "stardiff/sparse.hpp"
#endif
#if __has_include("stardiff/mesh.hpp")
#include "stardiff/mesh.hpp"
#endif
#if __has_include("stardiff/adjoint.hpp")
#include "stardiff/adjoint.hpp"
#endif
#if __has_include("stardiff/forward.hpp")
#include "stardiff/forward.hpp"
#endif
#if __has_include("stardiff/powerflow.hpp")
#include "stardiff/powerflow.hpp"
#endif
