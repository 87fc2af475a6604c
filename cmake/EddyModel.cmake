# eddy_add_model(NAME SOURCE FILE ENTRY FUNC [PREFIX P] [TARGET cpu] [MARCH CPU])
#
# Adds a static library NAME built from function FUNC of the eddy model FILE
# (textual IR): `eddy compile` writes NAME.o and NAME.h into the build tree,
# the library holds the object and links libeddyrt, and its users get the
# header's directory on their include path. The entry point is
# `P_run` (P defaults to NAME); see docs/cpu.md for its interface.
#
# Inside eddy's own build the compiler is the `eddy` target; elsewhere set
# EDDY_EXECUTABLE (and have the eddy_rt target or library available).
function(eddy_add_model name)
  cmake_parse_arguments(A "" "SOURCE;ENTRY;PREFIX;TARGET;MARCH" "" ${ARGN})
  if(NOT A_SOURCE OR NOT A_ENTRY)
    message(FATAL_ERROR "eddy_add_model(${name}): SOURCE and ENTRY are required")
  endif()
  if(A_TARGET AND NOT A_TARGET STREQUAL "cpu")
    message(FATAL_ERROR "eddy_add_model(${name}): unknown TARGET '${A_TARGET}' (known: cpu)")
  endif()
  if(NOT A_PREFIX)
    set(A_PREFIX ${name})
  endif()
  get_filename_component(src ${A_SOURCE} ABSOLUTE)
  if(TARGET eddy)
    set(compiler $<TARGET_FILE:eddy>)
    set(compiler_dep eddy)
  elseif(EDDY_EXECUTABLE)
    set(compiler ${EDDY_EXECUTABLE})
    set(compiler_dep ${EDDY_EXECUTABLE})
  else()
    message(FATAL_ERROR "eddy_add_model(${name}): set EDDY_EXECUTABLE to the eddy compiler")
  endif()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/${name}.eddy-model)
  set(obj ${dir}/${name}.o)
  set(hdr ${dir}/${name}.h)
  set(march)
  if(A_MARCH)
    set(march -march=${A_MARCH})
  endif()
  add_custom_command(
    OUTPUT ${obj} ${hdr}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${compiler} compile ${src} --entry ${A_ENTRY} --prefix ${A_PREFIX}
            -o ${obj} --header ${hdr} ${march}
    DEPENDS ${src} ${compiler_dep}
    COMMENT "eddy compile ${A_SOURCE} --entry ${A_ENTRY}"
    VERBATIM)
  add_library(${name} STATIC ${obj} ${hdr})
  set_target_properties(${name} PROPERTIES LINKER_LANGUAGE C)
  target_include_directories(${name} PUBLIC ${dir})
  if(TARGET eddy_rt)
    # The header includes "eddyrt.h" from the runtime's directory.
    get_target_property(rt_dir eddy_rt SOURCE_DIR)
    target_include_directories(${name} PUBLIC ${rt_dir})
    target_link_libraries(${name} PUBLIC eddy_rt)
  endif()
endfunction()
