# The CUDA measurement backend (src/measure/cuda/) builds where the CUDA toolkit, cuDNN and CUPTI
# are found, as a shared module, libmodelcost_cuda.so, that the analyzer loads with dlopen only when
# it measures (--measure, --gpu auto, calibrate), as ONNX Runtime loads its execution providers:
# the analyzer itself links no CUDA library and starts without them. The module's one exported
# symbol is the C entry point of src/measure/cuda_entry.h (src/measure/cuda/core/module_entry.cpp).
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

# The sources sit in one folder per kind (core/, timing/, one per kernel family, deployed/,
# calibrate/, llm/; docs/measurement.md has the map) and include each other by their path under
# src/measure/cuda: "core/cuda_check.h".
set(MODELCOST_CUDA_DIR ${PROJECT_SOURCE_DIR}/src/measure/cuda)
file(GLOB_RECURSE MODELCOST_CUDA_SOURCES CONFIGURE_DEPENDS ${MODELCOST_CUDA_DIR}/*.cu ${MODELCOST_CUDA_DIR}/*.cpp)
list(FILTER MODELCOST_CUDA_SOURCES EXCLUDE REGEX "/core/module_entry\\.cpp$")
# Kernels of Hopper's architecture-specific instructions (wgmma) build for sm_90a alone, beside
# the rest; their launchers check the device before using them.
set(MODELCOST_CUDA_SM90A_SOURCES ${MODELCOST_CUDA_SOURCES})
list(FILTER MODELCOST_CUDA_SM90A_SOURCES INCLUDE REGEX "_sm90a\\.cu$")
list(FILTER MODELCOST_CUDA_SOURCES EXCLUDE REGEX "_sm90a\\.cu$")
add_library(modelcost_cuda_sm90a OBJECT ${MODELCOST_CUDA_SM90A_SOURCES})
target_include_directories(modelcost_cuda_sm90a PRIVATE ${MODELCOST_CUDA_DIR} ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(modelcost_cuda_sm90a PRIVATE fmt::fmt)
set_target_properties(modelcost_cuda_sm90a PROPERTIES CUDA_ARCHITECTURES 90a-real POSITION_INDEPENDENT_CODE ON
                      CUDA_VISIBILITY_PRESET hidden)
# The backend as a static library: linked into the module, and into the tests of its internals.
add_library(modelcost_cuda_backend STATIC ${MODELCOST_CUDA_SOURCES} $<TARGET_OBJECTS:modelcost_cuda_sm90a>)
target_include_directories(modelcost_cuda_backend PUBLIC ${MODELCOST_CUDA_DIR} ${MODELCOST_CUDNN_INCLUDE}
                           ${MODELCOST_CUPTI_INCLUDE})
target_link_libraries(modelcost_cuda_backend PUBLIC modelcost_measure CUDA::cudart_static CUDA::cublasLt
                      ${MODELCOST_CUDNN_LIBRARY} ${MODELCOST_CUPTI_LIBRARY})
target_compile_definitions(modelcost_cuda_backend PUBLIC MODELCOST_HAVE_CUDA)
target_compile_options(modelcost_cuda_backend PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -lineinfo>
                       $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unused-parameter>)
set_target_properties(modelcost_cuda_backend PROPERTIES CUDA_RESOLVE_DEVICE_SYMBOLS OFF
                      CXX_VISIBILITY_PRESET hidden CUDA_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)

# The module exports its entry point only: the stages linked into it (measure, graph) stay private
# copies, so no symbol of the analyzer is interposed and nothing is resolved from the executable.
add_library(modelcost_cuda MODULE ${MODELCOST_CUDA_DIR}/core/module_entry.cpp)
target_link_libraries(modelcost_cuda PRIVATE modelcost_cuda_backend)
target_link_options(modelcost_cuda PRIVATE -Wl,--exclude-libs,ALL -Wl,--no-undefined -Wl,--as-needed)
get_filename_component(MODELCOST_CUDNN_DIR ${MODELCOST_CUDNN_LIBRARY} DIRECTORY)
get_filename_component(MODELCOST_CUPTI_DIR ${MODELCOST_CUPTI_LIBRARY} DIRECTORY)
set_target_properties(modelcost_cuda PROPERTIES
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}  # next to the modelcost binary, where it is looked for
  CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
  INSTALL_RPATH "${CUDAToolkit_LIBRARY_DIR};${MODELCOST_CUDNN_DIR};${MODELCOST_CUPTI_DIR}")
install(TARGETS modelcost_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/modelcost)
set(MODELCOST_HAVE_CUDA ON)
message(STATUS "modelcost: CUDA module ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, sm ${CMAKE_CUDA_ARCHITECTURES}, "
               "cuDNN ${MODELCOST_CUDNN_LIBRARY}, CUPTI ${MODELCOST_CUPTI_LIBRARY})")
