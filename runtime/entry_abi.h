/// The runtime's ABI for generated code, as one list: every function that
/// compiled code calls in libeddyrt, with its C return and parameter types.
///
/// From this list the CPU and GPU targets emit their MLIR declarations
/// (backend-cpu/emit_entry.c maps each C type: a pointer to !llvm.ptr,
/// int32_t to i32, int64_t, size_t and intptr_t to i64), the JIT registers
/// its symbols (backend-cpu/compile.c), and the build checks that each
/// prototype in runtime/eddyrt.h has exactly these types (a static
/// assertion per function, in backend-cpu/compile.c). A function added to
/// eddyrt.h for generated code is added here, once.
///
/// X(function, return type, (parameter types))
#ifndef EDDY_RUNTIME_ENTRY_ABI_H
#define EDDY_RUNTIME_ENTRY_ABI_H

/// Declared in every module (runtime/entry.c, entry_nested.c, list.c, gemm.c).
#define EDDY_RT_ENTRY_ABI(X) \
  X(eddy_rt_entry_begin, int32_t, (eddy_rt_ctx_t *, const eddy_rt_tensor_t *, \
      int64_t, eddy_rt_tensor_t *, int64_t, char *, size_t)) \
  X(eddy_rt_entry_check_arg, int32_t, (const eddy_rt_tensor_t *, int64_t, \
      const char *, int32_t, int32_t, const int64_t *, char *, size_t)) \
  X(eddy_rt_entry_alloc_result, int32_t, (eddy_rt_ctx_t *, eddy_rt_tensor_t *, \
      int64_t, int32_t, int32_t, const int64_t *, char *, size_t)) \
  X(eddy_rt_entry_alloc, void *, (eddy_rt_ctx_t *, int64_t, char *, size_t)) \
  X(eddy_rt_entry_free, void, (eddy_rt_ctx_t *, void *, int64_t)) \
  X(eddy_rt_entry_release_results, void, (eddy_rt_tensor_t *, int64_t)) \
  X(eddy_rt_entry_dims_error, int32_t, (char *, size_t, const char *, int64_t, \
      int64_t)) \
  X(eddy_rt_entry_list_dims, void, (eddy_rt_ctx_t *, const void *, int32_t, \
      int64_t, int32_t, int64_t *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_index_error, int32_t, (char *, size_t, const char *, \
      int64_t, int64_t)) \
  X(eddy_rt_entry_fp_enter, int64_t, (eddy_rt_ctx_t *)) \
  X(eddy_rt_entry_fp_exit, void, (int64_t)) \
  X(eddy_rt_entry_max_iterations, int64_t, (eddy_rt_ctx_t *)) \
  X(eddy_rt_entry_deadline, int64_t, (eddy_rt_ctx_t *)) \
  X(eddy_rt_entry_loop_check, void, (eddy_rt_ctx_t *, int64_t, int64_t, \
      int64_t, const char *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_prefix_error, void, (char *, size_t, const char *)) \
  X(eddy_rt_entry_run_tasks, void, (eddy_rt_ctx_t *, int64_t, void *, void *)) \
  X(eddy_rt_entry_list_empty, void *, (eddy_rt_ctx_t *, int32_t, int32_t, \
      const int64_t *, int64_t, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_list_push, void *, (eddy_rt_ctx_t *, void *, int32_t, \
      void *, int32_t, int32_t, const int64_t *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_list_pop, void *, (eddy_rt_ctx_t *, void *, int32_t, void *, \
      int32_t, int32_t, const int64_t *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_list_length, int64_t, (const void *)) \
  X(eddy_rt_entry_list_reserve, void *, (eddy_rt_ctx_t *, int32_t, int32_t, \
      const int64_t *, int64_t, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_list_from_tensor, void *, (eddy_rt_ctx_t *, void *, int32_t, \
      int32_t, const int64_t *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_list_from_arg, void *, (eddy_rt_ctx_t *, void *, int32_t, \
      int32_t, const int64_t *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_list_get, void, (eddy_rt_ctx_t *, const void *, int64_t, \
      void *, int32_t, int32_t, const int64_t *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_list_view, const void *, (eddy_rt_ctx_t *, const void *, \
      int64_t, int32_t, int32_t, const int64_t *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_list_set, void *, (eddy_rt_ctx_t *, void *, int32_t, \
      int64_t, void *, int32_t, int32_t, const int64_t *, int32_t *, char *, \
      size_t)) \
  X(eddy_rt_entry_list_resize, void *, (eddy_rt_ctx_t *, void *, int32_t, \
      int64_t, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_list_add, void *, (eddy_rt_ctx_t *, void *, int32_t, \
      const void *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_list_zeros_like, void *, (eddy_rt_ctx_t *, const void *, \
      int32_t *, char *, size_t)) \
  X(eddy_rt_entry_list_concat, void, (eddy_rt_ctx_t *, const void *, void *, \
      int32_t, int32_t, const int64_t *, void *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_list_split, void *, (eddy_rt_ctx_t *, void *, int32_t, \
      int32_t, const int64_t *, void *, int32_t, int64_t, int32_t, \
      const int64_t *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_list_scatter, void *, (eddy_rt_ctx_t *, void *, int32_t, \
      void *, int32_t, int64_t, void *, int32_t, int32_t, const int64_t *, \
      int32_t *, char *, size_t)) \
  X(eddy_rt_entry_list_stack, void, (eddy_rt_ctx_t *, const void *, void *, \
      int32_t, int32_t, const int64_t *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_list_retain, void, (void *)) \
  X(eddy_rt_entry_list_release, void, (void *)) \
  X(eddy_rt_entry_sgemm, void, (eddy_rt_ctx_t *, int32_t, int64_t, int64_t, \
      int64_t, const float *, int64_t, const float *, int64_t, float *, \
      int64_t)) \
  X(eddy_rt_entry_sgemm_batch, void, (eddy_rt_ctx_t *, int32_t, int64_t, \
      int64_t, int64_t, int64_t, const float *, int64_t, int64_t, \
      const float *, int64_t, int64_t, float *, int64_t, int64_t)) \
  X(eddy_rt_entry_sgemm_cached, void, (eddy_rt_ctx_t *, \
      eddy_rt_gemm_cache_t *, int32_t, int64_t, int64_t, int64_t, \
      const float *, int64_t, const float *, int64_t, float *, int64_t)) \
  X(eddy_rt_entry_gemm_caches_init, void, (eddy_rt_gemm_cache_t *, int64_t)) \
  X(eddy_rt_entry_gemm_caches_release, void, (eddy_rt_ctx_t *, \
      eddy_rt_gemm_cache_t *, int64_t)) \
  X(eddy_rt_entry_gemm_cache_reset, void, (eddy_rt_gemm_cache_t *)) \
  X(eddy_rt_entry_list_empty_nested, void *, (eddy_rt_ctx_t *, int32_t, \
      int32_t, int32_t, const int64_t *, int64_t, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_list_reserve_nested, void *, (eddy_rt_ctx_t *, int32_t, \
      int32_t, int32_t, const int64_t *, int64_t, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_list_push_list, void *, (eddy_rt_ctx_t *, void *, int32_t, \
      void *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_list_pop_list, void *, (eddy_rt_ctx_t *, void *, int32_t, \
      void **, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_list_get_list, void *, (eddy_rt_ctx_t *, const void *, \
      int64_t, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_list_set_list, void *, (eddy_rt_ctx_t *, void *, int32_t, \
      int64_t, void *, int32_t *, char *, size_t))

/// Declared in the GPU target's modules (runtime/cuda.c, cuda_list.c).
#define EDDY_RT_ENTRY_CUDA_ABI(X) \
  X(eddy_rt_entry_cuda_begin, int32_t, (eddy_rt_ctx_t *, char *, size_t)) \
  X(eddy_rt_entry_cuda_end, int32_t, (eddy_rt_ctx_t *, char *, size_t)) \
  X(eddy_rt_entry_cuda_alloc, void *, (eddy_rt_ctx_t *, int64_t, char *, \
      size_t)) \
  X(eddy_rt_entry_cuda_free, void, (eddy_rt_ctx_t *, void *, int64_t)) \
  X(eddy_rt_entry_cuda_to_device, void, (void *, const void *, int64_t)) \
  X(eddy_rt_entry_cuda_to_host, void, (void *, const void *, int64_t)) \
  X(eddy_rt_entry_cuda_sgemm, void, (eddy_rt_ctx_t *, int32_t, int64_t, \
      int64_t, int64_t, const float *, int64_t, const float *, int64_t, \
      float *, int64_t)) \
  X(eddy_rt_entry_cuda_list_empty, void *, (eddy_rt_ctx_t *, int32_t, int32_t, \
      const int64_t *, int64_t, int32_t *, char *, size_t, int32_t)) \
  X(eddy_rt_entry_cuda_list_push, void *, (eddy_rt_ctx_t *, void *, int32_t, \
      void *, int32_t, int32_t, const int64_t *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_cuda_list_pop, void *, (eddy_rt_ctx_t *, void *, int32_t, \
      void *, int32_t, int32_t, const int64_t *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_cuda_list_length, int64_t, (const void *)) \
  X(eddy_rt_entry_cuda_list_reserve, void *, (eddy_rt_ctx_t *, int32_t, \
      int32_t, const int64_t *, int64_t, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_cuda_list_from_tensor, void *, (eddy_rt_ctx_t *, void *, \
      int32_t, int32_t, const int64_t *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_cuda_list_get, void, (eddy_rt_ctx_t *, const void *, \
      int64_t, void *, int32_t, int32_t, const int64_t *, int32_t *, char *, \
      size_t)) \
  X(eddy_rt_entry_cuda_list_set, void *, (eddy_rt_ctx_t *, void *, int32_t, \
      int64_t, void *, int32_t, int32_t, const int64_t *, int32_t *, char *, \
      size_t)) \
  X(eddy_rt_entry_cuda_list_resize, void *, (eddy_rt_ctx_t *, void *, int32_t, \
      int64_t, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_cuda_list_add, void *, (eddy_rt_ctx_t *, void *, int32_t, \
      const void *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_cuda_list_zeros_like, void *, (eddy_rt_ctx_t *, \
      const void *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_cuda_list_concat, void, (eddy_rt_ctx_t *, const void *, \
      void *, int32_t, int32_t, const int64_t *, void *, int32_t *, char *, \
      size_t)) \
  X(eddy_rt_entry_cuda_list_split, void *, (eddy_rt_ctx_t *, void *, int32_t, \
      int32_t, const int64_t *, void *, int32_t, int64_t, int32_t, \
      const int64_t *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_cuda_list_scatter, void *, (eddy_rt_ctx_t *, void *, \
      int32_t, void *, int32_t, int64_t, void *, int32_t, int32_t, \
      const int64_t *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_cuda_list_stack, void, (eddy_rt_ctx_t *, const void *, \
      void *, int32_t, int32_t, const int64_t *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_cuda_list_dims, void, (eddy_rt_ctx_t *, const void *, \
      int32_t, int64_t, int32_t, int64_t *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_cuda_list_empty_nested, void *, (eddy_rt_ctx_t *, int32_t, \
      int32_t, int32_t, const int64_t *, int64_t, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_cuda_list_reserve_nested, void *, (eddy_rt_ctx_t *, int32_t, \
      int32_t, int32_t, const int64_t *, int64_t, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_cuda_list_push_list, void *, (eddy_rt_ctx_t *, void *, \
      int32_t, void *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_cuda_list_pop_list, void *, (eddy_rt_ctx_t *, void *, \
      int32_t, void **, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_cuda_list_get_list, void *, (eddy_rt_ctx_t *, const void *, \
      int64_t, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_cuda_list_set_list, void *, (eddy_rt_ctx_t *, void *, \
      int32_t, int64_t, void *, int32_t *, char *, size_t)) \
  X(eddy_rt_entry_cuda_list_retain, void, (void *)) \
  X(eddy_rt_entry_cuda_list_release, void, (void *))

/// MLIR 19's GPU runtime ABI, which the lowering of gpu.launch_func declares
/// and calls and libeddyrt provides (runtime/cuda.c); the JIT registers it.
#define EDDY_RT_MGPU_ABI(X) \
  X(mgpuModuleLoad, void *, (void *, size_t)) \
  X(mgpuModuleUnload, void, (void *)) \
  X(mgpuModuleGetFunction, void *, (void *, const char *)) \
  X(mgpuStreamCreate, void *, (void)) \
  X(mgpuStreamDestroy, void, (void *)) \
  X(mgpuStreamSynchronize, void, (void *)) \
  X(mgpuLaunchKernel, void, (void *, intptr_t, intptr_t, intptr_t, intptr_t, \
      intptr_t, intptr_t, int32_t, void *, void **, void **, size_t))

#endif
