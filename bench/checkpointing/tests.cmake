# SPDX-License-Identifier: LGPL-2.1-or-later
# Smoke run of checkpointing (label bench): tiny grids, must print a revolve line that matches save-all.
if(TARGET checkpointing)
  add_test(NAME bench.checkpointing COMMAND checkpointing --n 32 --iters 8 --snapshots 2,3)
  set_tests_properties(bench.checkpointing PROPERTIES LABELS bench ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "checkpointing problem=nonlinear strategy=revolve steps=8 snapshots=3 recomputed=[0-9]+ peak_bytes=[0-9]+ ratio=[0-9.]+ optimal=([0-9]+) .*bitwise=yes"
    FAIL_REGULAR_EXPRESSION "bitwise=no")
  add_test(NAME bench.checkpointing_rev_acc COMMAND checkpointing --n 16 --iters 6 --snapshots 2 --problems rev-acc
    --revacc-n 8 --revacc-iters 600 --revacc-tol 1e-10)
  set_tests_properties(bench.checkpointing_rev_acc PROPERTIES LABELS bench ENVIRONMENT "${STARDIFF_TEST_ENV}"
    PASS_REGULAR_EXPRESSION "strategy=rev-acc steps=600 snapshots=0 recomputed=0 peak_bytes=[0-9]+ ratio=[0-9.]+ full_peak_bytes=24 full_ratio=[0-9.]+ adjoint_iterations=[0-9]+ status=converged change=[0-9.e-]+ rel_diff=[0-9.e-]+ n=8")
else()
  stardiff_skipped_test(bench.checkpointing_not_built "checkpointing is not built (module mesh or adjoint or STARDIFF_BUILD_BENCH off)" bench)
endif()
