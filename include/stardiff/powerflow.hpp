// SPDX-License-Identifier: LGPL-2.1-or-later
// stardiff/powerflow.hpp — umbrella header of the power-flow module.
#pragma once
#include "stardiff/powerflow/batch.hpp"
#include "stardiff/powerflow/jacobian.hpp"
#include "stardiff/powerflow/klu.hpp"
#include "stardiff/powerflow/matpower.hpp"
#include "stardiff/powerflow/network.hpp"
#include "stardiff/powerflow/newton.hpp"
#include "stardiff/powerflow/residual.hpp"
