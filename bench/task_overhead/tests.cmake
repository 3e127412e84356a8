# SPDX-License-Identifier: LGPL-2.1-or-later
# Smoke run of the benchmark (label bench): it must run and print its ratio.
if(TARGET task_overhead)
  add_test(NAME bench.task_overhead COMMAND task_overhead --tasks 2000 --repeats 3)
  set_tests_properties(bench.task_overhead PROPERTIES LABELS bench ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "task_overhead us_per_task stardiff=[0-9.]+ starpu=[0-9.]+ ratio=[0-9.]+")
else()
  stardiff_skipped_test(bench.task_overhead_not_built "task_overhead is not built (STARDIFF_BUILD_BENCH off)" bench)
endif()
