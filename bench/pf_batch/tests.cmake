# SPDX-License-Identifier: LGPL-2.1-or-later
# Smoke run of the benchmark on the in-tree case9 (label bench): it must run, agree with the
# one-at-a-time solves and print its ratios.
if(TARGET pf_batch)
  add_test(NAME bench.pf_batch COMMAND pf_batch --case ${PROJECT_SOURCE_DIR}/apps/pf/data/case9.m --scenarios 20 --repeats 1)
  set_tests_properties(bench.pf_batch PROPERTIES LABELS bench ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "what=agreement scenarios=20 iterations_equal=1 failed=0 max_dvm=[0-9.e-]+ .*what=ratio ratio=[0-9.e+-]+"
    FAIL_REGULAR_EXPRESSION "iterations_equal=0")
else()
  stardiff_skipped_test(bench.pf_batch_not_built "pf_batch is not built (module powerflow or STARDIFF_BUILD_BENCH off)" bench)
endif()
