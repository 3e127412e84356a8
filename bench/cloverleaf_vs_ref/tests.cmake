# SPDX-License-Identifier: LGPL-2.1-or-later
# Tests of bench/cloverleaf_vs_ref (label bench; no timing is asserted):
#   bench.cloverleaf_vs_ref.bad_args_N   run.py refuses bad arguments with exit 2 (no peer needed);
#   bench.cloverleaf_vs_ref.fake_*       run.py against stand-ins (test/fake_*.sh) for both
#                                        programs: what it hands them, what it parses and prints,
#                                        its exit codes, its skip message (no peer needed);
#   bench.cloverleaf_vs_ref.tp1          the real reference on tp1 (clover.in_default): PASSED;
#   bench.cloverleaf_vs_ref.oracle_*     the real reference reproduces the recorded outputs of
#                                        apps/cloverleaf/testdata (timer lines aside).
# The last two groups need the reference built (cmake --build build --target cloverleaf_ref
# cloverleaf_ref_fullprec, or one run of run.py): they are skipped until then, and replaced by
# one skipped test where the peer, gfortran or Open MPI is absent.
find_program(STARDIFF_PYTHON3 python3)
set(_cv_dir ${PROJECT_SOURCE_DIR}/bench/cloverleaf_vs_ref)
set(_cv_run ${_cv_dir}/run.py)
set(_cv_td ${PROJECT_SOURCE_DIR}/apps/cloverleaf/testdata)
set(_cv_tp1 ${_cv_td}/tp1_every_step.clover.in)
if(NOT STARDIFF_PYTHON3)
  stardiff_skipped_test(bench.cloverleaf_vs_ref_no_python "python3 not found" bench)
  return()
endif()
set(_cv_py ${STARDIFF_PYTHON3} ${_cv_run})
# _cv_exit0 CMD...: runs CMD and prints "run.py exit=STATUS" (the tests that match output would
# otherwise ignore the exit status).
set(_cv_exit0 sh -c "\"$0\" \"$@\" && echo run.py exit=0 || echo run.py exit=$?")

set(_cv_i 0)
foreach(bad "--repeats;0" "--repeats;x" "--threads;0" "--end-step;-1" "--end-step;0" "--summary-frequency;y"
    "--deck;/nonexistent/clover.in" "--deck;${_cv_run}" "--executor;gpu" "--bogus" "--ref;/nonexistent/clover_leaf")
  math(EXPR _cv_i "${_cv_i} + 1")
  add_test(NAME bench.cloverleaf_vs_ref.bad_args_${_cv_i}
    COMMAND sh -c "\"$0\" \"$@\"; test $? -eq 2" ${_cv_py} --build-dir /nonexistent --deck ${_cv_tp1} ${bad})
  set_tests_properties(bench.cloverleaf_vs_ref.bad_args_${_cv_i} PROPERTIES LABELS bench)
endforeach()

# Stand-ins: the reference writes tp1's recorded clover.out (75 steps, KE 0.1823E+01, PASSED),
# stardiff prints KE 1.8228036731025794 and 75 steps.
set(_cv_fake_ref ${_cv_dir}/test/fake_reference.sh)
set(_cv_fake_sd ${_cv_dir}/test/fake_stardiff.sh)
set(_cv_fake_env FAKE_OUT=${_cv_td}/tp1_every_step.fortran.clover.out)
set(_cv_fake ${_cv_py} --build-dir ${CMAKE_CURRENT_BINARY_DIR}/cloverleaf_vs_ref_none --deck ${_cv_tp1} --ref ${_cv_fake_ref})
set(_cv_num "[0-9]+\\.[0-9]+")
add_test(NAME bench.cloverleaf_vs_ref.fake_both COMMAND ${_cv_exit0} ${_cv_fake} --stardiff ${_cv_fake_sd} --repeats 2)
set_tests_properties(bench.cloverleaf_vs_ref.fake_both PROPERTIES LABELS bench ENVIRONMENT "${_cv_fake_env}"
  PASS_REGULAR_EXPRESSION "run tool=stardiff repeat=2 .*\ncloverleaf_vs_ref deck=tp1_every_step.clover.in steps=75 threads=2 repeats=2 ref_s=${_cv_num} stardiff_s=${_cv_num} ref_ke=1.823 stardiff_ke=1.822803673 ke_rel_diff=0.000108 ref_passed=yes ref_loop_s=0.010 stardiff_wall_s=0.010 ref_cpu_s=${_cv_num} stardiff_cpu_s=${_cv_num} ratio_own_timers=0.958 load_start=${_cv_num} load_end=${_cv_num} ratio=${_cv_num}\nrun.py exit=0\n$")
# --end-step: the deck holds end_step=7 and summary_frequency=3 (not =1); a NOT PASSED does not
# count (the test_problem KE is the full run's): ref_passed=na and exit 0.
add_test(NAME bench.cloverleaf_vs_ref.fake_deck_rewrite
  COMMAND ${_cv_exit0} ${_cv_fake} --stardiff ${_cv_fake_sd} --repeats 1 --threads 1 --end-step 7 --summary-frequency 3)
set_tests_properties(bench.cloverleaf_vs_ref.fake_deck_rewrite PROPERTIES LABELS bench
  ENVIRONMENT "${_cv_fake_env};FAKE_THREADS=1;FAKE_EXPECT=end_step=7;FAKE_ABSENT=summary_frequency=1;FAKE_FAIL=1"
  PASS_REGULAR_EXPRESSION "steps=75 threads=1 repeats=1 .* ref_passed=na .*\nrun.py exit=0\n$")
add_test(NAME bench.cloverleaf_vs_ref.fake_ref_only COMMAND ${_cv_exit0} ${_cv_fake} --repeats 1)
set_tests_properties(bench.cloverleaf_vs_ref.fake_ref_only PROPERTIES LABELS bench ENVIRONMENT "${_cv_fake_env}"
  PASS_REGULAR_EXPRESSION "stardiff-cloverleaf not run .*: running the reference only\n.*cloverleaf_vs_ref deck=tp1_every_step.clover.in steps=75 threads=2 repeats=1 ref_s=${_cv_num} stardiff_s=na ref_ke=1.823 stardiff_ke=na ke_rel_diff=na ref_passed=yes .* ratio=na\nrun.py exit=0\n$")
foreach(case "not_passed;FAKE_FAIL=1" "ref_crash;FAKE_RC=5" "step_mismatch;FAKE_STEPS=74")
  list(GET case 0 name)
  list(GET case 1 env)
  add_test(NAME bench.cloverleaf_vs_ref.fake_${name}
    COMMAND sh -c "\"$0\" \"$@\"; test $? -eq 1" ${_cv_fake} --stardiff ${_cv_fake_sd} --repeats 1)
  set_tests_properties(bench.cloverleaf_vs_ref.fake_${name} PROPERTIES LABELS bench ENVIRONMENT "${_cv_fake_env};${env}")
endforeach()
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/cloverleaf_vs_ref_unavailable/bench/cloverleaf_vs_ref/cloverleaf_vs_ref.cfg
  "unavailable=the reason the build tree gives\n")
add_test(NAME bench.cloverleaf_vs_ref.fake_unavailable
  COMMAND ${_cv_exit0} ${_cv_py} --build-dir ${CMAKE_CURRENT_BINARY_DIR}/cloverleaf_vs_ref_unavailable --deck ${_cv_tp1})
set_tests_properties(bench.cloverleaf_vs_ref.fake_unavailable PROPERTIES LABELS bench
  PASS_REGULAR_EXPRESSION "^cloverleaf_vs_ref: skipped: the Fortran reference is unavailable: the reason the build tree gives\nrun.py exit=0\n$")

if(TARGET cloverleaf_ref)
  set(_cv_bin ${PROJECT_BINARY_DIR}/bench/cloverleaf_vs_ref)
  set(_cv_exe ${_cv_bin}/CloverLeaf_ref/clover_leaf)
  set(_cv_exe_fp ${_cv_bin}/CloverLeaf_ref_fullprec/clover_leaf)
  set(_cv_deck ${STARDIFF_SHARED_DATA}/cloverleaf/OPS_apps_c_CloverLeaf/clover.in_default)
  stardiff_unless_exists(_cv_if_deck ${_cv_deck})
  stardiff_unless_exists(_cv_if_exe ${_cv_exe})
  stardiff_unless_exists(_cv_if_exe_fp ${_cv_exe_fp})
  add_test(NAME bench.cloverleaf_vs_ref.tp1 COMMAND ${_cv_if_deck} ${_cv_if_exe} ${_cv_exit0} ${_cv_py}
    --build-dir ${PROJECT_BINARY_DIR} --no-build --ref-only --repeats 1 --deck ${_cv_deck})
  set_tests_properties(bench.cloverleaf_vs_ref.tp1 PROPERTIES LABELS bench ${STARDIFF_SKIP_PROPS} TIMEOUT 300
    PASS_REGULAR_EXPRESSION "cloverleaf_vs_ref deck=clover.in_default steps=75 threads=2 repeats=1 ref_s=${_cv_num} stardiff_s=na ref_ke=1.823 .* ref_passed=yes .*\nrun.py exit=0\n$")
  set(_cv_check sh ${_cv_dir}/test/check_oracle.sh ${_cv_run} ${PROJECT_BINARY_DIR})
  foreach(case "tp1;tp1_every_step;fortran;2;;${_cv_if_exe}"
      "tp1_fullprec;tp1_every_step;fortran_fullprec;2;--fullprec;${_cv_if_exe_fp}"
      "bm_short_5steps;bm_short_5steps;fortran;2;;${_cv_if_exe}"
      "bm_short_5steps_fullprec;bm_short_5steps;fortran_fullprec;2;--fullprec;${_cv_if_exe_fp}"
      "bm_short_5steps_fullprec_1thread;bm_short_5steps;fortran_fullprec_1thread;1;--fullprec;${_cv_if_exe_fp}")
    list(GET case 0 name)
    list(GET case 1 stem)
    list(GET case 2 kind)
    list(GET case 3 threads)
    list(GET case 4 extra)
    list(SUBLIST case 5 -1 guard)
    add_test(NAME bench.cloverleaf_vs_ref.oracle_${name} COMMAND ${guard} ${_cv_check}
      ${_cv_td}/${stem}.clover.in ${_cv_td}/${stem}.${kind}.clover.out ${threads} ${extra})
    set_tests_properties(bench.cloverleaf_vs_ref.oracle_${name} PROPERTIES LABELS bench ${STARDIFF_SKIP_PROPS} TIMEOUT 300
      PASS_REGULAR_EXPRESSION "check_oracle: ${stem}.${kind}.clover.out reproduced")
  endforeach()
else()
  stardiff_skipped_test(bench.cloverleaf_vs_ref.reference_not_buildable
    "the Fortran reference CloverLeaf cannot be built here (see bench/cloverleaf_vs_ref/cloverleaf_vs_ref.cfg in the build tree)" bench)
endif()
