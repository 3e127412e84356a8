# SPDX-License-Identifier: LGPL-2.1-or-later
# StardiffDependencies.cmake — finds what stardiff links and probes StarPU's build.
#
# Defines the INTERFACE target `stardiff_deps` (StarPU, hwloc, OpenBLAS, LAPACKE,
# METIS, SuiteSparse AMD/KLU/LDL, zlib) and the variables STARPU_MODULE, STARPU_VERSION,
# STARPU_HAS_CUDA, STARPU_HAS_MPI, STARPU_MAXCPUS, STARPU_NMAXBUFS, and STARDIFF_MPI (ON when
# StarPU-MPI (starpumpi-<version>) and an MPI C library are found and STARDIFF_WITH_MPI is on:
# the target `stardiff_mpi_deps` then links them; without them nothing links MPI).
find_package(PkgConfig REQUIRED)

# The PKG_CONFIG_PATH of the first configure is kept in the cache and used again when
# `cmake --build` re-runs the configure step from an environment without it: otherwise a
# build directory made against a CUDA StarPU would switch silently to Debian's.
if(DEFINED ENV{PKG_CONFIG_PATH} AND NOT DEFINED STARDIFF_PKG_CONFIG_PATH)
  set(STARDIFF_PKG_CONFIG_PATH "$ENV{PKG_CONFIG_PATH}" CACHE STRING
    "PKG_CONFIG_PATH this build directory was configured with (used on re-runs)")
endif()
if(DEFINED STARDIFF_PKG_CONFIG_PATH AND NOT "$ENV{PKG_CONFIG_PATH}" STREQUAL "${STARDIFF_PKG_CONFIG_PATH}")
  if(DEFINED ENV{PKG_CONFIG_PATH})
    message(STATUS "PKG_CONFIG_PATH differs from this build's STARDIFF_PKG_CONFIG_PATH: the cached one is used (-DSTARDIFF_PKG_CONFIG_PATH=... to change it)")
  endif()
  set(ENV{PKG_CONFIG_PATH} "${STARDIFF_PKG_CONFIG_PATH}")
endif()

# StarPU: a user's 1.4 build (via PKG_CONFIG_PATH) wins over Debian's 1.3.
pkg_check_modules(STARPU IMPORTED_TARGET starpu-1.4)
if(STARPU_FOUND)
  set(STARPU_MODULE starpu-1.4)
else()
  pkg_check_modules(STARPU REQUIRED IMPORTED_TARGET starpu-1.3)
  set(STARPU_MODULE starpu-1.3)
endif()
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)

unset(STARPU_CONFIG_H CACHE)  # always this StarPU's (a cached path may be another's)
find_file(STARPU_CONFIG_H starpu_config.h PATHS ${STARPU_INCLUDE_DIRS} NO_DEFAULT_PATH NO_CACHE REQUIRED)
file(STRINGS ${STARPU_CONFIG_H} _cfg)
set(STARPU_HAS_CUDA OFF)
set(STARPU_HAS_MPI OFF)
foreach(line IN LISTS _cfg)
  if(line MATCHES "^#define STARPU_USE_CUDA( |$)")
    set(STARPU_HAS_CUDA ON)
  elseif(line MATCHES "^#define STARPU_USE_MPI( |$)")
    set(STARPU_HAS_MPI ON)
  elseif(line MATCHES "^#define STARPU_MAXCPUS ([0-9]+)")
    set(STARPU_MAXCPUS ${CMAKE_MATCH_1})
  elseif(line MATCHES "^#define STARPU_NMAXBUFS ([0-9]+)")
    set(STARPU_NMAXBUFS ${CMAKE_MATCH_1})
  endif()
endforeach()

function(stardiff_find_lib var name header)
  find_library(${var}_LIB NAMES ${name} REQUIRED)
  find_path(${var}_INC ${header} PATH_SUFFIXES suitesparse REQUIRED)
  set(${var}_LIB ${${var}_LIB} PARENT_SCOPE)
  set(${var}_INC ${${var}_INC} PARENT_SCOPE)
endfunction()

stardiff_find_lib(OPENBLAS openblas cblas.h)
stardiff_find_lib(LAPACKE lapacke lapacke.h)
stardiff_find_lib(METIS metis metis.h)
stardiff_find_lib(AMD amd amd.h)
stardiff_find_lib(KLU klu klu.h)
stardiff_find_lib(LDL ldl ldl.h)
stardiff_find_lib(BTF btf btf.h)
stardiff_find_lib(COLAMD colamd colamd.h)
stardiff_find_lib(SSCONFIG suitesparseconfig SuiteSparse_config.h)
find_package(ZLIB REQUIRED)
find_package(Threads REQUIRED)

add_library(stardiff_deps INTERFACE)
target_link_libraries(stardiff_deps INTERFACE
  PkgConfig::STARPU PkgConfig::HWLOC
  ${KLU_LIB} ${LDL_LIB} ${AMD_LIB} ${BTF_LIB} ${COLAMD_LIB} ${SSCONFIG_LIB} ${METIS_LIB}
  ${LAPACKE_LIB} ${OPENBLAS_LIB} ZLIB::ZLIB Threads::Threads)
target_include_directories(stardiff_deps INTERFACE
  ${OPENBLAS_INC} ${LAPACKE_INC} ${METIS_INC} ${AMD_INC})
target_compile_definitions(stardiff_deps INTERFACE
  STARDIFF_STARPU_MAXCPUS=${STARPU_MAXCPUS} STARDIFF_STARPU_NMAXBUFS=${STARPU_NMAXBUFS})

# Peers for the benchmarks and tests (optional): CHOLMOD, UMFPACK, MUMPS sequential.
find_library(CHOLMOD_LIB cholmod)
find_library(UMFPACK_LIB umfpack)
find_library(CAMD_LIB camd)
find_library(CCOLAMD_LIB ccolamd)
find_library(DMUMPS_SEQ_LIB dmumps_seq)
find_library(MUMPS_COMMON_SEQ_LIB mumps_common_seq)
find_library(MPISEQ_LIB mpiseq_seq)
find_path(MUMPS_SEQ_INC mpi.h PATHS /usr/include/mumps_seq NO_DEFAULT_PATH)

# StarPU-MPI (optional): libstarpumpi and the MPI it was built on (Open MPI on Debian).
option(STARDIFF_WITH_MPI "Build the StarPU-MPI runtime option when StarPU-MPI is found" ON)
set(STARDIFF_MPI OFF)
if(STARDIFF_WITH_MPI)
  string(REPLACE "starpu-" "starpumpi-" _mpi_module "${STARPU_MODULE}")
  pkg_check_modules(STARPUMPI QUIET IMPORTED_TARGET ${_mpi_module})
  # Only the StarPU-MPI of this very StarPU: a CUDA StarPU from PKG_CONFIG_PATH beside
  # Debian's starpumpi (built on Debian's libstarpu, same soname) would mix two StarPUs.
  if(STARPUMPI_FOUND AND NOT STARPUMPI_LIBDIR STREQUAL STARPU_LIBDIR)
    message(STATUS "StarPU-MPI in ${STARPUMPI_LIBDIR} belongs to another StarPU than ${STARPU_LIBDIR}: MPI runtime off")
    set(STARPUMPI_FOUND OFF)
  endif()
  if(STARPUMPI_FOUND)
    find_package(MPI QUIET COMPONENTS C)
    if(MPI_C_FOUND)
      set(STARDIFF_MPI ON)
      add_library(stardiff_mpi_deps INTERFACE)
      target_link_libraries(stardiff_mpi_deps INTERFACE PkgConfig::STARPUMPI MPI::MPI_C)
    endif()
  endif()
endif()
find_program(STARDIFF_MPIRUN NAMES mpirun mpiexec)
