# The CUDA measurement backend (src/measure/cuda/) builds where the CUDA toolkit, cuDNN and
# CUPTI are found; it is its own static library linked into modelcost_core, which then defines
# MODELCOST_HAVE_CUDA. Without the toolkit the core's make_backend() reports "no NVIDIA GPU".
# Building needs no GPU: the kernels are compiled for sm_90 (H100/H200) by default; set
# CMAKE_CUDA_ARCHITECTURES to build for others.
set(MODELCOST_HAVE_CUDA OFF)
if(NOT MODELCOST_WITH_CUDA)
  message(STATUS "modelcost: CUDA backend disabled (MODELCOST_WITH_CUDA=OFF)")
  return()
endif()

if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  message(STATUS "modelcost: no CUDA compiler found; building without the GPU backend")
  return()
endif()

find_package(CUDAToolkit QUIET)
if(NOT CUDAToolkit_FOUND)
  message(STATUS "modelcost: CUDA toolkit libraries not found; building without the GPU backend")
  return()
endif()
find_library(MODELCOST_CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib)
find_path(MODELCOST_CUDNN_INCLUDE cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
find_library(MODELCOST_CUPTI_LIBRARY cupti HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/lib64)
find_path(MODELCOST_CUPTI_INCLUDE cupti.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/include)
if(NOT MODELCOST_CUDNN_LIBRARY OR NOT MODELCOST_CUDNN_INCLUDE OR NOT MODELCOST_CUPTI_LIBRARY OR NOT MODELCOST_CUPTI_INCLUDE)
  message(STATUS "modelcost: cuDNN or CUPTI not found; building without the GPU backend")
  return()
endif()

if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 90)
endif()
set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
enable_language(CUDA)

file(GLOB MODELCOST_CUDA_SOURCES CONFIGURE_DEPENDS
     ${PROJECT_SOURCE_DIR}/src/measure/cuda/*.cu ${PROJECT_SOURCE_DIR}/src/measure/cuda/*.cpp)
add_library(modelcost_cuda STATIC ${MODELCOST_CUDA_SOURCES})
target_include_directories(modelcost_cuda PRIVATE ${MODELCOST_CUDNN_INCLUDE} ${MODELCOST_CUPTI_INCLUDE})
# The CUDA sources use the core's headers and a few of its functions (node specs, op plans):
# the two static libraries depend on each other, which CMake resolves by repeating them.
target_link_libraries(modelcost_cuda PUBLIC modelcost_core)
target_link_libraries(modelcost_cuda PRIVATE CUDA::cudart_static CUDA::cublasLt ${MODELCOST_CUDNN_LIBRARY}
                      ${MODELCOST_CUPTI_LIBRARY})
target_compile_options(modelcost_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -lineinfo>
                       $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
# No relocatable device code, so no device-link step (which would need the core library built
# first, though the core links this one).
set_target_properties(modelcost_cuda PROPERTIES POSITION_INDEPENDENT_CODE ON CUDA_RESOLVE_DEVICE_SYMBOLS OFF)

target_link_libraries(modelcost_core PUBLIC modelcost_cuda)
target_compile_definitions(modelcost_core PUBLIC MODELCOST_HAVE_CUDA)
set(MODELCOST_HAVE_CUDA ON)
message(STATUS "modelcost: CUDA backend ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, sm ${CMAKE_CUDA_ARCHITECTURES}, "
               "cuDNN ${MODELCOST_CUDNN_LIBRARY}, CUPTI ${MODELCOST_CUPTI_LIBRARY})")
