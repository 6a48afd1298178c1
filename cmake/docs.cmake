# The API reference: `cmake --build <build> --target docs` writes <build>/docs/html
# from docs/Doxyfile (the public headers, the build tree's version.hpp and the pages
# of docs/), and fails on an undocumented public member. Without Doxygen the
# target says how to get it. A project that builds hetstencil inside its own
# gets no such target.
if(NOT PROJECT_IS_TOP_LEVEL)
  return()
endif()
find_package(Doxygen QUIET)
if(DOXYGEN_FOUND)
  # docs/Doxyfile is read as it is, from the source tree; only where it writes
  # and the configured version header differ per build tree.
  set(_hetstencil_doxyfile ${PROJECT_BINARY_DIR}/Doxyfile.docs)
  file(WRITE ${_hetstencil_doxyfile}
       "@INCLUDE = ${PROJECT_SOURCE_DIR}/docs/Doxyfile\n"
       "OUTPUT_DIRECTORY = ${PROJECT_BINARY_DIR}/docs\n"
       "INPUT += ${PROJECT_BINARY_DIR}/include/hetstencil/version.hpp\n"
       "STRIP_FROM_PATH = ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include\n"
       "STRIP_FROM_INC_PATH = ${PROJECT_SOURCE_DIR}/include ${PROJECT_BINARY_DIR}/include\n")
  add_custom_target(docs
    COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/docs
    COMMAND Doxygen::doxygen ${_hetstencil_doxyfile}
    COMMAND ${CMAKE_COMMAND} -E echo "hetstencil: the API reference is ${PROJECT_BINARY_DIR}/docs/html/index.html"
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    COMMENT "Generating the API reference with Doxygen"
    VERBATIM)
else()
  add_custom_target(docs
    COMMAND ${CMAKE_COMMAND} -E echo "hetstencil: Doxygen was not found; install it (apt-get install doxygen) and configure again to build the API reference"
    COMMAND ${CMAKE_COMMAND} -E false
    VERBATIM)
endif()
