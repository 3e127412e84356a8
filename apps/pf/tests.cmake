# SPDX-License-Identifier: LGPL-2.1-or-later
# Driver tests of stardiff-pf (label integration; those reading ../shared/data: integration;data).
# Exit codes, CSV and JSON conventions are checked in detail by tests/integration/
# test_powerflow_driver.cpp and tests/data/test_powerflow_driver_cases.cpp.
if(TARGET stardiff-pf)
  set(_pf6 ${PROJECT_SOURCE_DIR}/apps/pf/testdata/pf6.m)
  add_test(NAME pf.help COMMAND stardiff-pf --help)
  set_tests_properties(pf.help PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "usage: stardiff-pf CASE.m")
  add_test(NAME pf.json COMMAND stardiff-pf ${_pf6} --json)
  set_tests_properties(pf.json PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "\\{\"case\":\"pf6\",\"buses\":6,\"branches\":7,\"converged\":true,\"status\":\"converged\",\"iterations\":3,")
  add_test(NAME pf.batch_random COMMAND stardiff-pf ${_pf6} --batch-random 5 --json)
  set_tests_properties(pf.batch_random PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "\"batch\":5,\"converged\":true,\"failed\":0,.*\"scenarios\":\\[\\{\"scenario\":0,\"converged\":true,")
  add_test(NAME pf.bad_option COMMAND stardiff-pf ${_pf6} --bogus)
  set_tests_properties(pf.bad_option PROPERTIES LABELS integration WILL_FAIL TRUE)
  set(_pegase ${STARDIFF_SHARED_DATA}/matpower/case9241pegase.m)
  stardiff_unless_exists(_skip ${_pegase})
  add_test(NAME pf.case9241pegase COMMAND ${_skip} $<TARGET_FILE:stardiff-pf> ${_pegase} --json)
  set_tests_properties(pf.case9241pegase PROPERTIES LABELS "integration;data" ENVIRONMENT "${STARDIFF_TEST_ENV}"
    ${STARDIFF_SKIP_PROPS}
    PASS_REGULAR_EXPRESSION "\"converged\":true,\"status\":\"converged\",\"iterations\":6,.*\"colors\":84,\"color_lower_bound\":84,")
  add_test(NAME pf.case9241pegase_batch COMMAND ${_skip} $<TARGET_FILE:stardiff-pf> ${_pegase} --batch-random 8 --json)
  set_tests_properties(pf.case9241pegase_batch PROPERTIES LABELS "integration;data" ENVIRONMENT "${STARDIFF_TEST_ENV}"
    ${STARDIFF_SKIP_PROPS}
    PASS_REGULAR_EXPRESSION "\"batch\":8,\"converged\":true,\"failed\":0,.*\"base_iterations\":6,")
else()
  stardiff_skipped_test(pf_not_built "stardiff-pf is not built (module powerflow or STARDIFF_BUILD_APPS off)")
endif()
