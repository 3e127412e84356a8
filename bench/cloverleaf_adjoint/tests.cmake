# SPDX-License-Identifier: LGPL-2.1-or-later
# Tests of bench/cloverleaf_adjoint/run.py (label bench; no timing is asserted): bad arguments
# exit 2; a smoke run on test problem 1 (Revolve with 2 snapshots and save-all, then the disk-node
# run with STARPU_LIMIT_CPU_MEM=4, whose gradient must equal the in-memory one).
find_program(STARDIFF_PYTHON3 python3)
if(NOT STARDIFF_PYTHON3 OR NOT TARGET stardiff-cloverleaf)
  stardiff_skipped_test(bench.cloverleaf_adjoint_not_run "python3 or stardiff-cloverleaf missing" bench)
  return()
endif()
set(_ca ${STARDIFF_PYTHON3} ${PROJECT_SOURCE_DIR}/bench/cloverleaf_adjoint/run.py --driver $<TARGET_FILE:stardiff-cloverleaf>)
set(_ca_i 0)
foreach(bad "--snapshots;0" "--snapshots;x" "--snapshots;" "--end-step;-1" "--disk;-5" "--deck;/nonexistent.in")
  math(EXPR _ca_i "${_ca_i} + 1")
  add_test(NAME bench.cloverleaf_adjoint.bad_args_${_ca_i} COMMAND sh -c "\"$0\" \"$@\"; test $? -eq 2" ${_ca} ${bad})
  set_tests_properties(bench.cloverleaf_adjoint.bad_args_${_ca_i} PROPERTIES LABELS bench ENVIRONMENT "${STARDIFF_TEST_ENV}")
endforeach()
add_test(NAME bench.cloverleaf_adjoint.tp1 COMMAND ${_ca} --deck ${PROJECT_SOURCE_DIR}/apps/cloverleaf/decks/clover.in_default
  --snapshots 2,all --disk 4)
set_tests_properties(bench.cloverleaf_adjoint.tp1 PROPERTIES LABELS bench ENVIRONMENT "${STARDIFF_TEST_ENV}" TIMEOUT 600
  PASS_REGULAR_EXPRESSION "snapshots=2 checkpointing=revolve\\(75,2\\)[^\n]*\n[^\n]*snapshots=all checkpointing=save-all[^\n]*\n[^\n]*disk=1")
