# SPDX-License-Identifier: LGPL-2.1-or-later
# Driver tests of stardiff-poisson (label integration); gradient checks through the
# driver live in tests/integration/test_adjoint_poisson_driver.cpp.
if(TARGET stardiff-poisson)
  add_test(NAME poisson.known_answer COMMAND stardiff-poisson)
  set_tests_properties(poisson.known_answer PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "E = 16\\.517357017670[78]")
  add_test(NAME poisson.json COMMAND stardiff-poisson --json --adjoint --probe 3,4 --tiles 3)
  set_tests_properties(poisson.json PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "^\\{.*\"total_error\":16\\.5173570176708[0-9]*,\"primal_s\":[0-9.e-]+,\"forward_s\":[0-9.e-]+,\"adjoint_s\":[0-9.e-]+,\"adjoint_factor\":[0-9.e-]+,\"tasks\":[0-9]+,\"tape_bytes\":24,\"probes\":\\[\\{\"i\":3,\"j\":4,\"dE_df\":4\\.36459704710[0-9]*e-05,\"dE_du\":-0\\.167233714474[0-9]*\\}\\]\\}\n$")
  add_test(NAME poisson.sequential COMMAND stardiff-poisson --executor sequential --nx 30 --ny 25 --iters 4)
  set_tests_properties(poisson.sequential PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "E = [0-9.]+")
  add_test(NAME poisson.vtk COMMAND sh -c "\"$<TARGET_FILE:stardiff-poisson>\" --adjoint --nx 6 --ny 5 --vtk poisson_test.vtk >/dev/null 2>&1 && grep -c -e '^SCALARS' -e '^DIMENSIONS 6 5 1' poisson_test.vtk")
  set_tests_properties(poisson.vtk PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR} PASS_REGULAR_EXPRESSION "^4\n$")
  add_test(NAME poisson.help COMMAND stardiff-poisson --help)
  set_tests_properties(poisson.help PROPERTIES LABELS integration PASS_REGULAR_EXPRESSION "usage: stardiff-poisson")
  # Reverse accumulation (--mode rev-acc): gradient checks in
  # tests/integration/test_adjoint_poisson_revacc_driver.cpp.
  add_test(NAME poisson.rev_acc COMMAND stardiff-poisson --mode rev-acc --nx 8 --ny 6 --iters 600 --tiles 2)
  set_tests_properties(poisson.rev_acc PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "rev-acc: converged after [0-9]+ adjoint iterations")
  foreach(bad "--nx;abc" "--iters;-3" "--probe;3" "--probe;30,2;--adjoint" "--bogus" "--executor;gpu" "--probe;1,1"
      "--mode;revacc" "--mode" "--mode;rev-acc;--iters;0" "--mode;rev-acc;--tol;0" "--mode;rev-acc;--tol;-1e-9"
      "--mode;rev-acc;--tol;nan" "--mode;rev-acc;--tol;1e-9x" "--mode;rev-acc;--max-adjoint-iters;0"
      "--mode;rev-acc;--max-adjoint-iters;-2" "--mode;rev-acc;--max-adjoint-iters")
    string(MAKE_C_IDENTIFIER "${bad}" tag)
    add_test(NAME poisson.bad_args${tag} COMMAND sh -c "\"$<TARGET_FILE:stardiff-poisson>\" \"$@\"; test $? -eq 2" sh ${bad})
    set_tests_properties(poisson.bad_args${tag} PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}")
  endforeach()
else()
  stardiff_skipped_test(poisson_not_built "stardiff-poisson is not built (module mesh or adjoint, or STARDIFF_BUILD_APPS off)")
endif()
