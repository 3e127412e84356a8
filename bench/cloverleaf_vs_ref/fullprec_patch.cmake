# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/cloverleaf_vs_ref/fullprec_patch.cmake — cmake -DDIR=D -P: in the build-tree copy D of
# the reference CloverLeaf, prints the field summary with every digit: the one format
# '(a6,i7,7e16.4)' of field_summary.f90 becomes '(a6,i7,7es25.16)'. Fails unless that format
# occurs exactly once (another peer version must be looked at, not patched blindly).
set(f ${DIR}/field_summary.f90)
file(READ ${f} text)
set(old "'(a6,i7,7e16.4)'")
string(FIND "${text}" "${old}" first)
string(FIND "${text}" "${old}" last REVERSE)
if(first EQUAL -1 OR NOT first EQUAL last)
  message(FATAL_ERROR "fullprec_patch: ${f} does not hold the format ${old} exactly once")
endif()
string(REPLACE "${old}" "'(a6,i7,7es25.16)'" text "${text}")
file(WRITE ${f} "${text}")
