# SPDX-License-Identifier: LGPL-2.1-or-later
# StardiffCudaKernels.cmake — stardiff_add_cuda_kernels(<target> [<source>.cu ...]).
#
# Adds the sources to <target> and compiles every CUDA source of <target> the way
# stardiff's headers need (nvcc, C++20, --expt-relaxed-constexpr), linked to the CUDA
# runtime: the par_loop calls of those translation units get CUDA implementations beside
# the CPU ones (stardiff/mesh/par_loop_cuda.cuh). The project must enable CUDA first
# (project(... LANGUAGES CXX CUDA) or enable_language(CUDA)) and set
# CMAKE_CUDA_ARCHITECTURES. Installed with stardiff's CMake package (find_package(stardiff)).
# CMake 3.25 knows no C++20 flag for nvcc (stardiff's targets require cxx_std_20).
macro(stardiff_cuda20_flags)
  if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION OR CMAKE_CUDA20_STANDARD_COMPILE_OPTION STREQUAL "")
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
endmacro()
stardiff_cuda20_flags()

function(stardiff_add_cuda_kernels target)
  if(NOT CMAKE_CUDA_COMPILER_LOADED)
    message(FATAL_ERROR "stardiff_add_cuda_kernels(${target}): enable CUDA first (enable_language(CUDA))")
  endif()
  if(ARGN)
    target_sources(${target} PRIVATE ${ARGN})
    set_source_files_properties(${ARGN} TARGET_DIRECTORY ${target} PROPERTIES LANGUAGE CUDA)
  endif()
  set_target_properties(${target} PROPERTIES CUDA_STANDARD 20 CUDA_STANDARD_REQUIRED ON)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -diag-suppress=186>)
  if(NOT TARGET CUDA::cudart)
    find_package(CUDAToolkit REQUIRED)
  endif()
  target_link_libraries(${target} PRIVATE CUDA::cudart)
endfunction()
