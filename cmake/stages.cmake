# Each pipeline stage of the README is one static library, modelcost_<stage>, built from
# src/<stage>/**/*.cpp and linking only the stages it names in DEPENDS. A stage may depend only
# on stages declared before it, so the chain has no cycle; a stage's tests link that stage only
# (tests/CMakeLists.txt), so a call into a stage above it fails to link there.
#
#   modelcost_add_stage(<stage> [DEPENDS <stage>...] [LIBRARIES <target>...] [EXCLUDE <regex>...])
#
# LIBRARIES: outside libraries the stage's headers or code use. EXCLUDE: source paths left out.
function(modelcost_add_stage stage)
  cmake_parse_arguments(STAGE "" "" "DEPENDS;LIBRARIES;EXCLUDE" ${ARGN})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${stage}/*.cpp)
  foreach(pattern IN LISTS STAGE_EXCLUDE)
    list(FILTER sources EXCLUDE REGEX "${pattern}")
  endforeach()
  if(NOT sources)
    message(FATAL_ERROR "modelcost stage '${stage}': no sources under src/${stage}/")
  endif()
  add_library(modelcost_${stage} STATIC ${sources})
  target_link_libraries(modelcost_${stage} PUBLIC modelcost_headers ${STAGE_LIBRARIES})
  foreach(below IN LISTS STAGE_DEPENDS)
    if(NOT TARGET modelcost_${below})
      message(FATAL_ERROR "modelcost stage '${stage}' depends on '${below}', which is not declared before it")
    endif()
    target_link_libraries(modelcost_${stage} PUBLIC modelcost_${below})
  endforeach()
  target_compile_options(modelcost_${stage} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  set_property(GLOBAL APPEND PROPERTY MODELCOST_STAGES ${stage})
endfunction()
