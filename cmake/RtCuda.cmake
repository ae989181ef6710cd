# RT_CUDA: the CUDA backend (kernels/cuda/, engine/src/cuda/). AUTO builds it when nvcc and the
# toolkit are found, ON requires them, OFF builds engine/src/cuda/stub/, which explains at run
# time that CUDA was not built. Sets RT_WITH_CUDA for the engine's CMakeLists.
set(RT_CUDA AUTO CACHE STRING "Build the CUDA backend: AUTO (when the toolkit is found), ON or OFF")
set_property(CACHE RT_CUDA PROPERTY STRINGS AUTO ON OFF)
set(RT_WITH_CUDA OFF)
if(NOT RT_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  find_package(CUDAToolkit QUIET)
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND AND TARGET CUDA::cublas)
    set(RT_WITH_CUDA ON)
  elseif(RT_CUDA STREQUAL "ON")
    message(FATAL_ERROR "RT_CUDA=ON but nvcc or the CUDA toolkit (cudart, cuBLAS) was not found: install it in "
                        "/usr/local/cuda or pass -DCUDAToolkit_ROOT=..., or configure with -DRT_CUDA=OFF")
  endif()
endif()
if(RT_WITH_CUDA)
  # Hopper (H100/H200) by default; never `native`: the build machine has no GPU.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  if(CCACHE_PROGRAM)
    set(CMAKE_CUDA_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
  endif()
  enable_language(CUDA)
  # CUDA sources take the C++ targets' C++20; CMake 3.25 knows no nvcc flag for that dialect
  # (nvcc 13 has it), so name it.
  # The top-level -O3 applies to device code too; drop CMake's own -O level so nvcc sees one.
  foreach(config RELEASE RELWITHDEBINFO)
    string(REGEX REPLACE "-O[0-3s]" "" CMAKE_CUDA_FLAGS_${config} "${CMAKE_CUDA_FLAGS_${config}}")
  endforeach()
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
endif()
message(STATUS "rt_engine: CUDA backend ${RT_WITH_CUDA} (RT_CUDA=${RT_CUDA}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
