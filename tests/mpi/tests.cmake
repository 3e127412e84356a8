# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/mpi/ — StarPU-MPI runs (label mpi only: the Release pass of scripts/test.sh runs
# them, the sanitizer pass (-L 'unit|starpu') does not). Each runs under
#   mpirun --allow-run-as-root --oversubscribe --bind-to none -np N
# on loopback, and is reported skipped (never passed) when mpirun or StarPU-MPI is absent.
# STARPU_NCPU=1 per rank: the ranks share this machine's cores.
set(STARDIFF_MPI_ENV "${STARDIFF_TEST_ENV};STARPU_NCPU=1;OMPI_MCA_rmaps_base_oversubscribe=1")
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
  add_test(NAME mpi.poisson_2_ranks COMMAND ${same_result} 2 ${poisson} --adjoint --probe 3,4 --probe 20,17
    --nx 24 --ny 20 --tiles 4)
  add_test(NAME mpi.poisson_2_ranks_uneven COMMAND ${same_result} 2 ${poisson} --adjoint --nx 9 --ny 17 --iters 7
    --tiles 5)
  add_test(NAME mpi.poisson_3_ranks COMMAND ${same_result} 3 ${poisson} --adjoint --nx 16 --ny 15 --iters 6
    --tiles 5)
  add_test(NAME mpi.poisson_rev_acc COMMAND ${same_result} 2 ${poisson} --mode rev-acc --nx 6 --ny 4 --iters 8
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
# threshold-pivoted indefinite, unpivoted indefinite with growth) and a matrix with
# delayed columns (the replicated rerun; tasks then differ); only rank 0 prints.
set(_ldlt_mats ${PROJECT_SOURCE_DIR}/../shared/data/matrices)
set(ldlt_same_result sh ${CMAKE_CURRENT_LIST_DIR}/ldlt_same_result.sh ${mpi_runner})
if(TARGET stardiff-ldlt)
  set(ldlt $<TARGET_FILE:stardiff-ldlt>)
  set(_ldlt_mpi_tests)
  foreach(case "bcsstk18;2" "aug3dcqp;2" "tuma2;2" "aug3dcqp;3" "stokes64;2;--more-tasks")
    list(GET case 0 m)
    list(GET case 1 np)
    set(extra)
    list(LENGTH case len)
    if(len GREATER 2)
      list(GET case 2 extra)
    endif()
    add_test(NAME mpi.ldlt_${m}_${np}_ranks COMMAND ${ldlt_same_result} ${np} ${_ldlt_mats}/${m}.mtx.gz ${ldlt} ${extra})
    list(APPEND _ldlt_mpi_tests mpi.ldlt_${m}_${np}_ranks)
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
