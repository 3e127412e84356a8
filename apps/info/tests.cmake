# SPDX-License-Identifier: LGPL-2.1-or-later
# Driver tests of stardiff-info (label integration).
if(TARGET stardiff-info)
  add_test(NAME info.json COMMAND stardiff-info --json)
  set_tests_properties(info.json PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "^\\{\"stardiff_version\":\"[0-9.]+\",\"starpu_version\":\"1\\.[34]\\.[0-9]+\".*\"cpu_workers\":2,")
  add_test(NAME info.human COMMAND stardiff-info)
  set_tests_properties(info.human PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "STARPU_MAXCPUS [0-9]+, STARPU_NMAXBUFS [0-9]+")
  add_test(NAME info.bad_argument COMMAND stardiff-info --bogus)
  set_tests_properties(info.bad_argument PROPERTIES LABELS integration WILL_FAIL TRUE)
  add_test(NAME info.no_worker COMMAND stardiff-info)
  set_tests_properties(info.no_worker PROPERTIES LABELS integration
    ENVIRONMENT "${STARDIFF_TEST_ENV};STARPU_NCPU=0;STARPU_NCUDA=0"
    PASS_REGULAR_EXPRESSION "starpu_init failed: no worker")
  # STARPU_* values StarPU would abort on: refused by name before starpu_init, exit 2.
  foreach(bad "STARPU_NCPU=abc" "STARPU_NCPU=-1" "STARPU_SCHED=nosuch")
    string(REGEX REPLACE "=.*" "" var "${bad}")
    string(REGEX REPLACE "[^A-Za-z0-9]+" "_" tname "${bad}")
    add_test(NAME info.bad_env_${tname} COMMAND sh -c "'$<TARGET_FILE:stardiff-info>' 2>&1; echo exit=$?")
    set_tests_properties(info.bad_env_${tname} PROPERTIES LABELS integration
      ENVIRONMENT "${STARDIFF_TEST_ENV};${bad}" PASS_REGULAR_EXPRESSION "stardiff::Runtime: ${var}=.*exit=2")
  endforeach()
else()
  stardiff_skipped_test(info_not_built "stardiff-info is not built (STARDIFF_BUILD_APPS off)")
endif()
