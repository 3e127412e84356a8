# SPDX-License-Identifier: LGPL-2.1-or-later
# Smoke run of the benchmark (label bench) on the small case committed with the pf
# driver: every variant runs, agrees with the analytic Jacobian (exit 0) and prints ratios.
if(TARGET forward_jacobian AND EXISTS ${PROJECT_SOURCE_DIR}/apps/pf/data/case9.m)
  add_test(NAME bench.forward_jacobian COMMAND forward_jacobian --repeats 5 ${PROJECT_SOURCE_DIR}/apps/pf/data/case9.m)
  set_tests_properties(bench.forward_jacobian PROPERTIES LABELS bench ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "op=rl_w8_starpu colors=[0-9]+ time_ms=[0-9.]+ .*ratio=[0-9.]+"
    FAIL_REGULAR_EXPRESSION "differs from the analytic")
else()
  stardiff_skipped_test(bench.forward_jacobian_not_built "forward_jacobian is not built (module forward or STARDIFF_BUILD_BENCH off)" bench)
endif()
