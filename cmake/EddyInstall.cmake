# Installation: `cmake --install BUILD [--prefix P]` puts
#   bin/eddy                              the compiler (imported as eddy::eddy)
#   lib/libeddyrt.a, lib/libeddyrt.so*    the runtime (eddy::eddyrt, eddy::eddyrt_shared)
#   include/eddyrt.h                      what generated headers include
#   lib/cmake/eddy/                       find_package(eddy CONFIG) + eddy_add_model
#   lib/pkgconfig/eddyrt.pc               pkg-config --cflags --libs eddyrt
# The installed runtime is built from eddy_rt_core only (runtime/CMakeLists.txt):
# what generated code reaches, no kernels, no IR.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
find_package(Threads REQUIRED)

set(EDDY_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/eddy)
# Objects built with sanitizers need the sanitizer runtime in whatever links
# them, so the link flag travels with the installed targets and the .pc file.
set(EDDY_RT_SANITIZE_LINK)
if(EDDY_SANITIZE)
  set(EDDY_RT_SANITIZE_LINK -fsanitize=address,undefined)
endif()

# One build of the runtime objects, two archives: the static library exports
# every global (the internal rt_* helpers are needed across its objects), the
# shared one only the eddy_rt_* API (eddyrt.map).
foreach(kind static shared)
  string(TOUPPER ${kind} KIND)
  add_library(eddyrt_${kind} ${KIND} $<TARGET_OBJECTS:eddy_rt_core>)
  set_target_properties(eddyrt_${kind} PROPERTIES OUTPUT_NAME eddyrt LINKER_LANGUAGE C)
  target_include_directories(eddyrt_${kind} INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/runtime>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_options(eddyrt_${kind} INTERFACE ${EDDY_RT_SANITIZE_LINK})
endforeach()
set_target_properties(eddyrt_static PROPERTIES EXPORT_NAME eddyrt)
# EDDY_RT_BLAS_LIBS (runtime/CMakeLists.txt): OpenBLAS, when eddy was built
# with it (large f32 matmuls call it).
# CMAKE_DL_LIBS: dlopen, with which runtime/cuda.c loads the CUDA driver
# (in libc itself since glibc 2.34).
target_link_libraries(eddyrt_static INTERFACE m Threads::Threads ${EDDY_RT_BLAS_LIBS}
  ${CMAKE_DL_LIBS})
target_link_libraries(eddyrt_shared PRIVATE m Threads::Threads ${EDDY_RT_BLAS_LIBS}
  ${CMAKE_DL_LIBS})
target_link_options(eddyrt_shared PRIVATE ${EDDY_RT_SANITIZE_LINK} -Wl,--no-undefined
  -Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/eddyrt.map)
# The soname follows the runtime's ABI version (runtime/eddyrt.h).
file(STRINGS ${PROJECT_SOURCE_DIR}/runtime/eddyrt.h abi_line
  REGEX "^#define EDDY_RT_ABI_VERSION [0-9]+u?$")
string(REGEX REPLACE "^#define EDDY_RT_ABI_VERSION ([0-9]+)u?$" "\\1" EDDY_RT_ABI "${abi_line}")
if(NOT EDDY_RT_ABI MATCHES "^[0-9]+$")
  message(FATAL_ERROR "no EDDY_RT_ABI_VERSION in runtime/eddyrt.h")
endif()
set_target_properties(eddyrt_shared PROPERTIES
  VERSION ${EDDY_RT_ABI}.${PROJECT_VERSION_MINOR}.${PROJECT_VERSION_PATCH}
  SOVERSION ${EDDY_RT_ABI}
  LINK_DEPENDS ${PROJECT_SOURCE_DIR}/cmake/eddyrt.map)

# The names an installed package gives, also inside this build, so that
# cmake/EddyModel.cmake uses one set of names in both places.
add_library(eddy::eddyrt ALIAS eddyrt_static)
add_library(eddy::eddyrt_shared ALIAS eddyrt_shared)
add_executable(eddy::eddy ALIAS eddy)

# The CLI links LLVM and MLIR shared libraries from outside the system's
# search path (/usr/lib/llvm-19/lib): keep that path in the installed binary.
set_target_properties(eddy PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)

install(TARGETS eddy eddyrt_static eddyrt_shared EXPORT eddyTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/runtime/eddyrt.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT eddyTargets NAMESPACE eddy:: DESTINATION ${EDDY_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/eddyConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/eddyConfig.cmake
  INSTALL_DESTINATION ${EDDY_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/cmake/eddyConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/eddyConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/eddyConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/EddyModel.cmake
  DESTINATION ${EDDY_INSTALL_CMAKEDIR})

# pkg-config: Libs for the shared library (pkg-config --static adds what the
# archive needs). The prefix is found from the .pc file's own directory, so
# `cmake --install --prefix P` and moving the tree both work.
set(EDDY_RT_PC_PREFIX "\${pcfiledir}")
string(REPLACE "/" ";" pc_parts "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
foreach(part ${pc_parts})
  string(APPEND EDDY_RT_PC_PREFIX "/..")
endforeach()
string(REPLACE ";" " " EDDY_RT_PC_SANITIZE "${EDDY_RT_SANITIZE_LINK}")
set(EDDY_RT_PC_LIBS)
if(EDDY_RT_BLAS_LIBS)
  set(EDDY_RT_PC_LIBS -lopenblas)
endif()
# Libs.private: OpenBLAS (above) and dlopen's library (runtime/cuda.c),
# where there is one.
foreach(lib ${CMAKE_DL_LIBS})
  string(APPEND EDDY_RT_PC_LIBS " -l${lib}")
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/eddyrt.pc.in
  ${PROJECT_BINARY_DIR}/cmake/eddyrt.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/cmake/eddyrt.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

if(EDDY_BUILD_TESTS)
  enable_testing()
  # Installs into a prefix under the build tree, builds tests/install (an
  # outside CMake project using find_package(eddy) and eddy_add_model) and a
  # pkg-config build, runs both. See tests/install/run.sh.
  add_test(NAME install
    COMMAND sh ${PROJECT_SOURCE_DIR}/tests/install/run.sh
            ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR} ${CMAKE_COMMAND}
            ${CMAKE_GENERATOR} ${CMAKE_MAKE_PROGRAM} ${CMAKE_C_COMPILER})
  set_tests_properties(install PROPERTIES LABELS install TIMEOUT 120
    RUN_SERIAL ON)
endif()
