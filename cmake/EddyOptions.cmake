# Compiler flags shared by every eddy target.
add_library(eddy_flags INTERFACE)
target_compile_options(eddy_flags INTERFACE
  $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
    -Wno-unused-parameter -Wvla -fno-common>)
if(EDDY_WERROR)
  target_compile_options(eddy_flags INTERFACE -Werror)
endif()
target_include_directories(eddy_flags INTERFACE ${PROJECT_SOURCE_DIR})
if(CMAKE_BUILD_TYPE STREQUAL "Debug")
  target_compile_definitions(eddy_flags INTERFACE EDDY_DEBUG=1)
endif()
if(EDDY_FUZZ)
  # Every library is instrumented for coverage and checked by ASan and UBSan;
  # the fuzz targets add -fsanitize=fuzzer (libFuzzer's main) at link time.
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "EDDY_FUZZ needs clang (-DCMAKE_C_COMPILER=clang-19), "
                        "not ${CMAKE_C_COMPILER_ID}")
  endif()
  target_compile_options(eddy_flags INTERFACE
    -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
    -fno-omit-frame-pointer)
  target_link_options(eddy_flags INTERFACE -fsanitize=address,undefined)
elseif(EDDY_SANITIZE)
  target_compile_options(eddy_flags INTERFACE -fsanitize=address,undefined
    -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_link_options(eddy_flags INTERFACE -fsanitize=address,undefined)
endif()

# eddy_add_library(NAME SOURCES... DEPS ...)
function(eddy_add_library name)
  cmake_parse_arguments(A "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${A_SOURCES})
  target_link_libraries(${name} PUBLIC eddy_flags ${A_DEPS})
endfunction()
