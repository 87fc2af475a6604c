/// libeddyrt's CUDA internals shared by runtime/cuda.c (the driver, the
/// thread state, error recording) and runtime/cuda_list.c and
/// cuda_list_nested.c (TensorLists in device memory). Not installed; not an
/// ABI.
#ifndef EDDY_RUNTIME_CUDA_INTERNAL_H
#define EDDY_RUNTIME_CUDA_INTERNAL_H

#include "runtime/eddyrt.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// ---- Driver declarations ---------------------------------------------------

typedef int cu_result; // CUresult
typedef int cu_device; // CUdevice
typedef unsigned long long cu_deviceptr;

#define CU_SUCCESS 0
#define CU_ERROR_OUT_OF_MEMORY 2
#define CU_ERROR_NOT_READY 600
#define CU_STREAM_NON_BLOCKING 1u
#define CU_EVENT_DISABLE_TIMING 2u

/// The driver calls libeddyrt uses, resolved once per process by
/// eddy_rt_entry_cuda_begin (all or none).
typedef struct rt_cuda_driver {
  cu_result (*init)(unsigned flags);
  cu_result (*device_get_count)(int *count);
  cu_result (*device_get)(cu_device *dev, int ordinal);
  cu_result (*primary_ctx_retain)(void **ctx, cu_device dev);
  cu_result (*ctx_set_current)(void *ctx);
  cu_result (*stream_create)(void **stream, unsigned flags);
  cu_result (*stream_destroy)(void *stream);
  cu_result (*stream_synchronize)(void *stream);
  cu_result (*stream_wait_event)(void *stream, void *event, unsigned flags);
  cu_result (*mem_alloc)(cu_deviceptr *dptr, size_t bytes);
  cu_result (*mem_free)(cu_deviceptr dptr);
  cu_result (*mem_alloc_host)(void **p, size_t bytes);
  cu_result (*mem_free_host)(void *p);
  cu_result (*memcpy_htod_async)(cu_deviceptr dst, const void *src,
                                 size_t bytes, void *stream);
  cu_result (*memcpy_dtoh_async)(void *dst, cu_deviceptr src, size_t bytes,
                                 void *stream);
  cu_result (*memcpy_dtod_async)(cu_deviceptr dst, cu_deviceptr src,
                                 size_t bytes, void *stream);
  cu_result (*memset_d8_async)(cu_deviceptr dst, unsigned char value, size_t n,
                               void *stream);
  cu_result (*event_create)(void **event, unsigned flags);
  cu_result (*event_record)(void *event, void *stream);
  cu_result (*event_query)(void *event);
  cu_result (*event_synchronize)(void *event);
  cu_result (*event_destroy)(void *event);
  cu_result (*module_load_data)(void **module, const void *image);
  cu_result (*module_get_function)(void **fn, void *module, const char *name);
  cu_result (*launch_kernel)(void *fn, unsigned gx, unsigned gy, unsigned gz,
                             unsigned bx, unsigned by, unsigned bz,
                             unsigned smem, void *stream, void **params,
                             void **extra);
  cu_result (*get_error_name)(cu_result r, const char **out);
  cu_result (*get_error_string)(cu_result r, const char **out);
} rt_cuda_driver_t;

extern rt_cuda_driver_t rt_cu;

/// ---- Thread state ----------------------------------------------------------

#define RT_CUDA_MSG 512

/// A device or pinned block whose last use is still in flight
/// (runtime/cuda_list.c).
typedef struct rt_cuda_pending rt_cuda_pending_t;

typedef struct rt_cuda_thread {
  void *stream;            // NULL until begin succeeded on this thread
  void *blas;              // cuBLAS handle bound to stream, or NULL
  int blas_math;           // the handle's cublasMath_t
  int32_t code;            // eddy_rt_code_t of the recorded error; 0: none
  const char *last_kernel; // name of the last launch (for async errors)
  char msg[RT_CUDA_MSG];
  // TensorLists in device memory (runtime/cuda_list.c).
  void *swap_stream;          // swap-outs of swap_memory lists; lazily made
  bool list_busy;             // list copies issued since streams were idle
  rt_cuda_pending_t *pending; // blocks to free once their copies are done
  int64_t num_pending, pending_cap;
} rt_cuda_thread_t;

/// The calling thread's state.
rt_cuda_thread_t *rt_cuda_thread(void);
/// The calling thread's state when helpers should act: begin succeeded on
/// this thread and no error is recorded. NULL otherwise.
rt_cuda_thread_t *rt_cuda_active(void);
/// For freeing device memory also where begin has not run: false when the
/// driver never loaded (then nothing can have been allocated); else makes
/// the primary context current on a thread without a stream.
bool rt_cuda_context_for_free(void);

/// ---- Errors ----------------------------------------------------------------

/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for r into buf.
const char *rt_cuda_error_text(cu_result r, char *buf, size_t size);
/// Records the thread's error unless one is recorded already.
void rt_cuda_record(int32_t code, const char *fmt, ...) EDDY_RT_PRINTF(2, 3);
/// Records a failed driver call: "CALL: NAME (description)"; what, when
/// non-NULL, goes in parentheses after the call ("cuLaunchKernel(k)").
void rt_cuda_record_cu(const char *call, const char *what, cu_result r);
/// A failed call that waited for a stream: names the last kernel launched.
void rt_cuda_record_sync(const char *call, cu_result r);

/// ---- Device lists (runtime/cuda_list.c) ------------------------------------

/// Called by eddy_rt_entry_cuda_end after the stream's wait: waits for the
/// swap stream and frees every pending block.
void rt_cuda_list_end(rt_cuda_thread_t *t);
/// Called when a thread with a stream exits: the same, and destroys the
/// swap stream.
void rt_cuda_list_thread_exit(rt_cuda_thread_t *t);

#endif
