# eddy_add_model(NAME SOURCE FILE ENTRY FUNC [GRAD_WRT ARG...]
#                [LOOP_MEMORY store|checkpoint|checkpoint:SLOTS|reversible]
#                [PREFIX P]
#                [TARGET cpu|cuda] [MARCH CPU] [FP_CONTRACT off|fast]
#                [GPU_ARCH sm_80|sm_90]
#                [GPU_MATMUL_PRECISION highest|tf32] [FEEDS name...] [FETCHES name[:i]...])
#
# Adds a static library NAME built from function FUNC of the model FILE:
# `eddy compile` writes NAME.o and NAME.h into the build tree, the library
# holds the object and links libeddyrt, and its users get the header's
# directory (and eddyrt.h's) on their include path. The entry point is
# `P_run` (P defaults to NAME); see docs/cpu.md for its interface. TARGET
# cuda compiles for NVIDIA GPUs (GPU_ARCH, default sm_90; docs/gpu.md): the
# same interface, the kernels embedded in the object, the CUDA driver loaded
# at run time. GPU_MATMUL_PRECISION tf32 lets cuBLAS round matmul inputs to
# TF32 (default highest: FP32 arithmetic). FP_CONTRACT fast (TARGET cpu)
# lets multiplies and adds fuse into FMAs, as XLA's CPU backend does
# (`eddy compile --fp-contract=fast`; default off: every op rounds,
# docs/cpu.md, "Numerics").
#
# FILE is textual eddy IR (.eddy, .mlir) or a TensorFlow GraphDef (.pb): a
# GraphDef is imported (`eddy import --prune`, with FEEDS / FETCHES as
# --feed / --fetch), functionalized and legalized (`eddy opt`) first; its
# graph is the function `main` unless the IR says otherwise.
#
# GRAD_WRT compiles the gradient of FUNC instead of FUNC: `eddy grad --entry
# FUNC --wrt ARG,...` writes NAME.grad.eddy with the function FUNC_grad, and
# that is compiled. ARGs name FUNC's arguments by name (an imported graph's
# Placeholders) or by position (arg0, %arg0 or 0). FUNC_grad takes FUNC's
# arguments followed by one seed per result (the gradient flowing into that
# result) and returns FUNC's results followed by
# the gradient of each ARG (docs/autodiff.md). LOOP_MEMORY is `eddy grad
# --loop-memory`: how the gradient keeps its loops' intermediates
# (docs/autodiff.md, "Loop memory"; needs GRAD_WRT).
#
# The compiler is EDDY_EXECUTABLE if set, else the target eddy::eddy (from
# find_package(eddy), or eddy's own build). The runtime linked is
# EDDY_MODEL_RUNTIME if set (e.g. eddy::eddyrt_shared), else eddy::eddyrt.
function(eddy_add_model name)
  cmake_parse_arguments(A ""
    "SOURCE;ENTRY;PREFIX;TARGET;MARCH;FP_CONTRACT;GPU_ARCH;GPU_MATMUL_PRECISION;LOOP_MEMORY"
    "FEEDS;FETCHES;GRAD_WRT" ${ARGN})
  if(A_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "eddy_add_model(${name}): unknown arguments: ${A_UNPARSED_ARGUMENTS}")
  endif()
  if(A_KEYWORDS_MISSING_VALUES)
    message(FATAL_ERROR "eddy_add_model(${name}): no value after "
      "${A_KEYWORDS_MISSING_VALUES}")
  endif()
  if(NOT A_SOURCE OR NOT A_ENTRY)
    message(FATAL_ERROR "eddy_add_model(${name}): SOURCE and ENTRY are required")
  endif()
  if(A_TARGET AND NOT A_TARGET MATCHES "^(cpu|cuda)$")
    message(FATAL_ERROR "eddy_add_model(${name}): unknown TARGET '${A_TARGET}' (known: cpu, cuda)")
  endif()
  if((A_GPU_ARCH OR A_GPU_MATMUL_PRECISION) AND NOT A_TARGET STREQUAL "cuda")
    message(FATAL_ERROR "eddy_add_model(${name}): GPU_ARCH and "
      "GPU_MATMUL_PRECISION need TARGET cuda")
  endif()
  if(A_GPU_MATMUL_PRECISION AND NOT A_GPU_MATMUL_PRECISION MATCHES "^(highest|tf32)$")
    message(FATAL_ERROR "eddy_add_model(${name}): unknown GPU_MATMUL_PRECISION "
      "'${A_GPU_MATMUL_PRECISION}' (known: highest, tf32)")
  endif()
  if(A_FP_CONTRACT AND NOT A_FP_CONTRACT MATCHES "^(off|fast)$")
    message(FATAL_ERROR "eddy_add_model(${name}): unknown FP_CONTRACT "
      "'${A_FP_CONTRACT}' (known: off, fast)")
  endif()
  if(A_FP_CONTRACT STREQUAL "fast" AND A_TARGET STREQUAL "cuda")
    message(FATAL_ERROR "eddy_add_model(${name}): FP_CONTRACT fast needs TARGET cpu")
  endif()
  if(A_LOOP_MEMORY AND NOT A_GRAD_WRT)
    message(FATAL_ERROR "eddy_add_model(${name}): LOOP_MEMORY needs GRAD_WRT")
  endif()
  if(A_LOOP_MEMORY AND NOT A_LOOP_MEMORY MATCHES
      "^(store|checkpoint|checkpoint:[1-9][0-9]*|reversible)$")
    message(FATAL_ERROR "eddy_add_model(${name}): unknown LOOP_MEMORY "
      "'${A_LOOP_MEMORY}' (known: store, checkpoint, checkpoint:SLOTS, reversible)")
  endif()
  if(NOT A_PREFIX)
    set(A_PREFIX ${name})
  endif()
  # GRAD_WRT arg0 arg1 and GRAD_WRT arg0,arg1 are the same list.
  string(REPLACE "," ";" wrt "${A_GRAD_WRT}")
  foreach(w IN LISTS wrt)
    if(w STREQUAL "" OR w MATCHES "[ \t]")
      message(FATAL_ERROR "eddy_add_model(${name}): GRAD_WRT '${w}' is not an "
        "argument of ${A_ENTRY} (a name, or a position: arg0, %arg0 or 0)")
    endif()
  endforeach()
  if(EDDY_EXECUTABLE)
    set(compiler ${EDDY_EXECUTABLE})
    set(compiler_dep ${EDDY_EXECUTABLE})
  elseif(TARGET eddy::eddy)
    set(compiler $<TARGET_FILE:eddy::eddy>)
    get_target_property(aliased eddy::eddy ALIASED_TARGET)
    if(aliased)
      # eddy's own build: a target dependency, so the compiler is built first.
      set(compiler_dep ${aliased})
    else()
      set(compiler_dep ${compiler})
    endif()
  else()
    message(FATAL_ERROR "eddy_add_model(${name}): no eddy compiler: "
      "find_package(eddy) first, or set EDDY_EXECUTABLE")
  endif()
  set(runtime eddy::eddyrt)
  if(EDDY_MODEL_RUNTIME)
    set(runtime ${EDDY_MODEL_RUNTIME})
  endif()
  if(NOT TARGET ${runtime})
    message(FATAL_ERROR "eddy_add_model(${name}): no runtime target '${runtime}': "
      "find_package(eddy) first")
  endif()

  get_filename_component(src ${A_SOURCE} ABSOLUTE)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/${name}.eddy-model)
  set(obj ${dir}/${name}.o)
  set(hdr ${dir}/${name}.h)
  set(march)
  if(A_MARCH)
    set(march -march=${A_MARCH})
  endif()
  if(A_FP_CONTRACT)
    list(APPEND march --fp-contract=${A_FP_CONTRACT})
  endif()
  if(A_TARGET STREQUAL "cuda")
    list(APPEND march --target=cuda)
    if(A_GPU_ARCH)
      list(APPEND march --gpu-arch=${A_GPU_ARCH})
    endif()
    if(A_GPU_MATMUL_PRECISION)
      list(APPEND march --gpu-matmul-precision=${A_GPU_MATMUL_PRECISION})
    endif()
  endif()
  set(ir ${src})
  set(import_cmds)
  if(src MATCHES "\\.pb$")
    set(tf_ir ${dir}/${name}.tf.eddy)
    set(ir ${dir}/${name}.eddy)
    set(io_flags)
    foreach(f ${A_FEEDS})
      list(APPEND io_flags --feed ${f})
    endforeach()
    foreach(f ${A_FETCHES})
      list(APPEND io_flags --fetch ${f})
    endforeach()
    set(import_cmds
      COMMAND ${compiler} import ${src} --prune ${io_flags} -o ${tf_ir}
      COMMAND ${compiler} opt ${tf_ir} --passes=functionalize,legalize-tf,shape-infer,canonicalize
              -o ${ir})
  elseif(A_FEEDS OR A_FETCHES)
    message(FATAL_ERROR "eddy_add_model(${name}): FEEDS and FETCHES are for .pb sources")
  endif()
  set(entry ${A_ENTRY})
  set(grad_cmds)
  set(what "eddy compile ${A_SOURCE} --entry ${A_ENTRY}")
  list(LENGTH wrt num_wrt)
  if(num_wrt GREATER 0)
    list(JOIN wrt "," wrt_flag)
    set(grad_ir ${dir}/${name}.grad.eddy)
    set(loop_memory)
    if(A_LOOP_MEMORY)
      set(loop_memory --loop-memory=${A_LOOP_MEMORY})
    endif()
    set(grad_cmds
      COMMAND ${compiler} grad ${ir} --entry ${A_ENTRY} --wrt ${wrt_flag} ${loop_memory}
              -o ${grad_ir})
    set(ir ${grad_ir})
    set(entry ${A_ENTRY}_grad)
    set(what "eddy grad ${A_SOURCE} --entry ${A_ENTRY} --wrt ${wrt_flag}, compile ${entry}")
  endif()
  add_custom_command(
    OUTPUT ${obj} ${hdr}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    ${import_cmds}
    ${grad_cmds}
    COMMAND ${compiler} compile ${ir} --entry ${entry} --prefix ${A_PREFIX}
            -o ${obj} --header ${hdr} ${march}
    DEPENDS ${src} ${compiler_dep}
    COMMENT "${what}"
    VERBATIM)
  add_library(${name} STATIC ${obj} ${hdr})
  set_target_properties(${name} PROPERTIES LINKER_LANGUAGE C)
  target_include_directories(${name} PUBLIC ${dir})
  # The header includes "eddyrt.h": the runtime target brings its directory.
  target_link_libraries(${name} PUBLIC ${runtime})
endfunction()
