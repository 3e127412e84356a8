# SPDX-License-Identifier: LGPL-2.1-or-later
# Driver tests of stardiff-heat (label integration): J reproducible (known value, both
# executors), Taylor order ~2, dot-product test, --json one object, bad options exit 2; and the
# compile-time check of execute_external's adjoint arity (bad_arity.cxx must not compile).
if(TARGET stardiff-heat)
  set(heat_J "J = 0\\.05541158182300[0-9]*")
  add_test(NAME heat.known_answer COMMAND stardiff-heat)
  set_tests_properties(heat.known_answer PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "${heat_J}")
  add_test(NAME heat.sequential COMMAND stardiff-heat --executor sequential)
  set_tests_properties(heat.sequential PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "${heat_J}")
  add_test(NAME heat.taylor COMMAND stardiff-heat --n 24 --steps 5)
  set_tests_properties(heat.taylor PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "taylor: remainder order = (1\\.9[0-9]*|2\\.0[0-9]*|2\\.1[0-9]*) \\(passed\\)")
  add_test(NAME heat.dot COMMAND stardiff-heat --n 24 --steps 5)
  set_tests_properties(heat.dot PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "dot-product test: rel_diff = [0-9.e+-]+ \\(passed\\)")
  add_test(NAME heat.json COMMAND stardiff-heat --json --n 16 --steps 3 --probe 3,4 --probe 0,15)
  set_tests_properties(heat.json PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "^\\{\"n\":16,.*\"J\":[0-9.e-]+,\"primal_s\":[0-9.e-]+,\"forward_s\":[0-9.e-]+,\"adjoint_s\":[0-9.e-]+,\"adjoint_factor\":[0-9.e-]+,.*\"taylor_passed\":true,.*\"dot_passed\":true,\"probes\":\\[\\{\"i\":3,\"j\":4,\"dJ_dT0\":[0-9.e-]+,\"dJ_dkappa\":[0-9.e-]+\\},\\{\"i\":0,\"j\":15,\"dJ_dT0\":[0-9.e-]+,\"dJ_dkappa\":[0-9.e-]+\\}\\]\\}\n$")
  add_test(NAME heat.help COMMAND stardiff-heat --help)
  set_tests_properties(heat.help PROPERTIES LABELS integration PASS_REGULAR_EXPRESSION "usage: stardiff-heat")
  foreach(bad "--n;abc" "--n;1" "--dt;-1" "--dt;x" "--steps;0" "--probe;3" "--probe;64,0" "--bogus" "--executor;gpu")
    string(MAKE_C_IDENTIFIER "${bad}" tag)
    add_test(NAME heat.bad_args${tag} COMMAND sh -c "\"$<TARGET_FILE:stardiff-heat>\" \"$@\"; test $? -eq 2" sh ${bad})
    set_tests_properties(heat.bad_args${tag} PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}")
  endforeach()
  add_test(NAME heat.external_bad_arity COMMAND sh -c "${CMAKE_CXX_COMPILER} -std=c++20 -fsyntax-only -I${PROJECT_SOURCE_DIR}/include -I${PROJECT_BINARY_DIR}/include ${PROJECT_SOURCE_DIR}/apps/heat/bad_arity.cxx 2>&1")
  set_tests_properties(heat.external_bad_arity PROPERTIES LABELS unit
    PASS_REGULAR_EXPRESSION "execute_external: the adjoint function has the wrong number of parameters")
else()
  stardiff_skipped_test(heat_not_built "stardiff-heat is not built (module mesh, adjoint or sparse, or STARDIFF_BUILD_APPS off)")
endif()
