// SPDX-License-Identifier: LGPL-2.1-or-later
// apps/heat/bad_arity.cxx — must NOT compile: an external function whose adjoint lacks the
// adjoint view of its dat (heat.external_bad_arity expects execute_external's static_assert).
#include "stardiff/adjoint/external.hpp"

void bad_arity(stardiff::mesh::Dat<double>& u) {
  auto primal = [](const stardiff::ExternalContext&, stardiff::ExtDat<double>) {};
  auto adjoint = [](const stardiff::ExternalContext&, stardiff::ExtDat<const double>) {};
  stardiff::execute_external("bad", primal, adjoint, stardiff::mesh::arg_dat(u, stardiff::mesh::RW));
}
