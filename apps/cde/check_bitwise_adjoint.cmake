# SPDX-License-Identifier: LGPL-2.1-or-later
# apps/cde/check_bitwise_adjoint.cmake — runs stardiff-cde --adjoint (EXE) on the sequential
# executor and on StarPU (the scheduler from STARPU_SCHED), both with 4 tiles (the adjoints of the
# low-dimensional coefficient dats are summed per tile, so equal tilings are compared), with
# damping, r_f > 0 and the skew leverage surface (LEV), save-all and Revolve, and fails unless the
# JSON adjoint price and "greeks" object (every Greek and every leverage node's gradient, %.17g)
# are identical. Save-all (the forward keeps the stages) is also run on StarPU with
# --stage-memory 0 (the reverse recomputes them): the same Greeks again.
foreach(ck all 4)
  set(args --ns 48 --nv 24 --steps 10 --damping 2 --rf 0.02 --tiles 4 --adjoint --checkpoints ${ck} --leverage ${LEV} --json)
  execute_process(COMMAND ${EXE} ${args} --executor sequential OUTPUT_VARIABLE seq RESULT_VARIABLE rc1)
  execute_process(COMMAND ${EXE} ${args} --executor starpu OUTPUT_VARIABLE par RESULT_VARIABLE rc2)
  set(outs seq par)
  if(ck STREQUAL "all")
    execute_process(COMMAND ${EXE} ${args} --stage-memory 0 --executor starpu OUTPUT_VARIABLE rec RESULT_VARIABLE rc3)
    list(APPEND outs rec)
    if(NOT rc3 EQUAL 0 OR NOT seq MATCHES "\"kept_steps\":12," OR NOT rec MATCHES "\"kept_steps\":0,")
      message(FATAL_ERROR "stardiff-cde --adjoint --stage-memory 0 failed or kept the wrong steps: ${rc3}\n${seq}\n---\n${rec}")
    endif()
  endif()
  if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0)
    message(FATAL_ERROR "stardiff-cde --adjoint failed (checkpoints ${ck}): ${rc1} / ${rc2}")
  endif()
  foreach(out ${outs})
    string(REGEX MATCHALL "\"adjoint_price\":[^,]*|\"greeks\":{[^}]*}" g_${out} "${${out}}")
  endforeach()
  list(LENGTH g_seq n)
  if(NOT n EQUAL 2 OR NOT g_seq STREQUAL g_par)
    message(FATAL_ERROR "sequential and StarPU Greeks differ (checkpoints ${ck}):\n${seq}\n---\n${par}")
  endif()
  if(ck STREQUAL "all" AND NOT g_seq STREQUAL g_rec)
    message(FATAL_ERROR "kept and recomputed stages' Greeks differ:\n${seq}\n---\n${rec}")
  endif()
  message(STATUS "Greeks bitwise equal (checkpoints ${ck}): ${g_seq}")
endforeach()
