# SPDX-License-Identifier: LGPL-2.1-or-later
# Smoke run of mpi_scaling on 2 ranks (label mpi): both ranks send and run tasks, bitwise.
if(TARGET mpi_scaling AND STARDIFF_MPI AND STARDIFF_MPIRUN)
  add_test(NAME bench.mpi_scaling COMMAND ${STARDIFF_MPIRUN} --allow-run-as-root --oversubscribe --bind-to none
    -np 2 $<TARGET_FILE:mpi_scaling> --n 24 --iters 4 --tiles 4)
  set_tests_properties(bench.mpi_scaling PROPERTIES LABELS mpi TIMEOUT 300
    ENVIRONMENT "${STARDIFF_TEST_ENV};STARPU_NCPU=1;STARPU_COMM_STATS=1"
    PASS_REGULAR_EXPRESSION "rank=1 tiles=4 tasks=[0-9]+ tasks_run=[1-9][0-9]* messages=[1-9][0-9]* bytes_sent=[1-9][0-9]*\n.*ranks=2 n=24 iters=4 E=[0-9.e-]+ bitwise=yes"
    FAIL_REGULAR_EXPRESSION "bitwise=no")
else()
  stardiff_skipped_test(bench.mpi_scaling_not_run "mpi_scaling needs StarPU-MPI, mpirun and the mesh/adjoint modules" mpi)
endif()
# The LDL^T on 2 ranks (label mpi): both ranks run tasks, rank 1 sends (contribution blocks,
# pivot statistics, the solve's vectors, its share of the solution), bitwise.
set(_ldlt_bench_matrix ${PROJECT_SOURCE_DIR}/../shared/data/matrices/bcsstk18.mtx.gz)
if(TARGET mpi_scaling_ldlt AND STARDIFF_MPI AND STARDIFF_MPIRUN AND EXISTS ${_ldlt_bench_matrix})
  add_test(NAME bench.mpi_scaling_ldlt COMMAND ${STARDIFF_MPIRUN} --allow-run-as-root --oversubscribe --bind-to none
    -np 2 $<TARGET_FILE:mpi_scaling_ldlt> ${_ldlt_bench_matrix})
  set_tests_properties(bench.mpi_scaling_ldlt PROPERTIES LABELS mpi TIMEOUT 300 PROCESSORS 2
    ENVIRONMENT "${STARDIFF_TEST_ENV};STARPU_NCPU=1;STARPU_COMM_STATS=1"
    PASS_REGULAR_EXPRESSION "rank=1 tasks=[0-9]+ tasks_run=[1-9][0-9]* flops_here=[1-9][0-9.e+]* messages=[1-9][0-9]* bytes_sent=[1-9][0-9]*\n.*ranks=2 n=11948 tasks=[0-9]+ bitwise=yes"
    FAIL_REGULAR_EXPRESSION "bitwise=no")
else()
  stardiff_skipped_test(bench.mpi_scaling_ldlt_not_run "mpi_scaling_ldlt needs StarPU-MPI, mpirun, the sparse module and bcsstk18" mpi)
endif()
# CloverLeaf on 2 ranks (label mpi): 2 steps of tp1 transposed, both ranks own tiles, run
# tasks and send, bitwise.
if(TARGET mpi_scaling_clover AND STARDIFF_MPI AND STARDIFF_MPIRUN)
  add_test(NAME bench.mpi_scaling_clover COMMAND ${STARDIFF_MPIRUN} --allow-run-as-root --oversubscribe --bind-to none
    -np 2 $<TARGET_FILE:mpi_scaling_clover> ${PROJECT_SOURCE_DIR}/apps/cloverleaf/decks/clover_tp1_transposed.in --steps 2)
  set_tests_properties(bench.mpi_scaling_clover PROPERTIES LABELS mpi TIMEOUT 300 PROCESSORS 2
    ENVIRONMENT "${STARDIFF_TEST_ENV};STARPU_NCPU=1;STARPU_COMM_STATS=1;OMPI_MCA_mpi_yield_when_idle=1"
    PASS_REGULAR_EXPRESSION "rank=1 tiles=4 tiles_here=2 tasks=[0-9]+ tasks_run=[1-9][0-9]* messages=[1-9][0-9]* bytes_sent=[1-9][0-9]*\n.*ranks=2 [^\n]*cells=2x10 steps=2 ke=[0-9.e-]+ bitwise=yes"
    FAIL_REGULAR_EXPRESSION "bitwise=no")
else()
  stardiff_skipped_test(bench.mpi_scaling_clover_not_run "mpi_scaling_clover needs StarPU-MPI, mpirun and stardiff-cloverleaf" mpi)
endif()
