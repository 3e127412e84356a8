# SPDX-License-Identifier: LGPL-2.1-or-later
# apps/cde/check_bitwise.cmake — runs stardiff-cde (EXE) on the sequential executor and on StarPU
# (the scheduler from STARPU_SCHED) with leverage-free and damped settings and fails unless the
# solution hashes (FNV-1a of every node's bytes) and prices are identical.
set(args --ns 64 --nv 48 --steps 12 --damping 2 --rf 0.02)
execute_process(COMMAND ${EXE} ${args} --executor sequential OUTPUT_VARIABLE seq RESULT_VARIABLE rc1)
execute_process(COMMAND ${EXE} ${args} --executor starpu OUTPUT_VARIABLE par RESULT_VARIABLE rc2)
if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0)
  message(FATAL_ERROR "stardiff-cde failed: ${rc1} / ${rc2}")
endif()
string(REGEX MATCH "price = [^\n]*" p1 "${seq}")
string(REGEX MATCH "price = [^\n]*" p2 "${par}")
string(REGEX MATCH "solution_hash = [0-9a-f]+" h1 "${seq}")
string(REGEX MATCH "solution_hash = [0-9a-f]+" h2 "${par}")
if(h1 STREQUAL "" OR NOT h1 STREQUAL h2 OR NOT p1 STREQUAL p2)
  message(FATAL_ERROR "sequential and StarPU differ:\n${seq}\n---\n${par}")
endif()
message(STATUS "bitwise equal: ${p1}, ${h1}")
