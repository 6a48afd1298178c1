# cmake --install: headers, the library, the command, a CMake package
# (find_package(hetstencil 0.3 CONFIG) -> hetstencil::hetstencil), a pkg-config
# file and the examples' sources. Paths after GNUInstallDirs.
include(CMakePackageConfigHelpers)

set(HETSTENCIL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/hetstencil)

install(DIRECTORY include/hetstencil ${PROJECT_BINARY_DIR}/include/hetstencil
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
install(TARGETS hetstencil EXPORT hetstencilTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET hetstencil_cli)
  install(TARGETS hetstencil_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES tools/plot_common.py tools/plot_sweep.py tools/plot_variants.py DESTINATION ${HETSTENCIL_PLOT_DIR})
endif()
install(EXPORT hetstencilTargets NAMESPACE hetstencil:: DESTINATION ${HETSTENCIL_CMAKE_DIR})

# A static library leaves its private dependencies to the application's link:
# the package then finds them too (a shared one needs only Threads).
get_target_property(_type hetstencil TYPE)
if(_type STREQUAL "STATIC_LIBRARY")
  set(HETSTENCIL_STATIC ON)
else()
  set(HETSTENCIL_STATIC OFF)
endif()
configure_package_config_file(cmake/hetstencilConfig.cmake.in ${PROJECT_BINARY_DIR}/hetstencilConfig.cmake
                              INSTALL_DESTINATION ${HETSTENCIL_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/hetstencilConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/hetstencilConfig.cmake ${PROJECT_BINARY_DIR}/hetstencilConfigVersion.cmake
        DESTINATION ${HETSTENCIL_CMAKE_DIR})

# pkg-config: the same library; a static one names what it links against
# under Libs.private (pkg-config --static). Direct -l flags rather than
# Requires.private: --static would pull in those packages' own private
# libraries too (hwloc's libudev...), which a system need not have.
set(HETSTENCIL_PC_LIBS_PRIVATE "")
if(HETSTENCIL_STATIC)
  pkg_check_modules(HETSTENCIL_SPDLOG_PC QUIET spdlog)
  set(_libs ${HWLOC_LIBRARIES} ${NUMA_LIBRARIES})
  if(HETSTENCIL_SPDLOG_PC_FOUND)
    list(APPEND _libs ${HETSTENCIL_SPDLOG_PC_LIBRARIES})
  else()
    list(APPEND _libs spdlog fmt)
  endif()
  if(HETSTENCIL_CUDA)
    string(APPEND HETSTENCIL_PC_LIBS_PRIVATE "-L${CUDAToolkit_LIBRARY_DIR} ")
    list(APPEND _libs cudart)
  endif()
  if(HETSTENCIL_MPI)
    foreach(_mpi_lib IN LISTS MPI_C_LIBRARIES)
      get_filename_component(_mpi_dir ${_mpi_lib} DIRECTORY)
      string(APPEND HETSTENCIL_PC_LIBS_PRIVATE "-L${_mpi_dir} ")
    endforeach()
    list(APPEND _libs mpi)
  endif()
  if(HETSTENCIL_CUDA OR HETSTENCIL_NCCL)
    list(APPEND _libs ${CMAKE_DL_LIBS})  # NVRTC and NCCL are opened at run time
  endif()
  list(REMOVE_DUPLICATES _libs)
  foreach(_lib IN LISTS _libs)
    string(APPEND HETSTENCIL_PC_LIBS_PRIVATE "-l${_lib} ")
  endforeach()
  string(STRIP "${HETSTENCIL_PC_LIBS_PRIVATE}" HETSTENCIL_PC_LIBS_PRIVATE)
endif()
# The prefix is found from the file's own place (${pcfiledir}): the install
# holds wherever `cmake --install --prefix` puts it.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(HETSTENCIL_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _up "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
  string(REGEX REPLACE "/$" "" _up "${_up}")
  set(HETSTENCIL_PC_PREFIX "\${pcfiledir}/${_up}")
endif()
foreach(_dir IN ITEMS INCLUDEDIR LIBDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_dir}}")
    set(HETSTENCIL_PC_${_dir} "${CMAKE_INSTALL_${_dir}}")
  else()
    set(HETSTENCIL_PC_${_dir} "\${prefix}/${CMAKE_INSTALL_${_dir}}")
  endif()
endforeach()
configure_file(cmake/hetstencil.pc.in ${PROJECT_BINARY_DIR}/hetstencil.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/hetstencil.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The examples as sources to start from; examples/consumer builds against an install as is.
install(DIRECTORY examples/ DESTINATION ${CMAKE_INSTALL_DATADIR}/hetstencil/examples
        PATTERN "CMakeLists.txt" EXCLUDE)
install(FILES examples/consumer/CMakeLists.txt DESTINATION ${CMAKE_INSTALL_DATADIR}/hetstencil/examples/consumer)
