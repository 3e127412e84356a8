# SPDX-License-Identifier: LGPL-2.1-or-later
# apps/ldlt/tests.cmake — driver tests of stardiff-ldlt (included from tests/CMakeLists.txt).
#
# Contract: integration tests run the driver on the small matrices committed in
# apps/ldlt/data (known inertia, a general-format file, a singular matrix) and on bad
# input generated here (exit 2 with "file:line:" messages); data tests run it on
# ../shared/data/matrices with the inertia documented in SOURCES.md (reported skipped
# when the matrix is absent). Each test is a `cmake -P check_run.cmake` invocation
# checking the exit code and the JSON fields.
if(TARGET stardiff-ldlt)
  set(_ldlt_dir ${PROJECT_SOURCE_DIR}/apps/ldlt)
  set(_ldlt_work ${CMAKE_CURRENT_BINARY_DIR}/ldlt_inputs)
  file(MAKE_DIRECTORY ${_ldlt_work})

  # stardiff_ldlt_test(NAME EXIT <regex> [DATA] ARGS a b ... [CHECKS c ...] [STDERR re] [FILE path re])
  function(stardiff_ldlt_test name)
    cmake_parse_arguments(T "DATA" "EXIT;STDERR" "ARGS;CHECKS;FILE" ${ARGN})
    string(REPLACE ";" "|" cmd "$<TARGET_FILE:stardiff-ldlt>;${T_ARGS}")
    string(REPLACE ";" "|" checks "${T_CHECKS}")
    set(defs "-DCMD=${cmd}" "-DEXPECT_EXIT=${T_EXIT}")
    if(T_CHECKS)
      list(APPEND defs "-DCHECKS=${checks}")
    endif()
    if(T_STDERR)
      list(APPEND defs "-DSTDERR_REGEX=${T_STDERR}")
    endif()
    if(T_FILE)
      string(REPLACE ";" "|" fr "${T_FILE}")
      list(APPEND defs "-DFILE_REGEX=${fr}")
    endif()
    if(T_DATA)
      list(GET T_ARGS 0 input)
      list(APPEND defs "-DREQUIRE=${input}")
    endif()
    add_test(NAME ldlt_${name} COMMAND ${CMAKE_COMMAND} ${defs} -P ${_ldlt_dir}/check_run.cmake)
    set(labels integration)
    if(T_DATA)
      set(labels "integration;data")
    endif()
    set_tests_properties(ldlt_${name} PROPERTIES LABELS "${labels}" ENVIRONMENT "${STARDIFF_TEST_ENV}" TIMEOUT 300
      ${STARDIFF_SKIP_PROPS})
  endfunction()

  set(_d ${_ldlt_dir}/data)
  set(_ok "relres<1e-10" "singular=false" "status=solved")
  # Known inertia on committed matrices, both executors.
  foreach(ex starpu sequential)
    stardiff_ldlt_test(kkt12_${ex} EXIT 0 ARGS ${_d}/kkt12.mtx --json --executor ${ex}
      CHECKS n=12 nnz_l>0 inertia.pos=8 inertia.neg=4 inertia.zero=0 two_by_two>=0 static_pivots=0
             mode=simplicial tasks>=0 supernodes>=1 factor_s>=0 analyze_s>=0 solve_s>=0 gflops>=0 refine_iters>=0
             error_vs_exact<1e-12 executor=${ex} ${_ok})
    stardiff_ldlt_test(swap6_${ex} EXIT 0 ARGS ${_d}/swap6.mtx --json --executor ${ex}
      CHECKS n=6 inertia.pos=3 inertia.neg=3 inertia.zero=0 two_by_two=3 ${_ok})
  endforeach()
  stardiff_ldlt_test(lap2d_general_amd EXIT 0 ARGS ${_d}/lap2d16_general.mtx --json --ordering amd --nrhs 3
    CHECKS n=16 nrhs=3 ordering=amd inertia.pos=16 inertia.neg=0 two_by_two=0 delayed=0 error_vs_exact<1e-12 ${_ok})
  stardiff_ldlt_test(lap2d_general_metis EXIT 0 ARGS ${_d}/lap2d16_general.mtx --json --ordering metis --refine 0
    CHECKS ordering=metis inertia.pos=16 refine_iters=0 ${_ok})
  # Quasi-definite with multipliers above 1/u: the unpivoted (sign-consistent) factorization
  # is kept, growth measured; --pivoting threshold takes 2x2 pivots instead.
  stardiff_ldlt_test(pivoting_auto EXIT 0 ARGS ${_d}/sqd6.mtx --json
    CHECKS pivoting=none attempts=1 growth>1 two_by_two=0 inertia.pos=3 inertia.neg=3 error_vs_exact<1e-12 ${_ok})
  stardiff_ldlt_test(pivoting_threshold EXIT 0 ARGS ${_d}/sqd6.mtx --json --pivoting threshold
    CHECKS pivoting=threshold attempts=1 growth=0 two_by_two=3 inertia.pos=3 inertia.neg=3 ${_ok})
  stardiff_ldlt_test(pivoting_bad EXIT 2 ARGS ${_d}/kkt12.mtx --pivoting none
    STDERR "--pivoting: expected auto or threshold, got 'none'")
  stardiff_ldlt_test(neumann6_singular EXIT 1 ARGS ${_d}/neumann6.mtx --json
    CHECKS singular=true status=singular inertia.pos=5 inertia.neg=0 inertia.zero=1 static_pivots>=1 rcond=0)
  stardiff_ldlt_test(human_summary EXIT 0 ARGS ${_d}/kkt12.mtx --quiet
    STDERR "^$")
  stardiff_ldlt_test(help EXIT 0 ARGS --help)
  # (kkt12 is solved in simplicial mode on the caller since its zero-diagonal columns are
  # paired: swap6's 2x2 pivots need the multifrontal tasks)
  stardiff_ldlt_test(dot EXIT 0 ARGS ${_d}/swap6.mtx --json --dot ${_ldlt_work}/swap6.dot
    CHECKS tasks>=1 ${_ok} FILE ${_ldlt_work}/swap6.dot "digraph")

  # Right-hand sides from files.
  file(WRITE ${_ldlt_work}/rhs12.txt "# b for kkt12\n1 2 3 4 5 6\n7 8 9 10 11 12\n")
  file(WRITE ${_ldlt_work}/rhs12x2.mtx
    "%%MatrixMarket matrix array real general\n% two columns\n12 2\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"
    "1\n0\n0\n0\n0\n0\n0\n0\n0\n0\n0\n-1\n")
  file(WRITE ${_ldlt_work}/rhs_short.txt "1 2 3\n")
  file(WRITE ${_ldlt_work}/rhs_bad.txt "1 2 3 x 5 6 7 8 9 10 11 12\n")
  stardiff_ldlt_test(rhs_text EXIT 0 ARGS ${_d}/kkt12.mtx --json --rhs ${_ldlt_work}/rhs12.txt CHECKS nrhs=1 ${_ok})
  stardiff_ldlt_test(rhs_array EXIT 0 ARGS ${_d}/kkt12.mtx --json --rhs ${_ldlt_work}/rhs12x2.mtx CHECKS nrhs=2 ${_ok})
  stardiff_ldlt_test(rhs_short EXIT 2 ARGS ${_d}/kkt12.mtx --rhs ${_ldlt_work}/rhs_short.txt
    STDERR "rhs_short.txt:[0-9]+: 3 values are not a multiple of n = 12")
  stardiff_ldlt_test(rhs_bad EXIT 2 ARGS ${_d}/kkt12.mtx --rhs ${_ldlt_work}/rhs_bad.txt
    STDERR "rhs_bad.txt:1: bad number 'x'")
  stardiff_ldlt_test(rhs_nrhs_mismatch EXIT 2 ARGS ${_d}/kkt12.mtx --nrhs 2 --rhs ${_ldlt_work}/rhs12.txt
    STDERR "holds 1 right-hand sides")

  # Bad input files: exit 2 with "file:line: what".
  set(_h "%%MatrixMarket matrix coordinate real symmetric\n")
  set(_bad_header "%%MatrixMarket matrix coordinate real\n2 2 1\n1 1 1\n")
  set(_bad_count "${_h}3 3 3\n1 1 1\n2 2 1\n")
  set(_bad_range "${_h}3 3 2\n1 1 1\n4 1 1\n")
  set(_bad_nan "${_h}3 3 2\n1 1 1\n2 1 nan\n")
  set(_bad_square "%%MatrixMarket matrix coordinate real general\n3 4 1\n1 1 1\n")
  set(_bad_unsym "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 1 1\n1 2 2\n")
  set(_bad_empty "${_h}0 0 0\n")
  set(_bad_garbage "${_h}2 2 2\n1 1 1\n2 2 1,5\n")
  foreach(b header:1:.*symmetry count:5:.*end.of.file range:4:.*outside nan:4:.*non-finite square:2:.*not.square
            unsym:4:.*not.symmetric empty:2:.*empty.matrix garbage:4:.*bad.value)
    string(REGEX MATCH "^[a-z]+" bn "${b}")
    string(REGEX REPLACE "^[a-z]+" "" re "${b}")
    file(WRITE ${_ldlt_work}/bad_${bn}.mtx "${_bad_${bn}}")
    stardiff_ldlt_test(bad_${bn} EXIT 2 ARGS ${_ldlt_work}/bad_${bn}.mtx --json
      STDERR "bad_${bn}.mtx${re}")
  endforeach()
  # A symmetric file storing an entry in both triangles: an error naming both lines, not a
  # different (here singular) matrix.
  file(WRITE ${_ldlt_work}/bad_both_triangles.mtx "${_h}2 2 4\n1 1 2\n2 1 1\n1 2 1\n2 2 2\n")
  stardiff_ldlt_test(bad_both_triangles EXIT 2 ARGS ${_ldlt_work}/bad_both_triangles.mtx --json
    STDERR "bad_both_triangles.mtx:4: entry \\(2, 1\\) is given again as \\(1, 2\\) on [^ ]*bad_both_triangles.mtx:5")
  # A valid matrix whose default b = A*1 overflows: a numerical failure (exit 1, JSON with
  # the reason), not bad input.
  file(WRITE ${_ldlt_work}/rhs_overflow.mtx "${_h}2 2 3\n1 1 1e308\n2 1 1e308\n2 2 -1e308\n")
  stardiff_ldlt_test(rhs_overflow EXIT 1 ARGS ${_ldlt_work}/rhs_overflow.mtx --json
    CHECKS n=2 status=overflow singular=false inertia.pos=1 inertia.neg=1 "reason!=")
  # A structurally singular KKT matrix: constraint 5 has no entries (a zero column), so one
  # zero eigenvalue; reported singular with the inertia (exit 1), the pairing leaves it alone.
  file(WRITE ${_ldlt_work}/kkt_zero_column.mtx "${_h}5 5 6\n1 1 2\n2 2 3\n3 3 4\n4 1 1\n4 4 0\n5 5 0\n")
  stardiff_ldlt_test(kkt_zero_column_singular EXIT 1 ARGS ${_ldlt_work}/kkt_zero_column.mtx --json
    CHECKS singular=true status=singular inertia.pos=3 inertia.neg=1 inertia.zero=1 static_pivots=1)
  # A 60-byte file declaring n = 2e9: refused at once, naming the size and the estimate.
  file(WRITE ${_ldlt_work}/huge_n.mtx "${_h}2000000000 2000000000 1\n1 1 1\n")
  stardiff_ldlt_test(huge_n_refused EXIT 2 ARGS ${_ldlt_work}/huge_n.mtx --json
    STDERR "huge_n.mtx:2: reading a 2000000000 x 2000000000 matrix with 1 entries needs about [0-9.]+ GiB \\(estimate\\) but only [0-9.]+ GiB are available")
  set_tests_properties(ldlt_huge_n_refused PROPERTIES TIMEOUT 20)
  # gzip: a valid stream (detected by magic bytes) and one cut short.
  file(ARCHIVE_CREATE OUTPUT ${_ldlt_work}/kkt12_raw.gz PATHS ${_d}/kkt12.mtx FORMAT raw COMPRESSION GZip)
  stardiff_ldlt_test(gzip_ok EXIT 0 ARGS ${_ldlt_work}/kkt12_raw.gz --json CHECKS inertia.pos=8 inertia.neg=4 ${_ok})
  stardiff_ldlt_test(bad_gzip_truncated EXIT 2 ARGS ${_d}/kkt12_truncated.mtx.gz
    STDERR "kkt12_truncated.mtx.gz:[0-9]+: truncated gzip")
  stardiff_ldlt_test(bad_missing_file EXIT 2 ARGS ${_ldlt_work}/does_not_exist.mtx STDERR "does_not_exist.mtx: cannot open")
  stardiff_ldlt_test(bad_option EXIT 2 ARGS ${_d}/kkt12.mtx --frobnicate STDERR "unknown option '--frobnicate'")
  stardiff_ldlt_test(bad_ordering EXIT 2 ARGS ${_d}/kkt12.mtx --ordering best STDERR "--ordering")
  stardiff_ldlt_test(bad_pairing EXIT 2 ARGS ${_d}/kkt12.mtx --pairing mc64 STDERR "--pairing: unknown zero-diagonal pairing")
  stardiff_ldlt_test(bad_executor EXIT 2 ARGS ${_d}/kkt12.mtx --executor gpu STDERR "--executor")
  stardiff_ldlt_test(bad_nrhs EXIT 2 ARGS ${_d}/kkt12.mtx --nrhs 0 STDERR "--nrhs")
  stardiff_ldlt_test(bad_missing_value EXIT 2 ARGS ${_d}/kkt12.mtx --refine STDERR "--refine needs a value")
  stardiff_ldlt_test(bad_no_matrix EXIT 2 ARGS --json STDERR "no matrix file given")

  # Shared matrices (SOURCES.md): SPD ones all positive; indefinite ones with known inertia.
  set(_m ${STARDIFF_SHARED_DATA}/matrices)
  foreach(spd nos4:100 bcsstk04:132 1138_bus:1138 bcsstk14:1806 s3rmt3m3:5357 fv1:9604 ted_B:10605 bcsstk18:11948
              bodyy4:17546)
    string(REPLACE ":" ";" p "${spd}")
    list(GET p 0 mname)
    list(GET p 1 mn)
    stardiff_ldlt_test(data_${mname} DATA EXIT 0 ARGS ${_m}/${mname}.mtx.gz --json
      CHECKS n=${mn} inertia.pos=${mn} inertia.neg=0 rcond>1e-11 rcond<1 ${_ok})
  endforeach()
  foreach(ind bfw398b:0:398 sqd_cvxqp3_m_2x2_K10:2750:3000 sqd_aug2d_2x2_K0:10000:20200 aug3dcqp:27543:8000)
    string(REPLACE ":" ";" p "${ind}")
    list(GET p 0 mname)
    list(GET p 1 mpos)
    list(GET p 2 mneg)
    stardiff_ldlt_test(data_${mname} DATA EXIT 0 ARGS ${_m}/${mname}.mtx.gz --json
      CHECKS inertia.pos=${mpos} inertia.neg=${mneg} inertia.zero=0 rcond>1e-8 rcond<1 ${_ok})
  endforeach()
  # Saddle points without a documented inertia: solved accurately or reported singular
  # (exit 1), never a silent wrong answer.
  foreach(mname tuma2 stokes64)
    stardiff_ldlt_test(data_${mname} DATA EXIT "0|1" ARGS ${_m}/${mname}.mtx.gz --json CHECKS relres<1e-10)
  endforeach()
  # bloweybq is rank-deficient by one to working precision (SOURCES.md) though no pivot is
  # small in AMD order: the condition estimate says singular (exit 1); the consistent
  # b = A*1 is still solved to a small residual.
  foreach(ord amd metis)
    stardiff_ldlt_test(data_bloweybq_${ord} DATA EXIT 1 ARGS ${_m}/bloweybq.mtx.gz --json --ordering ${ord}
      CHECKS singular=true status=singular rcond<2.2e-16 inertia.neg=0 relres<1e-10)
  endforeach()
  # stokes64's pressures each behind a velocity of their own (default pairing): no delayed
  # column (MUMPS: 343); without pairing thousands, the same inertia.
  stardiff_ldlt_test(data_stokes64_pairing_defer DATA EXIT 1 ARGS ${_m}/stokes64.mtx.gz --json --pairing defer
    CHECKS delayed=0 inertia.pos=8448 inertia.neg=4096 inertia.zero=2 relres<1e-10)
  stardiff_ldlt_test(data_stokes64_pairing_none DATA EXIT 1 ARGS ${_m}/stokes64.mtx.gz --json --pairing none
    CHECKS delayed>1000 inertia.pos=8448 inertia.neg=4096 inertia.zero=2 relres<1e-10)
  stardiff_ldlt_test(data_tuma2_sequential_metis DATA EXIT 0 ARGS ${_m}/tuma2.mtx.gz --json --executor sequential
    --ordering metis --nrhs 2 CHECKS nrhs=2 error_vs_exact<1e-8 ${_ok})
else()
  stardiff_skipped_test(ldlt_not_built "stardiff-ldlt is not built (module sparse or STARDIFF_BUILD_APPS off)")
endif()

# Smoke tests of the peer benchmark (bench/ldlt_vs_peers): output format, every solver
# runs, a failing peer is reported (not crashed), inertia agrees with MUMPS, no MPI linked.
if(TARGET ldlt_vs_peers)
  foreach(m bfw398b stokes64 bloweybq)
    stardiff_unless_exists(_skip_${m} ${STARDIFF_SHARED_DATA}/matrices/${m}.mtx.gz)
  endforeach()
  add_test(NAME ldlt_vs_peers_smoke COMMAND ldlt_vs_peers --laplacian 6 --repeats 1 --no-dgemm --analyze-samples 3)
  set_tests_properties(ldlt_vs_peers_smoke PROPERTIES LABELS integration ENVIRONMENT "${STARDIFF_TEST_ENV}"
    TIMEOUT 300
    PASS_REGULAR_EXPRESSION "solver=mumps analyze_s=.*ldlt_vs_peers matrix=laplace3d_6 n=216 factor_s=[0-9.e-]+ best_peer=[a-z_]+ best_peer_factor_s=[0-9.e-]+ ratio=[0-9.e+-]+ analyze_s=[0-9.e-]+ cholmod_analyze_s=[0-9.e-]+ analyze_ratio=[0-9.e+-]+.*inertia matrix=laplace3d_6 stardiff_pos=216 stardiff_neg=0 stardiff_zero=0 mumps_neg=0 agree=yes.*geomean matrices=1 ratio=[0-9]"
    FAIL_REGULAR_EXPRESSION "status=failed")
  add_test(NAME ldlt_vs_peers_indefinite
    COMMAND ${_skip_bfw398b} $<TARGET_FILE:ldlt_vs_peers> ${STARDIFF_SHARED_DATA}/matrices/bfw398b.mtx.gz --no-laplacian --repeats 1 --no-dgemm
            --peer-threads 1)
  set_tests_properties(ldlt_vs_peers_indefinite PROPERTIES LABELS "integration;data"
    ENVIRONMENT "${STARDIFF_TEST_ENV}" TIMEOUT 300 ${STARDIFF_SKIP_PROPS}
    PASS_REGULAR_EXPRESSION "solver=stardiff analyze_s=.*solver=cholmod_llt status=failed reason=\"not positive definite.*solver=mumps analyze_s=.*matrix=bfw398b n=398 factor_s=.*ratio=[0-9].* cholmod_analyze_s=[0-9.e-]+ analyze_ratio=[0-9].*inertia matrix=bfw398b stardiff_pos=0 stardiff_neg=398 stardiff_zero=0 mumps_neg=398 agree=yes")
  # A singular matrix (stokes64: 2 pressure null modes): MUMPS with null-pivot detection at
  # stardiff's threshold finds the same 2 null pivots and the same 4096 negative ones.
  add_test(NAME ldlt_vs_peers_singular
    COMMAND ${_skip_stokes64} $<TARGET_FILE:ldlt_vs_peers> ${STARDIFF_SHARED_DATA}/matrices/stokes64.mtx.gz --no-laplacian --repeats 1 --no-dgemm
            --solvers stardiff,mumps --analyze-samples 1)
  set_tests_properties(ldlt_vs_peers_singular PROPERTIES LABELS "integration;data"
    ENVIRONMENT "${STARDIFF_TEST_ENV}" TIMEOUT 300 ${STARDIFF_SKIP_PROPS}
    PASS_REGULAR_EXPRESSION "inertia matrix=stokes64 stardiff_pos=8448 stardiff_neg=4096 stardiff_zero=2 mumps_neg=[0-9]+ agree=[a-z]+ mumps_nulldet_neg=4096 mumps_nulldet_zero=2 agree_nulldet=yes")
  # bloweybq, rank-deficient by one: MUMPS with null-pivot detection finds 1 null pivot,
  # stardiff none (no small pivot in AMD order) but its condition estimate says singular.
  add_test(NAME ldlt_vs_peers_singular_to_working_precision
    COMMAND ${_skip_bloweybq} $<TARGET_FILE:ldlt_vs_peers> ${STARDIFF_SHARED_DATA}/matrices/bloweybq.mtx.gz --no-laplacian --repeats 1 --no-dgemm
            --solvers stardiff,mumps --analyze-samples 1 --ordering amd)
  set_tests_properties(ldlt_vs_peers_singular_to_working_precision PROPERTIES LABELS "integration;data"
    ENVIRONMENT "${STARDIFF_TEST_ENV}" TIMEOUT 300 ${STARDIFF_SKIP_PROPS}
    PASS_REGULAR_EXPRESSION "inertia matrix=bloweybq .*mumps_nulldet_zero=1 .*stardiff_rcond=[0-9.]+e-(1[6-9]|[2-9][0-9]) stardiff_singular=yes mumps_singular=yes singular_agree=yes")
  add_test(NAME ldlt_vs_peers_bad_option
    COMMAND sh -c "'$<TARGET_FILE:ldlt_vs_peers>' --analyze-samples 0 --no-laplacian 2>&1; echo exit=$?")
  set_tests_properties(ldlt_vs_peers_bad_option PROPERTIES LABELS integration
    PASS_REGULAR_EXPRESSION "--analyze-samples: expected an integer in \\[1, 1000\\], got '0'\nexit=2")
  add_test(NAME ldlt_vs_peers_no_mpi COMMAND sh -c "ldd '$<TARGET_FILE:ldlt_vs_peers>' | grep -E 'libmpi[._]|libopen-pal|libopen-rte' && exit 1; exit 0")
  set_tests_properties(ldlt_vs_peers_no_mpi PROPERTIES LABELS integration)
else()
  stardiff_skipped_test(ldlt_vs_peers_not_built
    "ldlt_vs_peers is not built (module sparse or STARDIFF_BUILD_BENCH off, or CHOLMOD/UMFPACK/MUMPS-seq not found)")
endif()
