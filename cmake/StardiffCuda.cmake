# SPDX-License-Identifier: LGPL-2.1-or-later
# StardiffCuda.cmake — decides whether CUDA kernels and StarPU CUDA codelets build.
#
# STARDIFF_CUDA_KERNELS: codelets/cuda/*.cu compiled into `stardiff_cuda_kernels`
#   (pure CUDA taking a cudaStream_t; needs only nvcc).
# STARDIFF_STARPU_CUDA: additionally the StarPU CUDA codelet wrappers (needs a
#   CUDA-enabled StarPU, see scripts/build-starpu-cuda.sh).
set(STARDIFF_CUDA_KERNELS OFF)
set(STARDIFF_STARPU_CUDA OFF)
if(NOT STARDIFF_WITH_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Before enable_language: CMake would otherwise cache nvcc's own default (75 for
    # CUDA 13, 52 before) as if the user had chosen it.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90 CACHE STRING "CUDA architectures (90: H100/H200)")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit)
    set(STARDIFF_CUDA_KERNELS ON)
  elseif(STARDIFF_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "STARDIFF_WITH_CUDA=ON but no CUDA compiler was found")
  endif()
endif()
if(STARDIFF_CUDA_KERNELS)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "52")
    set(CMAKE_CUDA_ARCHITECTURES 90)  # H100/H200; override on the command line
  endif()
  set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 knows no CUDA20 flag for nvcc 13
  set(STARDIFF_CU_SOURCES)
  foreach(m ${STARDIFF_MODULES})
    file(GLOB msrc CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/codelets/cuda/${m}/*.cu)
    list(APPEND STARDIFF_CU_SOURCES ${msrc})
  endforeach()
  if(STARDIFF_CU_SOURCES)
    add_library(stardiff_cuda_kernels STATIC ${STARDIFF_CU_SOURCES})
    set_target_properties(stardiff_cuda_kernels PROPERTIES POSITION_INDEPENDENT_CODE ON
      CUDA_SEPARABLE_COMPILATION OFF)
    target_include_directories(stardiff_cuda_kernels PRIVATE
      ${CMAKE_CURRENT_SOURCE_DIR}/include ${CMAKE_CURRENT_SOURCE_DIR}/codelets)
    target_compile_options(stardiff_cuda_kernels PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr>)
    set(cuda_link PUBLIC)
  else()  # no enabled module has CUDA kernels: only the runtime to link
    add_library(stardiff_cuda_kernels INTERFACE)
    set(cuda_link INTERFACE)
  endif()
  if(TARGET CUDA::cusparse)
    target_link_libraries(stardiff_cuda_kernels ${cuda_link} CUDA::cusparse)  # tridiag's gtsv2 variant
  endif()
  if(STARPU_HAS_CUDA)
    # Share StarPU's CUDA runtime (one runtime per process, same contexts and streams).
    set(STARDIFF_STARPU_CUDA ON)
    target_link_libraries(stardiff_cuda_kernels ${cuda_link} CUDA::cudart)
  elseif(TARGET CUDA::cudart_static)
    target_link_libraries(stardiff_cuda_kernels ${cuda_link} CUDA::cudart_static)
  endif()
endif()
include(StardiffCudaKernels)  # stardiff_add_cuda_kernels (also in the installed package)
