# SPDX-License-Identifier: LGPL-2.1-or-later
# Smoke run of the benchmark on the built-in pf6 case (label bench): it must run, agree with
# the analytic Jacobian and print its ratios.
if(TARGET pf_vs_peers)
  add_test(NAME bench.pf_vs_peers COMMAND pf_vs_peers --files ${PROJECT_SOURCE_DIR}/apps/pf/testdata/pf6.m --repeats 5)
  set_tests_properties(bench.pf_vs_peers PROPERTIES LABELS bench ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "what=agreement ad_vs_analytic_rel=[0-9.e-]+ .*what=newton_starpu median_s=[0-9.e-]+ .*ratio=[0-9.e+-]+")
else()
  stardiff_skipped_test(bench.pf_vs_peers_not_built "pf_vs_peers is not built (module powerflow or STARDIFF_BUILD_BENCH off)" bench)
endif()
