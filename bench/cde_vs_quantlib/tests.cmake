# SPDX-License-Identifier: LGPL-2.1-or-later
# Smoke run of cde_vs_quantlib (label bench): small grids, must print its ratio lines.
if(TARGET cde_vs_quantlib)
  add_test(NAME bench.cde_vs_quantlib COMMAND cde_vs_quantlib --grids "40,20,10;60,30,10" --repeats 1)
  set_tests_properties(bench.cde_vs_quantlib PROPERTIES LABELS bench ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "cde_vs_quantlib ns=40 nv=20 steps=10 stardiff_s=[0-9.e-]+ quantlib_s=[0-9.e-]+ stardiff_err=[0-9.e-]+ quantlib_err=[0-9.e-]+ ratio=[0-9.e+-]+.*\ncde_vs_quantlib ns=60 nv=30 steps=10 ")
  add_test(NAME bench.cde_adjoint_factor COMMAND cde_vs_quantlib --adjoint --grids "40,20,10" --repeats 1)
  set_tests_properties(bench.cde_adjoint_factor PROPERTIES LABELS bench ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "cde_adjoint_factor ns=40 nv=20 steps=10 primal_s=[0-9.e-]+ forward_tape_s=[0-9.e-]+ reverse_s=[0-9.e-]+ adjoint_factor=[0-9.e+-]+ peak_bytes=[1-9][0-9]*")
else()
  stardiff_skipped_test(bench.cde_vs_quantlib_not_built "cde_vs_quantlib is not built (QuantLib not found or STARDIFF_BUILD_BENCH off)" bench)
endif()
