# SPDX-License-Identifier: LGPL-2.1-or-later
# Tests of stardiff-cde (apps/cde): the model on the sequential executor (test_cde: accuracy
# against the little-trap price, spatial order, leverage, step marks, bad input); the oracle
# against QuantLib's AnalyticHestonEngine (test_cde_heston_analytic, skipped without QuantLib);
# the driver: default price within 1e-4, --json, StarPU schedulers bitwise equal to the sequential
# executor (solution_hash), --adjoint --json, the Greeks of StarPU bitwise those of the sequential
# executor (equal tilings; save-all and Revolve), bad options and leverage files exit 2.
if(TARGET stardiff-cde)
  add_executable(test_cde ${PROJECT_SOURCE_DIR}/apps/cde/test_cde.cpp)
  target_link_libraries(test_cde PRIVATE stardiff_cde_core stardiff_gtest_main GTest::gtest)
  target_compile_definitions(test_cde PRIVATE STARDIFF_CDE_TESTDATA="${PROJECT_SOURCE_DIR}/apps/cde/testdata")
  add_test(NAME test_cde COMMAND test_cde)
  set_tests_properties(test_cde PROPERTIES LABELS unit ENVIRONMENT "${STARDIFF_TEST_ENV}" SKIP_RETURN_CODE 77 TIMEOUT 300)
  if(TARGET stardiff_cde_quantlib)
    add_executable(test_cde_heston_analytic ${PROJECT_SOURCE_DIR}/apps/cde/test_heston_analytic.cpp)
    target_link_libraries(test_cde_heston_analytic PRIVATE stardiff_cde_core stardiff_cde_quantlib stardiff_gtest_main
      GTest::gtest)
    add_test(NAME test_cde_heston_analytic COMMAND test_cde_heston_analytic)
    set_tests_properties(test_cde_heston_analytic PROPERTIES LABELS unit ENVIRONMENT "${STARDIFF_TEST_ENV}"
      SKIP_RETURN_CODE 77 TIMEOUT 300)
  else()
    stardiff_skipped_test(test_cde_heston_analytic "QuantLib (libquantlib0-dev) not found: the oracle is not checked against AnalyticHestonEngine")
  endif()
  add_test(NAME cde.case_a COMMAND stardiff-cde --ns 300 --nv 150 --steps 60)
  set_tests_properties(cde.case_a PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "analytic_price = 8\\.89486936[0-9]*\ndifference = -?[0-9.e-]+ \\(relative -?([0-9]\\.[0-9]*e-0[5-9]|[1-9]\\.[0-9]*e-1[0-9])\\)")
  add_test(NAME cde.json COMMAND stardiff-cde --json --ns 40 --nv 20 --steps 10 --damping 1 --rf 0.01)
  set_tests_properties(cde.json PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "^\\{\"ns\":40,\"nv\":20,\"steps\":10,\"damping\":1,.*\"price\":[0-9.e-]+,\"analytic_price\":[0-9.e-]+,\"difference\":[0-9.e-]+,.*\"solution_hash\":\"[0-9a-f]+\",\"setup_s\":[0-9.e-]+,\"solve_s\":[0-9.e-]+,\"analytic_s\":[0-9.e-]+\\}\n$")
  add_test(NAME cde.leverage_const COMMAND stardiff-cde --ns 60 --nv 30 --steps 10 --leverage ${PROJECT_SOURCE_DIR}/apps/cde/testdata/leverage_const.csv)
  set_tests_properties(cde.leverage_const PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "analytic_price = n/a")
  add_test(NAME cde.help COMMAND stardiff-cde --help)
  set_tests_properties(cde.help PROPERTIES LABELS integration PASS_REGULAR_EXPRESSION "usage: stardiff-cde")
  foreach(sched eager lws dmda)
    add_test(NAME cde.bitwise_${sched} COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:stardiff-cde>
      -DLEV=${PROJECT_SOURCE_DIR}/apps/cde/testdata/leverage_skew.csv
      -P ${PROJECT_SOURCE_DIR}/apps/cde/check_bitwise.cmake)
    set_tests_properties(cde.bitwise_${sched} PROPERTIES LABELS integration
      ENVIRONMENT "${STARDIFF_TEST_ENV};STARPU_SCHED=${sched}")
  endforeach()
  add_test(NAME cde.adjoint_json COMMAND stardiff-cde --json --adjoint --checkpoints 3 --ns 40 --nv 20 --steps 10 --damping 1)
  set_tests_properties(cde.adjoint_json PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "\"greeks\":\\{\"delta\":[0-9.e-]+,\"gamma\":[0-9.e-]+,\"v0\":[0-9.e-]+,\"kappa\":-?[0-9.e-]+,\"theta\":-?[0-9.e-]+,\"sigma\":-?[0-9.e-]+,\"rho\":-?[0-9.e-]+,\"rd\":[0-9.e-]+,\"vega\":[0-9.e-]+\\},\"checkpointing\":\"revolve\\(11, 3\\)\",\"tape_steps\":11,\"recomputed_steps\":[1-9][0-9]*,\"peak_bytes\":[1-9][0-9]*,.*\"adjoint_factor\":[0-9.e-]+\\}")
  add_test(NAME cde.adjoint_leverage COMMAND stardiff-cde --adjoint --ns 40 --nv 20 --steps 10
    --leverage ${PROJECT_SOURCE_DIR}/apps/cde/testdata/leverage_skew.csv)
  set_tests_properties(cde.adjoint_leverage PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "greeks: leverage: 15 nodes, sum = [0-9.e-]+, max [^\n]*\ncheckpointing = save-all  recomputed_steps = 0")
  # The kernels' adjoint_reads masks, checked (SavePolicy::Verify: undeclared primals read as NaN).
  add_test(NAME cde.adjoint_verify_reads COMMAND stardiff-cde --adjoint --ns 40 --nv 20 --steps 10 --damping 2 --rf 0.01
    --executor sequential --leverage ${PROJECT_SOURCE_DIR}/apps/cde/testdata/leverage_skew.csv)
  set_tests_properties(cde.adjoint_verify_reads PROPERTIES LABELS integration
    ENVIRONMENT "${STARDIFF_TEST_ENV};STARDIFF_CHECK_ADJOINT_READS=1"
    PASS_REGULAR_EXPRESSION "greeks: kappa = [0-9][0-9.e-]*  theta = [0-9][0-9.e-]*  sigma = -[0-9][0-9.e-]*  rho = [0-9.e-]+  rd = [0-9][0-9.e-]*\ngreeks: leverage: 15 nodes")
  foreach(sched eager lws dmda)
    add_test(NAME cde.adjoint_bitwise_${sched} COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:stardiff-cde>
      -DLEV=${PROJECT_SOURCE_DIR}/apps/cde/testdata/leverage_skew.csv
      -P ${PROJECT_SOURCE_DIR}/apps/cde/check_bitwise_adjoint.cmake)
    set_tests_properties(cde.adjoint_bitwise_${sched} PROPERTIES LABELS "integration;starpu"
      ENVIRONMENT "${STARDIFF_TEST_ENV};STARPU_SCHED=${sched}")
  endforeach()
  set(td ${PROJECT_SOURCE_DIR}/apps/cde/testdata)
  foreach(bad "--rho;1.5" "--rho;-1.01" "--sigma;-0.3" "--kappa;-1" "--theta;-0.1" "--v0;-0.04" "--K;0" "--K;-5"
      "--T;0" "--T;-1" "--ns;4" "--nv;3" "--ns;65536;--nv;65536" "--steps;0" "--damping;-1" "--s0;abc" "--bogus" "--executor;gpu"
      "--leverage;${td}/leverage_negative.csv" "--leverage;${td}/leverage_missing.csv"
      "--leverage;${td}/leverage_nonincreasing.csv" "--leverage;${td}/leverage_nonincreasing_t.csv"
      "--leverage;${td}/leverage_bad_cell.csv" "--leverage;${td}/no_such_file.csv"
      "--adjoint;--checkpoints;0" "--adjoint;--checkpoints;-2" "--adjoint;--checkpoints;abc" "--adjoint;--checkpoints"
      "--checkpoints;3" "--stage-memory;64" "--adjoint;--stage-memory;-1" "--adjoint;--stage-memory;x"
      "--adjoint;--stage-memory" "--adjoint;--rho;1.5" "--adjoint;--sigma;-0.3" "--adjoint;--v0;-0.01")
    string(REPLACE "${td}/" "" short "${bad}")
    string(MAKE_C_IDENTIFIER "${short}" tag)
    add_test(NAME cde.bad_args${tag} COMMAND sh -c "\"$<TARGET_FILE:stardiff-cde>\" --ns 20 --nv 10 --steps 2 \"$@\"; test $? -eq 2" sh ${bad})
    set_tests_properties(cde.bad_args${tag} PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}")
  endforeach()
else()
  stardiff_skipped_test(cde_not_built "stardiff-cde is not built (module mesh or adjoint, or STARDIFF_BUILD_APPS off)")
endif()
