# SPDX-License-Identifier: LGPL-2.1-or-later
# Driver tests of stardiff-cloverleaf (label integration; the comparison with the reference
# output in ../shared/data also data): test problem 1 passes CloverLeaf's check (also
# transposed, so the shock runs along y) and prints the Fortran reference's summary table
# digit for digit; 5 steps of bm_short (960^2) print the Fortran reference's rows (recorded
# in reference/); StarPU (eager, lws, dmda) and the sequential executor, on several tilings,
# agree bitwise; --json is one object; --vtk writes the fields; malformed decks exit 2 with
# the file and line; unknown keys are warned about. test_cloverleaf_kernel_adjoints (label
# unit) checks the kernels' adjoints loop by loop (test_kernel_adjoints.cpp).
if(TARGET stardiff-cloverleaf)
  set(_cl ${PROJECT_SOURCE_DIR}/apps/cloverleaf)
  # The adjoints of the kernels carrying dt against central differences (unit).
  stardiff_test_binary(${_cl}/test_dt_adjoints.cpp)
  target_include_directories(test_dt_adjoints PRIVATE ${_cl})
  add_test(NAME cloverleaf.dt_adjoints COMMAND test_dt_adjoints)
  set_tests_properties(cloverleaf.dt_adjoints PROPERTIES LABELS unit ENVIRONMENT "${STARDIFF_TEST_ENV}")
  set(_drv $<TARGET_FILE:stardiff-cloverleaf>)
  set(_tp1 ${_cl}/decks/clover.in_default)
  set(_pass "This test is considered PASSED")
  add_test(NAME cloverleaf.tp1 COMMAND stardiff-cloverleaf ${_tp1})
  add_test(NAME cloverleaf.tp1_sequential COMMAND stardiff-cloverleaf ${_tp1} --executor sequential)
  add_test(NAME cloverleaf.tp1_transposed COMMAND stardiff-cloverleaf ${_cl}/decks/clover_tp1_transposed.in)
  # the same deck in every spelling CloverLeaf's parser takes (case, separators, comments, 4.0d-2)
  add_test(NAME cloverleaf.tp1_syntax COMMAND stardiff-cloverleaf ${_cl}/decks/clover_tp1_syntax.in --executor sequential)
  set_tests_properties(cloverleaf.tp1 cloverleaf.tp1_sequential cloverleaf.tp1_transposed cloverleaf.tp1_syntax PROPERTIES
    LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}" PASS_REGULAR_EXPRESSION "${_pass}")

  set(_ref1 ${STARDIFF_SHARED_DATA}/cloverleaf/reference_outputs/tp1_clover_in_default_10x2.fortran.clover.out)
  stardiff_unless_exists(_skip ${_ref1})
  add_test(NAME cloverleaf.tp1_fortran_table COMMAND ${_skip} sh ${_cl}/compare_summary.sh ${_ref1} ${_drv} ${_tp1})
  add_test(NAME cloverleaf.tp1_transposed_fortran_table COMMAND ${_skip} sh ${_cl}/compare_summary.sh ${_ref1} ${_drv}
    ${_cl}/decks/clover_tp1_transposed.in --executor sequential)
  add_test(NAME cloverleaf.tp1_syntax_fortran_table COMMAND ${_skip} sh ${_cl}/compare_summary.sh ${_ref1} ${_drv}
    ${_cl}/decks/clover_tp1_syntax.in --executor sequential)
  set_tests_properties(cloverleaf.tp1_fortran_table cloverleaf.tp1_transposed_fortran_table
    cloverleaf.tp1_syntax_fortran_table PROPERTIES
    LABELS "integration;data" ENVIRONMENT "${STARDIFF_TEST_ENV}" ${STARDIFF_SKIP_PROPS})
  add_test(NAME cloverleaf.bm_short_5steps_fortran_table COMMAND sh ${_cl}/compare_summary.sh
    ${_cl}/reference/clover_bm_short_5steps.fortran.summary ${_drv} ${_cl}/decks/clover_bm_short.in --end-step 5)
  set_tests_properties(cloverleaf.bm_short_5steps_fortran_table PROPERTIES LABELS integration
    ENVIRONMENT "${STARDIFF_TEST_ENV}" TIMEOUT 600)

  add_test(NAME cloverleaf.bitwise_circle COMMAND sh ${_cl}/same_json.sh ${_drv} ${_cl}/decks/clover_circle.in 10)
  add_test(NAME cloverleaf.bitwise_bm_short COMMAND sh ${_cl}/same_json.sh ${_drv} ${_cl}/decks/clover_bm_short.in 2)
  set_tests_properties(cloverleaf.bitwise_circle cloverleaf.bitwise_bm_short PROPERTIES LABELS "integration;starpu"
    ENVIRONMENT "${STARDIFF_TEST_ENV}" TIMEOUT 900)

  add_test(NAME cloverleaf.json COMMAND sh -c "\"$0\" \"$1\" --json 2>/dev/null" ${_drv} ${_tp1})
  set_tests_properties(cloverleaf.json PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "^\\{\"deck\":[^\n]*\"steps\":75,\"time\":3\\.0000[0-9]*,\"wall_s\":[0-9.e-]+,\"dt_history\":\\[0\\.04[0-9]*,[^\n]*\\],\"dt_control\":\\[\"[a-z]+\"[^\n]*\\],\"summary\":\\{\"volume\":20(\\.0*)?,\"mass\":12(\\.0*)?[0-9]*,\"density\":0\\.[0-9]+,\"pressure\":0\\.50[0-9]+,\"ie\":25\\.[0-9]+,\"ke\":1\\.8228[0-9]+,\"te\":26\\.[0-9]+\\},\"test_problem\":1,\"test_passed\":true,\"qa_diff\":[0-9.e-]+,\"ke_ref\":1\\.82280367310258[0-9]*\\}\n$")
  add_test(NAME cloverleaf.vtk COMMAND sh -c "\"$0\" \"$1\" --vtk \"$2\" >/dev/null 2>&1 && grep -c -E '^(SCALARS (density|energy|pressure)|VECTORS velocity)' \"$2\""
    ${_drv} ${_tp1} ${CMAKE_CURRENT_BINARY_DIR}/cloverleaf_tp1.vtk)
  set_tests_properties(cloverleaf.vtk PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "^4\n$")
  # --adjoint (adjoint_check.py reads the JSON): dobj_dstate against central differences of
  # the deck's state values (tp1 whole run, Revolve default; the circle deck's 4 states on
  # StarPU; every objective); --passive-dt against central differences with dt held at the
  # run's values, and different from the active-dt gradient; the Taylor test; Revolve for
  # several (steps, snapshots) bitwise equal to save-all; the sequential executor and StarPU
  # under eager, lws, dmda bitwise equal (3 tiles); the dot-product test (--dot-test);
  # --adjoint-vtk writes the gradient fields.
  find_program(STARDIFF_PYTHON3 python3)
  if(STARDIFF_PYTHON3)
    set(_ac ${STARDIFF_PYTHON3} ${_cl}/adjoint_check.py)
    set(_circle ${_cl}/decks/clover_circle.in)
    add_test(NAME cloverleaf.adjoint_fd_tp1 COMMAND ${_ac} fd ${_drv} ${_tp1} --executor sequential)
    add_test(NAME cloverleaf.adjoint_fd_circle COMMAND ${_ac} fd ${_drv} ${_circle} --end-step 10)
    foreach(obj ie pressure mass-weighted-energy)
      add_test(NAME cloverleaf.adjoint_fd_circle_${obj} COMMAND ${_ac} fd ${_drv} ${_circle} --end-step 6
        --objective ${obj} --executor sequential)
    endforeach()
    # tp1's and the circle deck's dt are clamps (max_timestep, timestep_rise) at every step;
    # clover_circle_dt.in's are the cells' limits from step 6 on.
    set(_cdt ${_cl}/decks/clover_circle_dt.in)
    add_test(NAME cloverleaf.adjoint_fd_active_dt COMMAND ${_ac} fd ${_drv} ${_cdt} --end-step 12 --executor sequential)
    add_test(NAME cloverleaf.adjoint_fd_passive_dt COMMAND ${_ac} fd ${_drv} ${_cdt} --end-step 12 --passive-dt
      --executor sequential)
    add_test(NAME cloverleaf.adjoint_passive_dt_differs COMMAND ${_ac} differ ${_drv} ${_cdt} --end-step 12
      --executor sequential -- -- --passive-dt)
    add_test(NAME cloverleaf.adjoint_taylor COMMAND ${_ac} taylor ${_drv} ${_tp1} --executor sequential)
    add_test(NAME cloverleaf.adjoint_revolve_bitwise COMMAND ${_ac} same ${_drv} ${_tp1} --executor sequential
      -- --checkpoints all -- --checkpoints 1 -- --checkpoints 3 -- --checkpoints 7 -- --checkpoints 25
      -- --checkpoints 75 -- --checkpoints 3 --end-step 75 -- --checkpoints 100)
    add_test(NAME cloverleaf.adjoint_revolve_bitwise_short COMMAND ${_ac} same ${_drv} ${_cdt} --end-step 9 --tiles 3
      -- --checkpoints all -- --checkpoints 1 -- --checkpoints 2 -- --checkpoints 4 -- --checkpoints 9)
    add_test(NAME cloverleaf.adjoint_executors_bitwise COMMAND ${_ac} same ${_drv} ${_cdt} --end-step 5 --tiles 3
      -- --executor sequential -- STARPU_SCHED=eager -- STARPU_SCHED=lws -- STARPU_SCHED=dmda
      -- STARPU_SCHED=dmda --checkpoints all)
    set_tests_properties(cloverleaf.adjoint_fd_tp1 cloverleaf.adjoint_fd_circle cloverleaf.adjoint_fd_circle_ie
      cloverleaf.adjoint_fd_circle_pressure cloverleaf.adjoint_fd_circle_mass-weighted-energy
      cloverleaf.adjoint_fd_active_dt cloverleaf.adjoint_fd_passive_dt cloverleaf.adjoint_passive_dt_differs cloverleaf.adjoint_taylor
      cloverleaf.adjoint_revolve_bitwise cloverleaf.adjoint_revolve_bitwise_short cloverleaf.adjoint_executors_bitwise
      PROPERTIES LABELS "integration;starpu" ENVIRONMENT "${STARDIFF_TEST_ENV}" PASS_REGULAR_EXPRESSION "PASSED\n$"
      TIMEOUT 600)
  else()
    stardiff_skipped_test(cloverleaf.adjoint_no_python "python3 not found (the --adjoint checks read its JSON)")
  endif()
  # Dot-product test of initial -> final fields: <J v, w> (central differences) = <v, J^T w>.
  add_test(NAME cloverleaf.adjoint_dot_tp1 COMMAND stardiff-cloverleaf ${_tp1} --adjoint --dot-test --executor sequential)
  add_test(NAME cloverleaf.adjoint_dot_circle_dt COMMAND stardiff-cloverleaf ${_cl}/decks/clover_circle_dt.in --end-step 12
    --adjoint --dot-test --tiles 3)
  set_tests_properties(cloverleaf.adjoint_dot_tp1 cloverleaf.adjoint_dot_circle_dt PROPERTIES LABELS integration
    ENVIRONMENT "${STARDIFF_TEST_ENV}" PASS_REGULAR_EXPRESSION "dot-product test: [^\n]*rel_diff [^\n]*\\(passed\\)" TIMEOUT 600)
  add_test(NAME cloverleaf.adjoint_vtk COMMAND sh -c "\"$0\" \"$1\" --adjoint --adjoint-vtk \"$2\" --executor sequential >/dev/null 2>&1 && grep -c -E '^(SCALARS (dobj_ddensity0|dobj_denergy0)|VECTORS dobj_dvelocity0)' \"$2\""
    ${_drv} ${_tp1} ${CMAKE_CURRENT_BINARY_DIR}/cloverleaf_tp1_gradient.vtk)
  set_tests_properties(cloverleaf.adjoint_vtk PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "^3\n$")
  add_test(NAME cloverleaf.help COMMAND stardiff-cloverleaf --help)
  set_tests_properties(cloverleaf.help PROPERTIES LABELS integration PASS_REGULAR_EXPRESSION "usage: stardiff-cloverleaf")

  # Malformed decks: exit 2, the message names the file and the line.
  foreach(pair
      "bad_number|bad_number\\.in:4: 'x_cells' needs an integer"
      "bad_integer|bad_integer\\.in:13: 'end_step' needs an integer"
      "bad_state_number|bad_state_number\\.in:3: 'density' needs a number"
      "no_geometry|no_geometry\\.in:3: state 2: no geometry"
      "bad_geometry|bad_geometry\\.in:3: state 2: geometry 'triangle'"
      "zero_cells|zero_cells\\.in:4: x_cells must be > 0"
      "end_time_zero|end_time_zero\\.in:12: end_time must be > 0"
      "no_endclover|no_endclover\\.in:12: the deck ends without '\\*endclover'"
      "state1_geometry|state1_geometry\\.in:2: state 1: state 1 is the background"
      "missing_value|missing_value\\.in:13: 'xmax' needs a value"
      "missing_key|missing_key\\.in:12: required key 'y_cells' missing"
      "state_twice|state_twice\\.in:4: state 2 defined twice"
      "state_gap|state_gap\\.in:3: state 2 is missing"
      "no_density|no_density\\.in:2: state 1: no density"
      "no_state1|no_state1\\.in:2: state 1 is missing"
      "one_row|one_row\\.in: y_cells = 1: at least 2 rows"
      "not_a_deck|not_a_deck\\.in: no '\\*clover' line")
    string(REPLACE "|" ";" p "${pair}")
    list(GET p 0 name)
    list(GET p 1 re)
    add_test(NAME cloverleaf.bad_deck.${name} COMMAND sh ${_cl}/expect_error.sh ${_drv} ${_cl}/decks/bad/${name}.in "${re}")
    set_tests_properties(cloverleaf.bad_deck.${name} PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}")
  endforeach()
  add_test(NAME cloverleaf.bad_deck.absent COMMAND sh ${_cl}/expect_error.sh ${_drv} ${_cl}/decks/no_such_deck.in
    "no_such_deck\\.in: cannot open")
  set_tests_properties(cloverleaf.bad_deck.absent PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}")
  add_test(NAME cloverleaf.warn_unknown_key COMMAND sh -c "\"$0\" \"$1\" --executor sequential 2>&1 >/dev/null; echo exit=$?"
    ${_drv} ${_cl}/decks/warn_unknown_key.in)
  set_tests_properties(cloverleaf.warn_unknown_key PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "warning: [^\n]*warn_unknown_key\\.in:14: unknown key 'foo_option' ignored\nexit=0")
  foreach(bad "--end-step;0" "--end-step;x" "--tiles;0" "--executor;gpu" "--bogus" "--vtk"
      "--adjoint;--checkpoints;0" "--adjoint;--checkpoints;x" "--adjoint;--checkpoints;-3" "--adjoint;--checkpoints"
      "--adjoint;--objective;bogus" "--adjoint;--objective" "--checkpoints;5" "--taylor" "--passive-dt"
      "--adjoint;--fd-check;0" "--adjoint;--adjoint-vtk")
    string(MAKE_C_IDENTIFIER "${bad}" tag)
    add_test(NAME cloverleaf.bad_args${tag} COMMAND sh -c "\"$0\" \"$1\" \"$@\"; test $? -eq 2" ${_drv} ${_tp1} ${bad})
    set_tests_properties(cloverleaf.bad_args${tag} PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}")
  endforeach()
  # The adjoints of the kernels, loop by loop (dot-product tests and central differences).
  add_executable(test_cloverleaf_kernel_adjoints ${_cl}/test_kernel_adjoints.cpp ${_cl}/clover.cpp ${_cl}/deck.cpp)
  target_link_libraries(test_cloverleaf_kernel_adjoints PRIVATE stardiff stardiff_gtest_main GTest::gtest)
  add_test(NAME test_cloverleaf_kernel_adjoints COMMAND test_cloverleaf_kernel_adjoints)
  set_tests_properties(test_cloverleaf_kernel_adjoints PROPERTIES LABELS unit ENVIRONMENT "${STARDIFF_TEST_ENV}"
    SKIP_RETURN_CODE 77 TIMEOUT 900)
  add_test(NAME cloverleaf.bad_args_no_deck COMMAND sh -c "\"$0\"; test $? -eq 2" ${_drv})
  set_tests_properties(cloverleaf.bad_args_no_deck PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}")
else()
  stardiff_skipped_test(cloverleaf_not_built "stardiff-cloverleaf is not built (module mesh or STARDIFF_BUILD_APPS off)")
endif()
