# SPDX-License-Identifier: LGPL-2.1-or-later
# Smoke run of the benchmark (label bench): it must run and print the fork-join graph's path.
if(TARGET ldlt_critical_path)
  add_test(NAME bench.ldlt_critical_path COMMAND ldlt_critical_path --n 16 --split-flops 2e6 --block-size 16)
  set_tests_properties(bench.ldlt_critical_path PROPERTIES LABELS bench ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "graph=fork_join width=64 tasks=[0-9]+ fork_join_tasks=[1-9][0-9]* split_front_tasks=0 work=[0-9.e+]+ critical=[0-9.e+]+ fraction=0\\.[0-9]+")
else()
  stardiff_skipped_test(bench.ldlt_critical_path_not_built "ldlt_critical_path is not built (sparse module or STARDIFF_BUILD_BENCH off)" bench)
endif()
