# SPDX-License-Identifier: LGPL-2.1-or-later
# Smoke run of adjoint_factor (label bench): small grid, must print its ratio line.
if(TARGET adjoint_factor)
  add_test(NAME bench.adjoint_factor COMMAND adjoint_factor --n 128 --iters 4 --repeats 3)
  set_tests_properties(bench.adjoint_factor PROPERTIES LABELS bench ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "adjoint_factor n=128 iters=4 .*tape_bytes=24 save_all_iters=4 save_all_factor=[0-9.]+ .*ratio=[0-9.]+")
else()
  stardiff_skipped_test(bench.adjoint_factor_not_built "adjoint_factor is not built (module mesh or adjoint or STARDIFF_BUILD_BENCH off)" bench)
endif()
