# SPDX-License-Identifier: LGPL-2.1-or-later
# apps/cde/check_bitwise.cmake — runs stardiff-cde (EXE) on the sequential executor and on StarPU
# (the scheduler from STARPU_SCHED; default tiles, and 6 tiles) with damping, r_f > 0 and once
# with the skew leverage surface (LEV), and fails unless the solution hashes (FNV-1a of every
# node's bytes) and prices are identical.
foreach(variant plain leverage)
  set(args --ns 64 --nv 48 --steps 12 --damping 2 --rf 0.02)
  if(variant STREQUAL "leverage")
    list(APPEND args --leverage ${LEV})
  endif()
  execute_process(COMMAND ${EXE} ${args} --executor sequential OUTPUT_VARIABLE seq RESULT_VARIABLE rc1)
  execute_process(COMMAND ${EXE} ${args} --executor starpu OUTPUT_VARIABLE par RESULT_VARIABLE rc2)
  execute_process(COMMAND ${EXE} ${args} --executor starpu --tiles 6 OUTPUT_VARIABLE par6 RESULT_VARIABLE rc3)
  if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0 OR NOT rc3 EQUAL 0)
    message(FATAL_ERROR "stardiff-cde failed (${variant}): ${rc1} / ${rc2} / ${rc3}")
  endif()
  foreach(out seq par par6)
    string(REGEX MATCH "price = [^\n]*" p_${out} "${${out}}")
    string(REGEX MATCH "solution_hash = [0-9a-f]+" h_${out} "${${out}}")
  endforeach()
  if(h_seq STREQUAL "" OR NOT h_seq STREQUAL h_par OR NOT h_seq STREQUAL h_par6 OR NOT p_seq STREQUAL p_par
     OR NOT p_seq STREQUAL p_par6)
    message(FATAL_ERROR "sequential and StarPU differ (${variant}):\n${seq}\n---\n${par}\n---\n${par6}")
  endif()
  message(STATUS "bitwise equal (${variant}): ${p_seq}, ${h_seq}")
endforeach()
