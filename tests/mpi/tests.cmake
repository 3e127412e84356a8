# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/mpi/ — StarPU-MPI runs (label mpi only: the Release pass of scripts/test.sh runs
# them, the sanitizer pass (-L 'unit|starpu') does not). Each runs under
#   mpirun --allow-run-as-root --oversubscribe --bind-to none -np N
# on loopback, and is reported skipped (never passed) when mpirun or StarPU-MPI is absent.
# STARPU_NCPU=1 per rank: the ranks share this machine's cores. OMPI_MCA_mpi_yield_when_idle=1:
# a rank waiting in MPI yields its core (Open MPI spins otherwise; with more threads than cores
# each StarPU-MPI transfer then waits for a time slice: 5 steps of CloverLeaf on 2 ranks took
# 8-15 s spinning, 1-2.5 s yielding, on the loaded 2-core VM).
set(STARDIFF_MPI_ENV "${STARDIFF_TEST_ENV};STARPU_NCPU=1;OMPI_MCA_rmaps_base_oversubscribe=1;OMPI_MCA_mpi_yield_when_idle=1")
set(STARDIFF_MPIRUN_FLAGS --allow-run-as-root --oversubscribe --bind-to none)
string(REPLACE ";" " " mpirun_flags "${STARDIFF_MPIRUN_FLAGS}")  # inside sh -c strings
if(NOT STARDIFF_MPI)
  set(mpi_runner nompi)
elseif(NOT STARDIFF_MPIRUN)
  set(mpi_runner none)
else()
  set(mpi_runner ${STARDIFF_MPIRUN})
endif()
set(same_result sh ${CMAKE_CURRENT_LIST_DIR}/same_result.sh ${mpi_runner})

# Library level: the distributed mesh vs the sequential executor, host reads, the errors.
if(STARDIFF_MPI AND STARDIFF_MPIRUN AND "mesh" IN_LIST STARDIFF_MODULES AND "adjoint" IN_LIST STARDIFF_MODULES)
  stardiff_test_binary(${CMAKE_CURRENT_LIST_DIR}/test_mesh_mpi.cpp)
  add_test(NAME mpi.test_mesh_mpi COMMAND ${STARDIFF_MPIRUN} ${STARDIFF_MPIRUN_FLAGS} -np 2
    $<TARGET_FILE:test_mesh_mpi>)
  set_tests_properties(mpi.test_mesh_mpi PROPERTIES LABELS mpi ENVIRONMENT "${STARDIFF_MPI_ENV}"
    SKIP_RETURN_CODE 77 TIMEOUT 300 PROCESSORS 2)
else()
  stardiff_skipped_test(mpi.test_mesh_mpi "StarPU-MPI, mpirun or the mesh/adjoint modules absent" mpi)
endif()

if(TARGET stardiff-poisson)
  set(poisson $<TARGET_FILE:stardiff-poisson>)
  # Value and full gradients (VTK: u, dE/df, dE/du at every point) bitwise on 1, 2 and 3 ranks.
  add_test(NAME mpi.poisson_2_ranks COMMAND ${same_result} 2 --ignore tasks ${poisson} --adjoint --probe 3,4 --probe 20,17
    --nx 24 --ny 20 --tiles 4)
  add_test(NAME mpi.poisson_2_ranks_uneven COMMAND ${same_result} 2 --ignore tasks ${poisson} --adjoint --nx 9 --ny 17 --iters 7
    --tiles 5)
  add_test(NAME mpi.poisson_3_ranks COMMAND ${same_result} 3 --ignore tasks ${poisson} --adjoint --nx 16 --ny 15 --iters 6
    --tiles 5)
  add_test(NAME mpi.poisson_rev_acc COMMAND ${same_result} 2 --ignore tasks ${poisson} --mode rev-acc --nx 6 --ny 4 --iters 8
    --tiles 2 --tol 1e-4)
  set_tests_properties(mpi.poisson_2_ranks mpi.poisson_2_ranks_uneven mpi.poisson_3_ranks mpi.poisson_rev_acc
    PROPERTIES LABELS mpi ENVIRONMENT "${STARDIFF_MPI_ENV}" ${STARDIFF_SKIP_PROPS} TIMEOUT 300 PROCESSORS 2)
  if(STARDIFF_MPI AND STARDIFF_MPIRUN)
    # Only rank 0 prints: one "E =" line on stdout, one header line on stderr.
    add_test(NAME mpi.poisson_rank0_prints COMMAND sh -c "\"$1\" ${mpirun_flags} -np 2 \"$2\" --iters 3 2>&1 | grep -c -e '^E = ' -e 'MPI ranks'" sh ${STARDIFF_MPIRUN} ${poisson})
    set_tests_properties(mpi.poisson_rank0_prints PROPERTIES LABELS mpi ENVIRONMENT "${STARDIFF_MPI_ENV}"
      PASS_REGULAR_EXPRESSION "^2\n$" TIMEOUT 300)
    # STARDIFF_MPI=1 without mpirun: an MPI singleton (1 rank), same answer as without MPI.
    add_test(NAME mpi.poisson_singleton COMMAND ${poisson})
    set_tests_properties(mpi.poisson_singleton PROPERTIES LABELS mpi
      ENVIRONMENT "${STARDIFF_MPI_ENV};STARDIFF_MPI=1" PASS_REGULAR_EXPRESSION "E = 16\\.517357017670[78]" TIMEOUT 300)
    # A bad STARDIFF_MPI: exit 2 naming it.
    add_test(NAME mpi.poisson_bad_switch COMMAND sh -c "\"$1\" 2>&1; echo \"exit $?\"" sh ${poisson})
    set_tests_properties(mpi.poisson_bad_switch PROPERTIES LABELS mpi ENVIRONMENT "${STARDIFF_MPI_ENV};STARDIFF_MPI=yes"
      PASS_REGULAR_EXPRESSION "STARDIFF_MPI='yes' is neither 0 nor 1.*exit 2" TIMEOUT 60)
    # A rank dying mid-run (SIGKILL of rank 1 after 2 s of a long run): mpirun ends the job
    # with a failure well before the 120 s bound (timeout's 124 would mean a hang).
    add_test(NAME mpi.poisson_rank_dies COMMAND sh -c "timeout 120 \"$1\" ${mpirun_flags} -np 2 sh -c 'if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then (sleep 2; kill -KILL $$) & fi; exec \"$0\" --iters 1000000 --nx 64 --ny 64' \"$2\" >/dev/null 2>&1; rc=$?; echo \"exit $rc\"; [ $rc -ne 0 ] && [ $rc -ne 124 ]" sh ${STARDIFF_MPIRUN} ${poisson})
    set_tests_properties(mpi.poisson_rank_dies PROPERTIES LABELS mpi ENVIRONMENT "${STARDIFF_MPI_ENV}" TIMEOUT 180)
  endif()
else()
  stardiff_skipped_test(mpi.poisson_not_built "stardiff-poisson is not built" mpi)
endif()

# The heat adjoint: mesh tiles on both ranks, the LDLT external on rank 0; J, probes, the
# Taylor order and the dot-product test bitwise those of 1 rank.
if(TARGET stardiff-heat)
  add_test(NAME mpi.heat_2_ranks COMMAND ${same_result} 2 --no-vtk $<TARGET_FILE:stardiff-heat> --n 12 --steps 3
    --probe 2,3 --probe 11,0)
  set_tests_properties(mpi.heat_2_ranks PROPERTIES LABELS mpi ENVIRONMENT "${STARDIFF_MPI_ENV}"
    ${STARDIFF_SKIP_PROPS} TIMEOUT 300 PROCESSORS 2)
else()
  stardiff_skipped_test(mpi.heat_not_built "stardiff-heat is not built" mpi)
endif()

# The sparse LDL^T over the ranks (tests/mpi/ldlt_same_result.sh, test_ldlt_mpi): the
# factorization's and the solve's task graphs distributed by subtree-to-rank mapping (the
# factors stay on their ranks, the solution gathered); stardiff-ldlt's JSON
# report (inertia, pivoting, residuals, error, rcond, tasks; timings and gflops aside) on 2 and 3
# ranks equal to the 1-rank run without MPI, on three real matrices (unpivoted SPD,
# threshold-pivoted indefinite, unpivoted indefinite with growth), stokes64, and stokes64
# without pairing, whose fronts take delayed columns (the replicated rerun; tasks then
# differ); only rank 0 prints.
set(_ldlt_mats ${PROJECT_SOURCE_DIR}/../shared/data/matrices)
set(ldlt_same_result sh ${CMAKE_CURRENT_LIST_DIR}/ldlt_same_result.sh ${mpi_runner})
if(TARGET stardiff-ldlt)
  set(ldlt $<TARGET_FILE:stardiff-ldlt>)
  set(_ldlt_mpi_tests)
  # (stokes64 takes no delayed column with its default pairing: without pairing it does)
  foreach(case "bcsstk18;2" "aug3dcqp;2" "tuma2;2" "aug3dcqp;3" "stokes64;2"
               "stokes64;2;--more-tasks;--pairing;none")
    list(GET case 0 m)
    list(GET case 1 np)
    set(extra)
    list(LENGTH case len)
    if(len GREATER 2)
      list(SUBLIST case 2 -1 extra)
    endif()
    set(name ${m})
    if("none" IN_LIST extra)
      set(name ${m}_no_pairing)
    endif()
    add_test(NAME mpi.ldlt_${name}_${np}_ranks COMMAND ${ldlt_same_result} ${np} ${_ldlt_mats}/${m}.mtx.gz ${ldlt} ${extra})
    list(APPEND _ldlt_mpi_tests mpi.ldlt_${name}_${np}_ranks)
  endforeach()
  set_tests_properties(${_ldlt_mpi_tests} PROPERTIES LABELS mpi ENVIRONMENT "${STARDIFF_MPI_ENV}"
    ${STARDIFF_SKIP_PROPS} TIMEOUT 300 PROCESSORS 2)
  if(STARDIFF_MPI AND STARDIFF_MPIRUN AND EXISTS ${_ldlt_mats}/bcsstk18.mtx.gz)
    # Only rank 0 prints: the summary's "status" line once on stdout, the header once on stderr.
    add_test(NAME mpi.ldlt_rank0_prints COMMAND sh -c "\"$1\" ${mpirun_flags} -np 2 \"$2\" \"$3\" 2>&1 | grep -c -e '^status ' -e 'MPI ranks'" sh ${STARDIFF_MPIRUN} ${ldlt} ${_ldlt_mats}/bcsstk18.mtx.gz)
    set_tests_properties(mpi.ldlt_rank0_prints PROPERTIES LABELS mpi ENVIRONMENT "${STARDIFF_MPI_ENV}"
      PASS_REGULAR_EXPRESSION "^2\n$" TIMEOUT 300)
    # Bad input under mpirun: every rank exits 2 with the message, no hang.
    add_test(NAME mpi.ldlt_bad_input COMMAND sh -c "timeout 120 \"$1\" ${mpirun_flags} -np 2 \"$2\" /nonexistent.mtx 2>&1; echo \"exit $?\"" sh ${STARDIFF_MPIRUN} ${ldlt})
    set_tests_properties(mpi.ldlt_bad_input PROPERTIES LABELS mpi ENVIRONMENT "${STARDIFF_MPI_ENV}"
      PASS_REGULAR_EXPRESSION "nonexistent.mtx.*exit [1-9]" FAIL_REGULAR_EXPRESSION "exit 124" TIMEOUT 180)
  endif()
else()
  stardiff_skipped_test(mpi.ldlt_not_built "stardiff-ldlt is not built" mpi)
endif()
if(STARDIFF_MPI AND STARDIFF_MPIRUN AND "sparse" IN_LIST STARDIFF_MODULES)
  stardiff_test_binary(${CMAKE_CURRENT_LIST_DIR}/test_ldlt_mpi.cpp)
  target_link_libraries(test_ldlt_mpi PRIVATE stardiff_white_box)
  add_test(NAME mpi.test_ldlt_mpi COMMAND ${STARDIFF_MPIRUN} ${STARDIFF_MPIRUN_FLAGS} -np 2
    $<TARGET_FILE:test_ldlt_mpi>)
  set_tests_properties(mpi.test_ldlt_mpi PROPERTIES LABELS mpi SKIP_RETURN_CODE 77 TIMEOUT 300 PROCESSORS 2
    ENVIRONMENT "${STARDIFF_MPI_ENV};STARDIFF_LDLT_MPI_MATRICES=${_ldlt_mats}/bcsstk18.mtx.gz:${_ldlt_mats}/aug3dcqp.mtx.gz:${_ldlt_mats}/tuma2.mtx.gz:${_ldlt_mats}/stokes64.mtx.gz")
else()
  stardiff_skipped_test(mpi.test_ldlt_mpi "StarPU-MPI, mpirun or the sparse module absent" mpi)
endif()

# CloverLeaf (apps/cloverleaf): rows of cells tiled along y and distributed over the ranks.
# tp1 transposed (2 x 10 cells, the shock along y: up to 5 tiles of 2 rows; the default tp1
# deck's 2 rows make 1 tile): the printed text (step lines, summary tables, PASSED) of the
# whole run on 2 ranks and of 10 steps on 3 identical to 1 rank's but for the wall clock;
# --adjoint (Revolve, 2 snapshots): J, dt history, dobj_dstate, gradient_hash and the final
# fields (VTK) bitwise those of 1 rank with the same tiles (the adjoint's rounding depends on the tiling, not on the ranks);
# peak_bytes is rank 0's tape memory and is not compared. Only rank 0 warns and prints; the
# default tiling gives every rank rows.
if(TARGET stardiff-cloverleaf)
  set(_clover $<TARGET_FILE:stardiff-cloverleaf>)
  set(_clover_tp1y ${PROJECT_SOURCE_DIR}/apps/cloverleaf/decks/clover_tp1_transposed.in)
  set(same_text sh ${CMAKE_CURRENT_LIST_DIR}/same_text.sh ${mpi_runner})
  add_test(NAME mpi.cloverleaf_tp1_2_ranks COMMAND ${same_text} 2 --ignore "^ Wall clock " ${_clover} ${_clover_tp1y}
    --tiles 3)
  add_test(NAME mpi.cloverleaf_tp1_3_ranks COMMAND ${same_text} 3 --ignore "^ Wall clock " ${_clover} ${_clover_tp1y}
    --end-step 10 --tiles 5)
  add_test(NAME mpi.cloverleaf_adjoint_2_ranks COMMAND ${same_result} 2 --ignore peak_bytes ${_clover} ${_clover_tp1y}
    --end-step 5 --adjoint --checkpoints 2 --tiles 3)
  add_test(NAME mpi.cloverleaf_adjoint_3_ranks COMMAND ${same_result} 3 --ignore peak_bytes ${_clover} ${_clover_tp1y}
    --end-step 4 --adjoint --checkpoints 2 --tiles 3)
  set_tests_properties(mpi.cloverleaf_tp1_2_ranks mpi.cloverleaf_tp1_3_ranks mpi.cloverleaf_adjoint_2_ranks
    mpi.cloverleaf_adjoint_3_ranks PROPERTIES LABELS mpi ENVIRONMENT "${STARDIFF_MPI_ENV}" ${STARDIFF_SKIP_PROPS}
    TIMEOUT 300 PROCESSORS 2)
  if(STARDIFF_MPI AND STARDIFF_MPIRUN)
    # The unknown deck key warned once (not once per rank), the ranks line once, the
    # idle-rank warning once (2 rows: 1 tile for 2 ranks), the run's last line once.
    add_test(NAME mpi.cloverleaf_rank0_warns COMMAND sh -c "\"$1\" ${mpirun_flags} -np 2 \"$2\" \"$3\" 2>&1 | grep -c -e \"unknown key 'foo_option' ignored\" -e ' MPI ranks, ' -e 'hold no tiles' -e '^ Calculation complete'" sh ${STARDIFF_MPIRUN} ${_clover} ${PROJECT_SOURCE_DIR}/apps/cloverleaf/decks/warn_unknown_key.in)
    set_tests_properties(mpi.cloverleaf_rank0_warns PROPERTIES LABELS mpi ENVIRONMENT "${STARDIFF_MPI_ENV}"
      PASS_REGULAR_EXPRESSION "^4\n$" TIMEOUT 300)
    # A malformed deck: every rank exits 2, the message (file and line) printed once. An error
    # on rank 0 alone mid-run (--vtk into a missing directory): the job ends with exit 2, no hang.
    add_test(NAME mpi.cloverleaf_bad_deck COMMAND sh -c "timeout 120 \"$1\" ${mpirun_flags} -np 2 \"$2\" \"$3\" 2>&1; echo \"exit $?\"" sh ${STARDIFF_MPIRUN} ${_clover} ${PROJECT_SOURCE_DIR}/apps/cloverleaf/decks/bad/bad_number.in)
    set_tests_properties(mpi.cloverleaf_bad_deck PROPERTIES LABELS mpi ENVIRONMENT "${STARDIFF_MPI_ENV}"
      PASS_REGULAR_EXPRESSION "^stardiff-cloverleaf: [^\n]*bad_number\\.in:4: 'x_cells' needs an integer[^\n]*\n.*exit 2\n$"
      FAIL_REGULAR_EXPRESSION "needs an integer.*needs an integer" TIMEOUT 180)
    add_test(NAME mpi.cloverleaf_error_aborts COMMAND sh -c "timeout 120 \"$1\" ${mpirun_flags} -np 2 \"$2\" \"$3\" --end-step 1 --vtk /nonexistent-dir/x.vtk 2>&1; echo \"exit $?\"" sh ${STARDIFF_MPIRUN} ${_clover} ${_clover_tp1y})
    set_tests_properties(mpi.cloverleaf_error_aborts PROPERTIES LABELS mpi ENVIRONMENT "${STARDIFF_MPI_ENV}"
      PASS_REGULAR_EXPRESSION "rank 0: --vtk: cannot write '/nonexistent-dir/x\\.vtk'.*exit 2\n$" TIMEOUT 180)
    # The default tiling (1 worker per rank: 2 per rank, at most 10 / 2 rows) gives all 3 ranks tiles.
    add_test(NAME mpi.cloverleaf_default_tiles COMMAND sh -c "\"$1\" ${mpirun_flags} -np 3 \"$2\" \"$3\" --end-step 1 2>&1 >/dev/null" sh ${STARDIFF_MPIRUN} ${_clover} ${_clover_tp1y})
    set_tests_properties(mpi.cloverleaf_default_tiles PROPERTIES LABELS mpi ENVIRONMENT "${STARDIFF_MPI_ENV}"
      PASS_REGULAR_EXPRESSION "stardiff-cloverleaf: 3 MPI ranks, 5 tiles \\(per rank: 2, 2, 1\\)\n" TIMEOUT 300)
  endif()
else()
  stardiff_skipped_test(mpi.cloverleaf_not_built "stardiff-cloverleaf is not built" mpi)
endif()
