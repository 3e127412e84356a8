// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/adjoint.hpp — umbrella of the adjoint module (tape, reverse sweep, gradient checks).
#pragma once
#include "stardiff/adjoint/checkpoint_schedule.hpp"
#include "stardiff/adjoint/external.hpp"
#include "stardiff/adjoint/fixed_point.hpp"
#include "stardiff/adjoint/gradient_check.hpp"
#include "stardiff/adjoint/tape.hpp"
