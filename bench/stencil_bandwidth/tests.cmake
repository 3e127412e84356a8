# SPDX-License-Identifier: LGPL-2.1-or-later
# Smoke run of stencil_bandwidth (label bench): small grid, must print its ratio line.
if(TARGET stencil_bandwidth)
  add_test(NAME bench.stencil_bandwidth COMMAND stencil_bandwidth --n 256 --iters 2 --repeats 3)
  set_tests_properties(bench.stencil_bandwidth PROPERTIES LABELS bench ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "stencil_bandwidth n=256 .*triad_gibs=[0-9.]+ primal_gibs=[0-9.]+ recording_gibs=[0-9.]+ openmp_gibs=[0-9.]+ openmp_thp_gibs=[0-9.]+ (stream|plain)_stores_gibs=[0-9.]+ max_diff=0 .*paired_ratio_vs_openmp=[0-9.]+ .*ratio_vs_openmp=[0-9.]+ ratio=[0-9.]+")
else()
  stardiff_skipped_test(bench.stencil_bandwidth_not_built "stencil_bandwidth is not built (module mesh or adjoint or STARDIFF_BUILD_BENCH off)" bench)
endif()
