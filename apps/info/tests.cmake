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
else()
  stardiff_skipped_test(info_not_built "stardiff-info is not built (STARDIFF_BUILD_APPS off)")
endif()
