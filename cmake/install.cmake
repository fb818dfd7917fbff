# `cmake --install build [--prefix DIR]` and `cpack` (a .deb): the binary in bin/, the CUDA module in
# lib/modelcost/ (cmake/cuda.cmake), the device database in share/modelcost/hwdb, the docs in
# share/doc/modelcost. The binary finds the module and the database relative to itself, so the
# installed tree works wherever it is copied.
install(TARGETS modelcost RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/hwdb/ DESTINATION ${CMAKE_INSTALL_DATADIR}/modelcost/hwdb
        FILES_MATCHING PATTERN "*.toml")
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME modelcost)
set(CPACK_PACKAGE_VENDOR "modelcost")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "ONNX model cost analyzer: MACs, FLOPs, bytes, roofline and capacity plan per layer")
set(CPACK_PACKAGE_INSTALL_DIRECTORY modelcost)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "modelcost maintainers")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# The analyzer's shared libraries (Debian 12); the CUDA module's (CUDA, cuDNN, CUPTI) come from
# NVIDIA's packages and are needed only to measure, so the package does not depend on them.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libonnx1 (>= 1.12), libprotobuf32, libfmt9, libstdc++6, libc6")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "cuda-runtime, libcudnn9")
include(CPack)
