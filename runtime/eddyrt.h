/// libeddyrt: the runtime that generated code, the evaluator and the
/// dataflow interpreter link against. This header is an ABI: C99,
/// fixed-width types, versioned structs. It does not depend on the IR.
///
/// Contents: dtypes, status objects, the runtime context (allocator hook,
/// memory limit, thread pool), reference-counted buffers, tensor
/// descriptors, and TensorList storage. Kernels are in runtime/kernels.h,
/// .npy I/O in runtime/npy.h.
/// docs/runtime.md describes the rules in prose.
#ifndef EDDY_RUNTIME_EDDYRT_H
#define EDDY_RUNTIME_EDDYRT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define EDDY_RT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define EDDY_RT_PRINTF(f, a)
#endif

/// Bumped whenever a struct or signature in this header changes.
#define EDDY_RT_ABI_VERSION 1u

/// The ABI version this library was built with.
uint32_t eddy_rt_abi_version(void);

/// ===========================================================================
/// Dtypes
/// ===========================================================================

/// Same order as the IR's eddy_dtype_t, so a conversion is a cast (held
/// together by runtime/rt_ir.h).
typedef enum eddy_rt_dtype {
  EDDY_RT_F16,
  EDDY_RT_BF16,
  EDDY_RT_F32,
  EDDY_RT_F64,
  EDDY_RT_I1, ///< one byte per element, 0 or 1
  EDDY_RT_I8,
  EDDY_RT_I32,
  EDDY_RT_I64,
  EDDY_RT_DTYPE_COUNT_,
} eddy_rt_dtype_t;

/// "f32", "i1", ...; "?" for an out-of-range value.
const char *eddy_rt_dtype_name(int32_t dtype);
/// Bytes per element (i1 takes one); 0 for an out-of-range value.
size_t eddy_rt_dtype_size(int32_t dtype);
bool eddy_rt_dtype_is_float(int32_t dtype);
/// i8/i32/i64 (not i1).
bool eddy_rt_dtype_is_int(int32_t dtype);

/// f16/bf16 conversions; f32 -> f16/bf16 rounds to nearest even.
float eddy_rt_f16_to_f32(uint16_t h);
uint16_t eddy_rt_f32_to_f16(float f);
float eddy_rt_bf16_to_f32(uint16_t h);
uint16_t eddy_rt_f32_to_bf16(float f);

/// ===========================================================================
/// Status
/// ===========================================================================

/// The same numbering as the IR's eddy_status_code_t, so a conversion is a
/// cast (held together by runtime/rt_ir.h).
typedef enum eddy_rt_code {
  EDDY_RT_OK = 0,
  EDDY_RT_ERR_INVALID_ARGUMENT = 1, ///< bad input: shape, dtype, index, file
  EDDY_RT_ERR_UNSUPPORTED = 4,      ///< valid but not handled
  EDDY_RT_ERR_NOT_FOUND = 5,
  EDDY_RT_ERR_IO = 6,               ///< file system failure
  EDDY_RT_ERR_RESOURCE = 7,         ///< out of memory, past the limit, too big
  EDDY_RT_ERR_INTERNAL = 8,         ///< a bug in eddy
  EDDY_RT_ERR_CANCELLED = 9,        ///< cancelled, or past its time limit
} eddy_rt_code_t;

/// NULL means success; anything else is an owned error with a code and a
/// message. Messages start with the op ("core.add: cannot broadcast ...").
typedef struct eddy_rt_status_s *eddy_rt_status_t;

/// Never returns NULL (falls back to a static out-of-memory status, which
/// destroy ignores).
eddy_rt_status_t eddy_rt_status_create(eddy_rt_code_t code, const char *fmt,
                                       ...) EDDY_RT_PRINTF(2, 3);
void eddy_rt_status_destroy(eddy_rt_status_t st);
/// EDDY_RT_OK for NULL.
eddy_rt_code_t eddy_rt_status_code(eddy_rt_status_t st);
/// Borrowed; "" for NULL.
const char *eddy_rt_status_message(eddy_rt_status_t st);

#define EDDY_RT_RETURN_IF_ERROR(expr)                                          \
  do {                                                                         \
    eddy_rt_status_t eddy_rt_status_tmp_ = (expr);                             \
    if (eddy_rt_status_tmp_)                                                   \
      return eddy_rt_status_tmp_;                                              \
  } while (0)

/// ===========================================================================
/// Context: allocator hook, memory limit, threads
/// ===========================================================================

/// Every byte the runtime allocates for tensors and lists goes through this
/// hook. alloc returns memory aligned to `align` (a power of two, at most
/// 4096) or NULL; free gets back the size given to alloc. Both must be
/// thread-safe: the context's pool threads call them (a split product's
/// packing buffers), at the same time as the calling thread.
typedef struct eddy_rt_allocator {
  void *(*alloc)(void *user, size_t size, size_t align);
  void (*free)(void *user, void *ptr, size_t size);
  void *user;
} eddy_rt_allocator_t;

/// Alignment of every buffer the runtime allocates.
#define EDDY_RT_ALIGN 64u

typedef struct eddy_rt_ctx_options {
  uint32_t struct_size;          ///< sizeof(eddy_rt_ctx_options_t)
  /// Threads kernels may use, the caller included; 0 (the default): the
  /// environment variable EDDY_NUM_THREADS when it is a positive number,
  /// else every core the process may run on.
  int32_t num_threads;
  int64_t memory_limit;          ///< bytes live at once; 0 = unlimited
  eddy_rt_allocator_t allocator; ///< alloc == NULL: aligned malloc
} eddy_rt_ctx_options_t;

/// struct_size filled, every core (num_threads 0), no limit, the default
/// allocator.
eddy_rt_ctx_options_t eddy_rt_ctx_options_default(void);

typedef struct eddy_rt_ctx eddy_rt_ctx_t;
typedef struct eddy_rt_pool eddy_rt_pool_t;

/// Owned. opts may be NULL (defaults). The context must outlive every tensor,
/// buffer and list allocated through it. Thread-safe: kernels may run on one
/// context from several threads at once.
eddy_rt_status_t eddy_rt_ctx_create(const eddy_rt_ctx_options_t *opts,
                                    eddy_rt_ctx_t **out_ctx);
void eddy_rt_ctx_destroy(eddy_rt_ctx_t *ctx);
/// 0 = unlimited. Allocations already made are not affected.
void eddy_rt_ctx_set_memory_limit(eddy_rt_ctx_t *ctx, int64_t bytes);
int64_t eddy_rt_ctx_memory_limit(const eddy_rt_ctx_t *ctx);
/// Bytes currently allocated through ctx (tensor data, list storage).
int64_t eddy_rt_ctx_bytes_in_use(const eddy_rt_ctx_t *ctx);
/// Budgets of compiled code called with ctx; each is checked where a loop
/// (ctl.while) decides whether to run its body again, so straight-line code
/// runs to its end. max_iterations: how many times one loop may run its body
/// in one call before the call fails with EDDY_RT_ERR_RESOURCE ("did not
/// finish within N iterations"), as the evaluator's limit; timeout_ms: the
/// wall-clock time one call may take, from its start, before it fails with
/// EDDY_RT_ERR_CANCELLED (read every 64 iterations of each loop). 0 (the
/// default) is unlimited; a negative value counts as 0. Thread-safe.
void eddy_rt_ctx_set_max_iterations(eddy_rt_ctx_t *ctx, int64_t n);
int64_t eddy_rt_ctx_max_iterations(const eddy_rt_ctx_t *ctx);
void eddy_rt_ctx_set_timeout_ms(eddy_rt_ctx_t *ctx, int64_t ms);
int64_t eddy_rt_ctx_timeout_ms(const eddy_rt_ctx_t *ctx);
/// Makes every call of compiled code on ctx, running or to come, fail with
/// EDDY_RT_ERR_CANCELLED at its next loop check (every 64 iterations of each
/// loop), until eddy_rt_ctx_clear_cancel. Thread-safe and async-signal-safe:
/// another thread or a signal handler may call it while ctx is in use.
void eddy_rt_ctx_cancel(eddy_rt_ctx_t *ctx);
void eddy_rt_ctx_clear_cancel(eddy_rt_ctx_t *ctx);
bool eddy_rt_ctx_is_cancelled(const eddy_rt_ctx_t *ctx);
/// Highest bytes_in_use seen.
int64_t eddy_rt_ctx_peak_bytes(const eddy_rt_ctx_t *ctx);
/// Freed blocks of 4 KiB or more are kept by the context and reused by
/// allocations of the same size (no fresh pages in a steady state of
/// repeated calls). The context never holds more, in use and cached
/// together, than its peak bytes_in_use. On by default; the environment
/// variable EDDY_NO_BLOCK_CACHE, read when a context is created, turns it
/// off. Turning it off gives the cached blocks back.
void eddy_rt_ctx_set_block_cache(eddy_rt_ctx_t *ctx, bool on);
/// Gives every cached block back to the allocator.
void eddy_rt_ctx_trim(eddy_rt_ctx_t *ctx);
/// Whether compiled code called with ctx runs with subnormal floats flushed
/// to zero (results) and read as zero (operands), as TensorFlow's, XLA's
/// and JAX's CPU kernels run (x86: MXCSR's FTZ and DAZ; AArch64: FPCR.FZ).
/// Subnormal operands cost some CPUs a hundred times a normal one's time,
/// and the gradients of long loops are full of them. Set for the call and
/// for the pool's threads while they run its tasks; the caller's own mode
/// is restored on return. On by default; the environment variable
/// EDDY_KEEP_DENORMALS, read when a context is created, turns it off
/// (IEEE subnormals, as the reference evaluator computes).
void eddy_rt_ctx_set_flush_denormals(eddy_rt_ctx_t *ctx, bool on);
bool eddy_rt_ctx_flush_denormals(const eddy_rt_ctx_t *ctx);
/// Bytes held in the block cache (not counted in bytes_in_use).
int64_t eddy_rt_ctx_cached_bytes(const eddy_rt_ctx_t *ctx);
/// Borrowed; NULL when the context runs single-threaded.
eddy_rt_pool_t *eddy_rt_ctx_pool(eddy_rt_ctx_t *ctx);

/// Raw aligned allocation through the hook, counted against the limit. op
/// names the requester in errors. size 0 gives a valid unique pointer.
eddy_rt_status_t eddy_rt_alloc(eddy_rt_ctx_t *ctx, int64_t size,
                               const char *op, void **out_ptr);
/// ptr may be NULL. size must be the size given to eddy_rt_alloc.
void eddy_rt_free(eddy_rt_ctx_t *ctx, void *ptr, int64_t size);

/// ===========================================================================
/// Thread pool
/// ===========================================================================

/// Runs one task. Tasks of one parallel_for may run on any thread in any
/// order; results must not depend on which.
typedef void (*eddy_rt_task_fn)(void *arg, int64_t task);

/// Owned. num_threads counts the calling thread: a pool of n starts n - 1
/// workers; n <= 1 gives a pool that runs everything on the caller.
eddy_rt_status_t eddy_rt_pool_create(int32_t num_threads,
                                     eddy_rt_pool_t **out_pool);
/// Joins the workers. No parallel_for may be running.
void eddy_rt_pool_destroy(eddy_rt_pool_t *pool);
/// 1 for NULL.
int32_t eddy_rt_pool_num_threads(const eddy_rt_pool_t *pool);
/// Runs fn(arg, 0) .. fn(arg, n - 1) and returns when all are done. The
/// caller takes part. pool may be NULL (serial). A call made from inside a
/// task, or while another thread's call is using the pool, runs serially on
/// its caller instead of deadlocking.
void eddy_rt_pool_parallel_for(eddy_rt_pool_t *pool, int64_t n,
                               eddy_rt_task_fn fn, void *arg);

/// ===========================================================================
/// Buffers: reference-counted aligned storage
/// ===========================================================================

typedef struct eddy_rt_buffer eddy_rt_buffer_t;

/// Owned (one reference). Data is EDDY_RT_ALIGN-aligned and uninitialized.
eddy_rt_status_t eddy_rt_buffer_create(eddy_rt_ctx_t *ctx, int64_t size,
                                       const char *op,
                                       eddy_rt_buffer_t **out_buf);
/// Owned (one reference): a buffer over size bytes at data that the runtime
/// does not own and never writes (eddy_rt_buffer_is_unique is false); the
/// memory must outlive every reference. Compiled code lends its arguments
/// this way (a TensorList made from an argument shares its data).
eddy_rt_status_t eddy_rt_buffer_borrow(eddy_rt_ctx_t *ctx, void *data,
                                       int64_t size, const char *op,
                                       eddy_rt_buffer_t **out_buf);
void eddy_rt_buffer_retain(eddy_rt_buffer_t *buf);
/// Frees the storage when the last reference goes. buf may be NULL.
void eddy_rt_buffer_release(eddy_rt_buffer_t *buf);
void *eddy_rt_buffer_data(const eddy_rt_buffer_t *buf);
int64_t eddy_rt_buffer_size(const eddy_rt_buffer_t *buf);
/// True when the caller holds the only reference: it may write in place.
bool eddy_rt_buffer_is_unique(const eddy_rt_buffer_t *buf);

/// ===========================================================================
/// Tensor descriptors
/// ===========================================================================

#define EDDY_RT_MAX_RANK 16
#define EDDY_RT_TENSOR_VERSION 1u

/// A strided view of dtype elements. Element (i0, .., ir-1) lives at
/// (char *)data + (i0 * strides[0] + ... ) * itemsize: strides are in
/// elements and may be 0 (broadcast) or negative. Kernels accept any
/// strides and produce contiguous row-major outputs.
///
/// Ownership: `owner` holds one reference to the buffer that data points
/// into, released by eddy_rt_tensor_release; owner == NULL means the data is
/// borrowed (the caller keeps it alive). Data in a buffer with other
/// references is immutable.
typedef struct eddy_rt_tensor {
  uint32_t struct_size; ///< sizeof(eddy_rt_tensor_t)
  uint32_t version;     ///< EDDY_RT_TENSOR_VERSION
  int32_t dtype;        ///< eddy_rt_dtype_t
  int32_t rank;         ///< 0 (scalar) .. EDDY_RT_MAX_RANK
  void *data;           ///< element (0, .., 0); may be NULL when empty
  eddy_rt_buffer_t *owner; ///< one reference owned, or NULL when borrowed
  int64_t dims[EDDY_RT_MAX_RANK];    ///< rank entries, each >= 0
  int64_t strides[EDDY_RT_MAX_RANK]; ///< rank entries, in elements
} eddy_rt_tensor_t;

/// A zeroed descriptor with struct_size and version set (rank 0, f16, no
/// data): the state outputs are in after an error; release is a no-op.
eddy_rt_tensor_t eddy_rt_tensor_empty(void);
/// Allocates a contiguous tensor whose elements are all zero. dims may be
/// NULL when rank is 0. op names the requester in errors.
eddy_rt_status_t eddy_rt_tensor_create(eddy_rt_ctx_t *ctx, int32_t dtype,
                                       int32_t rank, const int64_t *dims,
                                       const char *op,
                                       eddy_rt_tensor_t *out_t);
/// A borrowed contiguous descriptor over caller memory (no copy).
eddy_rt_status_t eddy_rt_tensor_wrap(int32_t dtype, int32_t rank,
                                     const int64_t *dims, void *data,
                                     eddy_rt_tensor_t *out_t);
/// Drops the owner reference and resets *t to eddy_rt_tensor_empty(). t may
/// be NULL.
void eddy_rt_tensor_release(eddy_rt_tensor_t *t);
/// *out_t = *t with one more reference to the owner (no copy). A borrowed
/// t gives a borrowed out_t.
void eddy_rt_tensor_share(const eddy_rt_tensor_t *t, eddy_rt_tensor_t *out_t);
/// Checks what a kernel relies on: struct_size, version, dtype, rank, dims
/// >= 0, the element count and byte size fit in int64, data non-NULL when
/// non-empty. op and what ("operand 0") name it in the message.
eddy_rt_status_t eddy_rt_tensor_validate(const eddy_rt_tensor_t *t,
                                         const char *op, const char *what);
/// Product of dims (1 for a scalar). Assumes a validated tensor.
int64_t eddy_rt_tensor_numel(const eddy_rt_tensor_t *t);
/// Row-major with no gaps (size-1 and empty dims may have any stride).
bool eddy_rt_tensor_is_contiguous(const eddy_rt_tensor_t *t);
/// Pointer to the element with row-major logical index `flat`.
void *eddy_rt_tensor_elem_ptr(const eddy_rt_tensor_t *t, int64_t flat);
/// Element `flat` (row-major logical index) converted to double / int64
/// (floats truncate toward zero, NaN gives 0, out-of-range saturates).
double eddy_rt_tensor_get_f64(const eddy_rt_tensor_t *t, int64_t flat);
int64_t eddy_rt_tensor_get_i64(const eddy_rt_tensor_t *t, int64_t flat);
/// Writes element `flat` with the cast rules of eddy_rt_cast.
void eddy_rt_tensor_set_f64(eddy_rt_tensor_t *t, int64_t flat, double v);
void eddy_rt_tensor_set_i64(eddy_rt_tensor_t *t, int64_t flat, int64_t v);
/// Same dtype, rank and dims.
bool eddy_rt_tensor_same_shape(const eddy_rt_tensor_t *a,
                               const eddy_rt_tensor_t *b);
/// Writes "[2, 3]" (or "[]") into buf, truncating; returns buf.
char *eddy_rt_shape_format(int32_t rank, const int64_t *dims, char *buf,
                           size_t size);

/// ===========================================================================
/// TensorLists
/// ===========================================================================

/// A reference-counted TensorList value. The IR treats lists as immutable
/// values; the runtime makes that cheap with copy-on-write: functions taking
/// an `owned_list` consume one reference (even when they fail) and mutate in
/// place when it was the only one, otherwise they copy the item table
/// (items share buffers) first. Retain before passing a list you still need.
/// Kernels for the tl ops are in runtime/kernels.h.
typedef struct eddy_rt_list eddy_rt_list_t;

/// A possibly partial element shape: rank -1 = unknown rank; a dim of -1 =
/// unknown size.
typedef struct eddy_rt_elem_shape {
  int32_t rank;
  int64_t dims[EDDY_RT_MAX_RANK];
} eddy_rt_elem_shape_t;

/// An element shape of unknown rank.
eddy_rt_elem_shape_t eddy_rt_elem_shape_unknown(void);
/// An element shape from rank and dims (-1 entries are unknown). False
/// when rank is out of range.
bool eddy_rt_elem_shape_make(int32_t rank, const int64_t *dims,
                             eddy_rt_elem_shape_t *out_shape);

void eddy_rt_list_retain(eddy_rt_list_t *list);
/// Releases the list (and its items when the last reference goes). May be
/// NULL.
void eddy_rt_list_release(eddy_rt_list_t *list);
int64_t eddy_rt_list_size(const eddy_rt_list_t *list);
/// The dtype of the list's tensors (for a list of lists, of the innermost
/// lists' tensors).
int32_t eddy_rt_list_dtype(const eddy_rt_list_t *list);
/// Deepest list nesting the runtime accepts.
#define EDDY_RT_MAX_LIST_DEPTH 16
/// Nesting depth: 0 when the items are tensors, d > 0 when they are lists
/// of depth d - 1 (nested loops accumulate into lists of lists). The
/// element shape of a nested list is that of its innermost tensors.
int32_t eddy_rt_list_depth(const eddy_rt_list_t *list);
/// Borrowed.
const eddy_rt_elem_shape_t *eddy_rt_list_elem_shape(const eddy_rt_list_t *list);
/// -1 when unbounded.
int64_t eddy_rt_list_max_elements(const eddy_rt_list_t *list);
/// True when the caller holds the only reference (the next push is in place).
bool eddy_rt_list_is_unique(const eddy_rt_list_t *list);

/// ===========================================================================
/// Comparing results (runtime/compare.c)
/// ===========================================================================

/// The signature of a generated entry point, `PREFIX_run` (see the header
/// `eddy compile --header FILE` writes). Threads: generated code has no
/// mutable globals, so several threads may call one entry at once, each
/// with its own context or sharing one (a context is thread-safe; its
/// memory limit, budgets and cancellation then apply to all of their
/// calls); arguments may be shared, results and err buffers may not
/// (tests/embed, under ThreadSanitizer: scripts/tsan.sh).
typedef int32_t (*eddy_rt_entry_fn)(eddy_rt_ctx_t *rt,
                                    const eddy_rt_tensor_t *args,
                                    eddy_rt_tensor_t *results, char *err,
                                    size_t errlen);

/// The spacing of a float dtype's numbers just above 1 (2^-10 for f16,
/// 2^-7 for bf16, FLT_EPSILON, DBL_EPSILON); 0 for the other dtypes.
double eddy_rt_dtype_eps(int32_t dtype);

/// How close a result must be to its reference. A float result passes when
/// max_abs <= atol + rtol * max|reference| (the largest finite reference
/// element); integer and i1 results must be equal. NaN matches only NaN,
/// an infinity only the same infinity.
typedef struct eddy_rt_compare_opts {
  uint32_t struct_size; ///< sizeof(eddy_rt_compare_opts_t)
  /// < 0 (the default): 4 eps(dtype) per op of the program (num_ops), the
  /// rule of `eddy run --mode=compare`.
  double rtol;
  double atol;     ///< < 0 (the default): 0
  int64_t num_ops; ///< the program's op count for the default rtol (>= 1)
} eddy_rt_compare_opts_t;

/// struct_size filled, rtol and atol -1 (the defaults), num_ops 1.
eddy_rt_compare_opts_t eddy_rt_compare_opts_default(void);

/// One result against its reference.
typedef struct eddy_rt_compare_result {
  bool same_type;   ///< dtype and dims agree (else nothing below is measured)
  bool ok;          ///< same_type and within the tolerance
  double max_abs;   ///< largest |got - ref| (inf: NaN against a number)
  double max_rel;   ///< largest |got - ref| / |ref|
  double max_ulp;   ///< largest distance in units in the last place of the
                    ///< dtype (f16 and bf16 measured through f32)
  double tolerance; ///< what max_abs was held to (0 for integers)
  int64_t worst;    ///< flat index of the first largest |got - ref|; -1
                    ///< when every element is equal
} eddy_rt_compare_result_t;

/// Compares got with ref element by element (any strides). opts may be
/// NULL (defaults). Fails (INVALID_ARGUMENT) only for a tensor that does not
/// validate; a dtype or shape that differs is a result with same_type
/// false.
eddy_rt_status_t eddy_rt_compare_tensor(const eddy_rt_tensor_t *ref,
                                        const eddy_rt_tensor_t *got,
                                        const eddy_rt_compare_opts_t *opts,
                                        eddy_rt_compare_result_t *out_result);
/// Calls run(rt, args, results) once and compares its num_results results
/// with refs[0..num_results), writing one report per result to
/// out_results[0..num_results) and whether all passed to *out_ok. The
/// results are released before it returns. A failing call is returned as
/// a status with the entry's code and message ("the entry failed: ...");
/// a mismatch is not an error: it is in *out_ok and the reports. For
/// applications that check a compiled model at start-up against reference
/// results (from TensorFlow, or `eddy run`). Thread-safe as the entry is.
eddy_rt_status_t eddy_rt_compare_entry(eddy_rt_ctx_t *rt, eddy_rt_entry_fn run,
                                       const eddy_rt_tensor_t *args,
                                       const eddy_rt_tensor_t *refs,
                                       int64_t num_results,
                                       const eddy_rt_compare_opts_t *opts,
                                       eddy_rt_compare_result_t *out_results,
                                       bool *out_ok);
/// The reports as a JSON array, one object per result:
/// {"index": 0, "ok": true, "same_type": true, "max_abs": 0, "max_rel": 0,
/// "max_ulp": 0, "tolerance": 0} (the numbers null when not finite, and
/// only "index", "ok" and "same_type" when the types differ). Written to
/// buf as snprintf writes (NUL-terminated, truncated to size; buf may be
/// NULL when size is 0); returns the length of the whole text.
size_t eddy_rt_compare_json(const eddy_rt_compare_result_t *results,
                            int64_t num_results, char *buf, size_t size);

/// ===========================================================================
/// Entry helpers for compiled code (runtime/entry.c)
/// ===========================================================================

/// Called first by a generated `PREFIX_run`: clears err, resets
/// results[0..num_results) to eddy_rt_tensor_empty(), and checks that rt,
/// args and results are non-NULL where needed. Returns an eddy_rt_code_t and
/// writes a message to err (truncated to errlen; err may be NULL).
int32_t eddy_rt_entry_begin(eddy_rt_ctx_t *rt, const eddy_rt_tensor_t *args,
                            int64_t num_args, eddy_rt_tensor_t *results,
                            int64_t num_results, char *err, size_t errlen);
/// Checks args[index] against dtype, rank and dims (-1 = any size):
/// "argument 1 'arg1': expected f32[4,?], got f32[3,5]". The tensor must be
/// valid and contiguous.
int32_t eddy_rt_entry_check_arg(const eddy_rt_tensor_t *args, int64_t index,
                                const char *name, int32_t dtype, int32_t rank,
                                const int64_t *dims, char *err, size_t errlen);
/// Allocates results[index] (uninitialized: the generated code writes every
/// element; owned by the caller). On failure it releases results[0..index]
/// and reports "result N: ...".
int32_t eddy_rt_entry_alloc_result(eddy_rt_ctx_t *rt,
                                   eddy_rt_tensor_t *results, int64_t index,
                                   int32_t dtype, int32_t rank,
                                   const int64_t *dims, char *err,
                                   size_t errlen);

/// Scratch memory of compiled code, through rt's allocator and memory limit.
/// NULL on failure, with the message in err ("compiled code: allocating N
/// bytes would exceed the memory limit ..."). bytes 0 gives a valid pointer.
void *eddy_rt_entry_alloc(eddy_rt_ctx_t *rt, int64_t bytes, char *err,
                          size_t errlen);
/// Frees what eddy_rt_entry_alloc returned (ptr may be NULL).
void eddy_rt_entry_free(eddy_rt_ctx_t *rt, void *ptr, int64_t bytes);
/// Around each call of compiled code (PREFIX_run): the floating-point mode
/// of rt (eddy_rt_ctx_flush_denormals) set on the calling thread, and the
/// caller's, which enter returns, restored (the flush bits only: exception
/// flags the call raised stay raised). rt may be NULL (no change).
int64_t eddy_rt_entry_fp_enter(eddy_rt_ctx_t *rt);
void eddy_rt_entry_fp_exit(int64_t mode);
/// The loop budgets of one call (eddy_rt_ctx_set_max_iterations,
/// eddy_rt_ctx_set_timeout_ms), read when it starts: the iteration limit,
/// INT64_MAX for none; the monotonic-clock deadline in ns, INT64_MAX for
/// none. rt may be NULL (no budgets).
int64_t eddy_rt_entry_max_iterations(eddy_rt_ctx_t *rt);
int64_t eddy_rt_entry_deadline(eddy_rt_ctx_t *rt);
/// Called by a loop of compiled code, where it decides to run its body again
/// after `iterations` runs, when iterations reached limit or is a multiple of
/// 64: records the first of "past the iteration limit", "cancelled" and
/// "past the deadline" that holds, as for the list helpers (*code = -CODE,
/// the message in err, prefixed with where, "LOC: 'ctl.while' op"). Does
/// nothing when *code is already set.
void eddy_rt_entry_loop_check(eddy_rt_ctx_t *rt, int64_t iterations,
                              int64_t limit, int64_t deadline,
                              const char *where, int32_t *code, char *err,
                              size_t errlen);
/// Runs fn(env, 0) .. fn(env, n - 1), an eddy_rt_task_fn, as tasks of
/// rt's pool (at once where it has threads; one after the other without
/// one), and returns when all are done: the parts of a loop the compiler
/// divided by rows (docs/cpu.md, "Row-parallel loops").
void eddy_rt_entry_run_tasks(eddy_rt_ctx_t *rt, int64_t n, void *fn, void *env);
/// Prefixes err's message with "WHERE: " (truncated to errlen); where is
/// "LOC: 'tl.get_item' op". Nothing happens when where is NULL.
void eddy_rt_entry_prefix_error(char *err, size_t errlen, const char *where);
/// Writes "WHAT: index I is out of range [0, SIZE)" to err; returns
/// EDDY_RT_ERR_INVALID_ARGUMENT. what is "LOC: 'core.gather' op".
int32_t eddy_rt_entry_index_error(char *err, size_t errlen, const char *what,
                                  int64_t index, int64_t size);
/// Writes "WHAT (A and B)" to err; returns EDDY_RT_ERR_INVALID_ARGUMENT.
/// what is "LOC: 'core.add' op: dimension 0 cannot broadcast": a run-time
/// shape check of compiled code that failed on the sizes a and b.
int32_t eddy_rt_entry_dims_error(char *err, size_t errlen, const char *what,
                                 int64_t a, int64_t b);
/// Releases results[0..num_results) (after a failure).
void eddy_rt_entry_release_results(eddy_rt_tensor_t *results,
                                   int64_t num_results);

/// TensorLists in compiled code (lists are opaque pointers; NULL = an
/// earlier failure, passed on silently). `code` is the entry's error slot:
/// the first failure stores -CODE there and writes its message to err.
/// moved != 0: the caller gives up its reference to list; else it keeps it.
void *eddy_rt_entry_list_empty(eddy_rt_ctx_t *rt, int32_t dtype, int32_t rank,
                               const int64_t *dims, int64_t max_elements,
                               int32_t *code, char *err, size_t errlen);
/// Pushes a copy of the contiguous data (dtype, rank, dims).
void *eddy_rt_entry_list_push(eddy_rt_ctx_t *rt, void *list, int32_t moved,
                              void *data, int32_t dtype, int32_t rank,
                              const int64_t *dims, int32_t *code, char *err,
                              size_t errlen);
/// Pops the last item into out_data, which has room for (dtype, rank, dims);
/// an item of another shape is an error.
void *eddy_rt_entry_list_pop(eddy_rt_ctx_t *rt, void *list, int32_t moved,
                             void *out_data, int32_t dtype, int32_t rank,
                             const int64_t *dims, int32_t *code, char *err,
                             size_t errlen);
/// tl.reserve of n unset items.
void *eddy_rt_entry_list_reserve(eddy_rt_ctx_t *rt, int32_t dtype,
                                 int32_t rank, const int64_t *dims, int64_t n,
                                 int32_t *code, char *err, size_t errlen);
/// tl.from_tensor of the contiguous data (dtype, rank, dims), copied.
void *eddy_rt_entry_list_from_tensor(eddy_rt_ctx_t *rt, void *data,
                                     int32_t dtype, int32_t rank,
                                     const int64_t *dims, int32_t *code,
                                     char *err, size_t errlen);
/// tl.from_tensor of an argument of the call (or a constant): the items
/// share its data, which the runtime never writes and which outlives the
/// list (compiled code releases every list before it returns).
void *eddy_rt_entry_list_from_arg(eddy_rt_ctx_t *rt, void *data,
                                  int32_t dtype, int32_t rank,
                                  const int64_t *dims, int32_t *code,
                                  char *err, size_t errlen);
/// tl.get_item into out_data (room for dtype, rank, dims); list is kept.
void eddy_rt_entry_list_get(eddy_rt_ctx_t *rt, const void *list, int64_t index,
                            void *out_data, int32_t dtype, int32_t rank,
                            const int64_t *dims, int32_t *code, char *err,
                            size_t errlen);
/// The data of item index of the list, in place, when the list holds it
/// (checked as eddy_rt_entry_list_get checks); NULL when the item is unset
/// (the caller copies it out with eddy_rt_entry_list_get) or on an error
/// (recorded in code). Valid while the list keeps the item: compiled code
/// reads items this way only from lists that nothing writes meanwhile.
const void *eddy_rt_entry_list_view(eddy_rt_ctx_t *rt, const void *list,
                                    int64_t index, int32_t dtype,
                                    int32_t rank, const int64_t *dims,
                                    int32_t *code, char *err, size_t errlen);
/// tl.set_item of a copy of data.
void *eddy_rt_entry_list_set(eddy_rt_ctx_t *rt, void *list, int32_t moved,
                             int64_t index, void *data, int32_t dtype,
                             int32_t rank, const int64_t *dims, int32_t *code,
                             char *err, size_t errlen);
/// tl.resize of a list of any depth to length n.
void *eddy_rt_entry_list_resize(eddy_rt_ctx_t *rt, void *list, int32_t moved,
                                int64_t n, int32_t *code, char *err,
                                size_t errlen);
/// tl.add of two lists of any depth: list (moved or borrowed) plus other
/// (borrowed; may be list itself).
void *eddy_rt_entry_list_add(eddy_rt_ctx_t *rt, void *list, int32_t moved,
                             const void *other, int32_t *code, char *err,
                             size_t errlen);
/// tl.zeros_like of a list of any depth (borrowed).
void *eddy_rt_entry_list_zeros_like(eddy_rt_ctx_t *rt, const void *list,
                                    int32_t *code, char *err, size_t errlen);
/// tl.scatter of the rows of x (dtype, rank, dims) to the n indices at
/// idx_data (of dtype idx_dtype).
void *eddy_rt_entry_list_scatter(eddy_rt_ctx_t *rt, void *list, int32_t moved,
                                 void *idx_data, int32_t idx_dtype, int64_t n,
                                 void *data, int32_t dtype, int32_t rank,
                                 const int64_t *dims, int32_t *code, char *err,
                                 size_t errlen);
/// tl.concat into out_data (exactly dtype, rank, dims) and the items'
/// first dims into out_lengths (one i64 per item).
void eddy_rt_entry_list_concat(eddy_rt_ctx_t *rt, const void *list,
                               void *out_data, int32_t dtype, int32_t rank,
                               const int64_t *dims, void *out_lengths,
                               int32_t *code, char *err, size_t errlen);
/// tl.split of x (data, dtype, rank, dims) by the n lengths at len_data (of
/// dtype len_dtype) into a list of element shape (erank, edims).
void *eddy_rt_entry_list_split(eddy_rt_ctx_t *rt, void *data, int32_t dtype,
                               int32_t rank, const int64_t *dims,
                               void *len_data, int32_t len_dtype, int64_t n,
                               int32_t erank, const int64_t *edims,
                               int32_t *code, char *err, size_t errlen);
/// The dims (rank entries, written to out_dims) of what a read of list
/// gives, for compiled code with dynamic shapes: what 0 is item `index`
/// (tl.get_item; -1: the last item, tl.pop_back), what 1 is tl.stack
/// ([size] + the items' dims). A failure is recorded like the other list
/// helpers (an empty list or an item of another rank is left for the read
/// itself to report); out_dims is then all 0.
void eddy_rt_entry_list_dims(eddy_rt_ctx_t *rt, const void *list,
                             int32_t what, int64_t index, int32_t rank,
                             int64_t *out_dims, int32_t *code, char *err,
                             size_t errlen);
/// tl.stack into out_data, which must be exactly (dtype, rank, dims).
void eddy_rt_entry_list_stack(eddy_rt_ctx_t *rt, const void *list,
                              void *out_data, int32_t dtype, int32_t rank,
                              const int64_t *dims, int32_t *code, char *err,
                              size_t errlen);
/// Length (0 for NULL).
int64_t eddy_rt_entry_list_length(const void *list);
/// NULL is fine for both.
void eddy_rt_entry_list_retain(void *list);
void eddy_rt_entry_list_release(void *list);

/// Lists of lists in compiled code (runtime/entry_nested.c), same
/// conventions. depth: 1 when the items are lists of tensors, and so on;
/// (dtype, rank, dims) describe the innermost tensors. Item lists passed in
/// are borrowed (the list takes its own reference); item lists returned are
/// new references (NULL after a failure).
void *eddy_rt_entry_list_empty_nested(eddy_rt_ctx_t *rt, int32_t depth,
                                      int32_t dtype, int32_t rank,
                                      const int64_t *dims, int64_t max_elements,
                                      int32_t *code, char *err, size_t errlen);
void *eddy_rt_entry_list_reserve_nested(eddy_rt_ctx_t *rt, int32_t depth,
                                        int32_t dtype, int32_t rank,
                                        const int64_t *dims, int64_t n,
                                        int32_t *code, char *err,
                                        size_t errlen);
void *eddy_rt_entry_list_push_list(eddy_rt_ctx_t *rt, void *list,
                                   int32_t moved, void *item, int32_t *code,
                                   char *err, size_t errlen);
/// Returns the shorter list; the popped item goes to *out_item.
void *eddy_rt_entry_list_pop_list(eddy_rt_ctx_t *rt, void *list, int32_t moved,
                                  void **out_item, int32_t *code, char *err,
                                  size_t errlen);
void *eddy_rt_entry_list_get_list(eddy_rt_ctx_t *rt, const void *list,
                                  int64_t index, int32_t *code, char *err,
                                  size_t errlen);
void *eddy_rt_entry_list_set_list(eddy_rt_ctx_t *rt, void *list, int32_t moved,
                                  int64_t index, void *item, int32_t *code,
                                  char *err, size_t errlen);

/// ===========================================================================
/// f32 matrix multiplication (runtime/gemm.c)
/// ===========================================================================
/// Which implementation eddy_rt_sgemm uses (and which one it used).
typedef enum eddy_rt_gemm_impl {
  EDDY_RT_GEMM_AUTO = 0,  ///< by eddy_rt_gemm_plan_get's rule: BLAS or TILED
  EDDY_RT_GEMM_BLAS = 1,  ///< cblas_sgemm (OpenBLAS); TILED when not built
  EDDY_RT_GEMM_TILED = 2, ///< eddy's own blocked, vectorized kernel
  EDDY_RT_GEMM_PLAIN = 3, ///< a plain triple loop (reference, tests)
} eddy_rt_gemm_impl_t;

/// True when this libeddyrt calls a CBLAS (OpenBLAS) for large matmuls.
bool eddy_rt_gemm_has_blas(void);

/// Instruction-set levels of x86-64 f32 matmul kernels, ordered: a kernel of
/// one level runs on a CPU of that level or above.
typedef enum eddy_rt_isa {
  EDDY_RT_ISA_UNKNOWN = -1, ///< not known (no BLAS, or a core name not known)
  EDDY_RT_ISA_SSE = 0,      ///< baseline x86-64: SSE2/SSE3, 4 floats a vector
  EDDY_RT_ISA_AVX = 1,      ///< AVX without AVX2 and FMA (8 floats)
  EDDY_RT_ISA_AVX2 = 2,     ///< AVX2 and FMA (8 floats)
  EDDY_RT_ISA_AVX512 = 3,   ///< AVX-512 F and VL (16 floats)
} eddy_rt_isa_t;

/// How EDDY_RT_GEMM_AUTO picks an implementation (docs/runtime.md, "f32
/// matmul for compiled code"). Decided once per process, at the first
/// product, from the CPU's feature flags, the BLAS's core and the
/// environment (EDDY_RT_GEMM, EDDY_RT_GEMM_ISA, EDDY_RT_GEMM_SMALL).
typedef struct eddy_rt_gemm_plan {
  int32_t cpu_isa;    ///< the widest level this CPU and OS run
  int32_t tiled_isa;  ///< the level of the micro-kernel TILED runs
  int32_t blas_isa;   ///< the level of the BLAS's kernels (UNKNOWN: none)
  char blas_core[32]; ///< the BLAS's name for the CPU ("" without a BLAS)
  int32_t large;      ///< AUTO's implementation outside (tiny_work,
                      ///< small_work]: BLAS or TILED
  int32_t vec;        ///< AUTO's implementation for m == 1 or n == 1
  int64_t tiny_work;  ///< AUTO runs TILED when tiny_work < m * n * k
  int64_t small_work; ///< ... <= small_work
  char reason[192];   ///< why, in one line
} eddy_rt_gemm_plan_t;

/// The process's plan (computed at the first call; thread-safe).
void eddy_rt_gemm_plan_get(eddy_rt_gemm_plan_t *out_plan);
/// The rule itself, for given inputs: cpu_isa the CPU's level, has_blas
/// whether a BLAS is linked, blas_core its core name (NULL: unknown), and
/// the values of EDDY_RT_GEMM ("auto", "blas", "tiled"), EDDY_RT_GEMM_ISA
/// ("sse", "avx2", "avx512": a cap on the tiled kernel's level) and
/// EDDY_RT_GEMM_SMALL (a number), each NULL when unset. Values not
/// understood are ignored and named in the reason.
void eddy_rt_gemm_plan_decide(int32_t cpu_isa, bool has_blas,
                              const char *blas_core, const char *env_impl,
                              const char *env_isa, const char *env_small,
                              eddy_rt_gemm_plan_t *out_plan);
/// The level of the f32 kernels OpenBLAS runs for a core name that
/// openblas_get_corename() gives (any case); UNKNOWN for a name not known.
int32_t eddy_rt_gemm_core_isa(const char *core);
/// "sse", "avx", "avx2", "avx512" or "unknown".
const char *eddy_rt_isa_name(int32_t isa);
/// Flags of the sgemm calls (`trans` of eddy_rt_sgemm, eddy_rt_entry_sgemm
/// and eddy_rt_sgemm_cached; `flags` of eddy_rt_entry_cuda_sgemm): A or B
/// stored transposed; (CUDA only) whether the product may round its inputs
/// to TF32 (tensor cores; 10-bit mantissa); (host only) C += op(A) op(B),
/// adding the product to what C holds (C's elements then sum C and the
/// product, in an order the contract below leaves unspecified).
#define EDDY_RT_SGEMM_TRANS_A 1
#define EDDY_RT_SGEMM_TRANS_B 2
#define EDDY_RT_SGEMM_TF32 4
#define EDDY_RT_SGEMM_ACCUMULATE 8
/// C = op(A) op(B) in f32, row-major: op(A) is m x k (A is stored k x m and
/// read transposed when trans & 1), op(B) is k x n (stored n x k when
/// trans & 2); with trans & EDDY_RT_SGEMM_ACCUMULATE, C += op(A) op(B).
/// lda, ldb, ldc are row strides in elements. C must not overlap A or B. Accumulation order and precision (at least f32) are unspecified:
/// |c - exact| <= gamma_k * sum_p |a_ip| |b_pj| with gamma_k = k u / (1 - k u),
/// u = 2^-24. Never fails: when rt's allocator refuses the packing buffers
/// the product is computed without them. Returns the implementation used.
/// Products of 2^17 multiply-adds or more are split across the threads of
/// rt's pool: eddy's kernel by strips (the results do not depend on how
/// many threads: each element sums in the same order), OpenBLAS by blocks
/// of rows or columns, one single-threaded call each (libeddyrt sets
/// OpenBLAS to one thread at the process's first product). impl TILED runs
/// the plan's tiled_isa micro-kernel.
int32_t eddy_rt_sgemm(eddy_rt_ctx_t *rt, int32_t impl, int32_t trans,
                      int64_t m, int64_t n, int64_t k, const float *a,
                      int64_t lda, const float *b, int64_t ldb, float *c,
                      int64_t ldc);
/// core.matmul of f32 in compiled code: eddy_rt_sgemm with EDDY_RT_GEMM_AUTO.
void eddy_rt_entry_sgemm(eddy_rt_ctx_t *rt, int32_t trans, int64_t m,
                         int64_t n, int64_t k, const float *a, int64_t lda,
                         const float *b, int64_t ldb, float *c, int64_t ldc);

/// core.matmul of f32 over a batch in compiled code: `batch` products
/// eddy_rt_entry_sgemm would compute, matrix i of each operand at element
/// offset i * stride (a stride of 0 reads one matrix for every product).
/// With rt's pool the batch is divided among the threads, each computing
/// whole products on its own, when it is worth a hand-off; each product is
/// computed alone on its thread then (its elements summed as one call of
/// eddy_rt_entry_sgemm on that thread sums them).
void eddy_rt_entry_sgemm_batch(eddy_rt_ctx_t *rt, int32_t trans, int64_t batch,
                               int64_t m, int64_t n, int64_t k, const float *a,
                               int64_t lda, int64_t stride_a, const float *b,
                               int64_t ldb, int64_t stride_b, float *c,
                               int64_t ldc, int64_t stride_c);

/// A packed copy of a product's right operand, kept across the products of
/// a loop whose B does not change: eddy's tiled kernel rearranges B for its
/// micro-kernel on every call, and for a loop's per-step products with a
/// weight that is most of the work of packing. Plain storage (no pointers
/// to it are kept): init before the first use, reset whenever the data at
/// a B address used with it may have changed (compiled code: on entering
/// the loop), release to give its memory back. The cache is reused while
/// the next product has the same B address, shape, stride and transpose.
/// Not thread-safe: one cache per call site and call.
typedef struct eddy_rt_gemm_cache {
  int64_t words[8];
} eddy_rt_gemm_cache_t;
void eddy_rt_gemm_cache_init(eddy_rt_gemm_cache_t *cache);
void eddy_rt_gemm_cache_reset(eddy_rt_gemm_cache_t *cache);
void eddy_rt_gemm_cache_release(eddy_rt_ctx_t *rt,
                                eddy_rt_gemm_cache_t *cache);
/// eddy_rt_sgemm with EDDY_RT_GEMM_AUTO, packing op(B) into cache (or
/// reusing its packed copy) when the tiled kernel runs.
int32_t eddy_rt_sgemm_cached(eddy_rt_ctx_t *rt, eddy_rt_gemm_cache_t *cache,
                             int32_t trans, int64_t m, int64_t n, int64_t k,
                             const float *a, int64_t lda, const float *b,
                             int64_t ldb, float *c, int64_t ldc);
/// Compiled code's packed-B caches (backend-cpu: a library matmul inside a
/// loop whose B is defined outside it): n caches in a row at caches,
/// initialized at the call's start, released at every exit; one is reset
/// on entering the loop, and the product calls the cached form.
void eddy_rt_entry_gemm_caches_init(eddy_rt_gemm_cache_t *caches, int64_t n);
void eddy_rt_entry_gemm_caches_release(eddy_rt_ctx_t *rt,
                                       eddy_rt_gemm_cache_t *caches, int64_t n);
void eddy_rt_entry_gemm_cache_reset(eddy_rt_gemm_cache_t *cache);
void eddy_rt_entry_sgemm_cached(eddy_rt_ctx_t *rt, eddy_rt_gemm_cache_t *cache,
                                int32_t trans, int64_t m, int64_t n, int64_t k,
                                const float *a, int64_t lda, const float *b,
                                int64_t ldb, float *c, int64_t ldc);

/// ===========================================================================
/// CUDA (runtime/cuda.c, runtime/cuda_list.c)
/// ===========================================================================
/// What code compiled with `--target=cuda` calls for everything that touches
/// the device. libeddyrt links neither the CUDA driver nor cuBLAS: it loads
/// them with dlopen on first use, so such a program links and starts on a
/// machine without a GPU and gets EDDY_RT_ERR_UNSUPPORTED from
/// eddy_rt_entry_cuda_begin. Device pointers are `void *`.
///
/// Errors: each thread records the first CUDA failure since its
/// eddy_rt_entry_cuda_begin (driver call, kernel launch, cuBLAS) with a
/// message naming the call ("cuLaunchKernel(main_kernel_3):
/// CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)"); once one is
/// recorded the helpers below do nothing (except free) until
/// eddy_rt_entry_cuda_end reports and clears it.

/// Makes the calling thread ready for the helpers below. The first call in
/// the process loads the driver (env EDDY_CUDA_DRIVER if set, else
/// "libcuda.so.1"), calls cuInit, picks device EDDY_CUDA_DEVICE (default 0)
/// and retains its primary context; a failure is remembered and every later
/// call returns it: EDDY_RT_ERR_UNSUPPORTED with a message starting "no CUDA
/// device: " ("no CUDA device: cannot load libcuda.so.1: ..."). Each call
/// makes the primary context current, creates the thread's stream on the
/// thread's first call, and clears the thread's recorded error. Thread-safe.
int32_t eddy_rt_entry_cuda_begin(eddy_rt_ctx_t *rt, char *err, size_t errlen);
/// Device memory (cuMemAlloc_v2); bytes 0 gives a valid unique pointer. NULL
/// on failure, with "cannot allocate N bytes of device memory: CUDA_ERROR_..."
/// in err (the recorded message when an error is recorded already). Device
/// memory is not counted against rt's memory limit.
void *eddy_rt_entry_cuda_alloc(eddy_rt_ctx_t *rt, int64_t bytes, char *err,
                               size_t errlen);
/// Frees what eddy_rt_entry_cuda_alloc returned (dptr may be NULL), also
/// after an error, so that cleanup does not leak. The driver waits for work
/// still using the memory.
void eddy_rt_entry_cuda_free(eddy_rt_ctx_t *rt, void *dptr, int64_t bytes);
/// Host to device, ordered on the thread's stream. src may be reused on
/// return when it is ordinary (pageable) memory; memory pinned through the
/// driver must stay unchanged until the next eddy_rt_entry_cuda_to_host or
/// eddy_rt_entry_cuda_end.
void eddy_rt_entry_cuda_to_device(void *dst, const void *src, int64_t bytes);
/// Device to host: waits for everything issued before on the thread's
/// stream, then dst holds the data. With an error recorded (before or by
/// this copy) dst is zeroed instead; the caller learns of it from
/// eddy_rt_entry_cuda_end.
void eddy_rt_entry_cuda_to_host(void *dst, const void *src, int64_t bytes);
/// Waits for the thread's stream and the swap stream of device lists (then
/// frees the list blocks that waited for their copies); returns 0, or the
/// first error recorded since eddy_rt_entry_cuda_begin (EDDY_RT_ERR_INTERNAL
/// for driver and launch failures, EDDY_RT_ERR_RESOURCE for out of memory,
/// EDDY_RT_ERR_UNSUPPORTED when cuBLAS cannot be loaded) with its message in
/// err; err is not touched when it returns 0 (it may hold the message of an
/// earlier run-time error of the call). Clears the record.
int32_t eddy_rt_entry_cuda_end(eddy_rt_ctx_t *rt, char *err, size_t errlen);
/// eddy_rt_entry_sgemm's contract (row-major, flags & EDDY_RT_SGEMM_TRANS_A:
/// A stored transposed, & EDDY_RT_SGEMM_TRANS_B: B stored transposed, ld*
/// row strides) on device pointers, through cuBLAS on the thread's stream,
/// in FP32 arithmetic unless flags has EDDY_RT_SGEMM_TF32. cuBLAS is loaded
/// on first use: env EDDY_CUBLAS if set, else libcublas.so.13, .so.12,
/// .so.11, .so; each thread gets its own handle. Failures are recorded.
void eddy_rt_entry_cuda_sgemm(eddy_rt_ctx_t *rt, int32_t flags, int64_t m,
                              int64_t n, int64_t k, const float *a,
                              int64_t lda, const float *b, int64_t ldb,
                              float *c, int64_t ldc);

/// TensorLists whose items live in device memory (runtime/cuda_list.c):
/// eddy_rt_entry_list_*'s signatures, conventions and messages (opaque
/// lists, NULL = an earlier failure passed on silently, the first failure
/// stores -CODE in *code and writes err, moved != 0 gives up the caller's
/// reference), but `data` and `out_data` are device pointers, and these
/// lists are not eddy_rt_list_t (the two kinds do not mix). Lists are
/// values: items are copied in once and shared by the list's copies. Every
/// copy is ordered on the thread's stream; a helper that copies fails (with
/// the recorded message) on a thread where eddy_rt_entry_cuda_begin has not
/// succeeded or an error is recorded. A failed driver call is also recorded
/// for eddy_rt_entry_cuda_end; a failed allocation ("tl.push_back: cannot
/// allocate N bytes of device memory: ...") is not. Device and pinned
/// memory are not counted against rt's memory limit.
///
/// swap != 0 (a loop value of a while loop with swap_memory): pushed and
/// set items are kept in pinned host memory. The push copies the item into
/// a fresh device block on the thread's stream; a second per-thread stream
/// waits for that copy and moves the block to pinned memory, overlapping
/// the kernels after the push (the device block is freed once the move is
/// done). A read makes the stream wait for the move and copies the item
/// back. eddy_rt_entry_cuda_end also waits for the second stream.
void *eddy_rt_entry_cuda_list_empty(eddy_rt_ctx_t *rt, int32_t dtype,
                                    int32_t rank, const int64_t *dims,
                                    int64_t max_elements, int32_t *code,
                                    char *err, size_t errlen, int32_t swap);
/// tl.reserve of n unset items (read as zeros).
void *eddy_rt_entry_cuda_list_reserve(eddy_rt_ctx_t *rt, int32_t dtype,
                                      int32_t rank, const int64_t *dims,
                                      int64_t n, int32_t *code, char *err,
                                      size_t errlen);
/// tl.from_tensor: one device copy of the tensor, sliced into the items.
void *eddy_rt_entry_cuda_list_from_tensor(eddy_rt_ctx_t *rt, void *data,
                                          int32_t dtype, int32_t rank,
                                          const int64_t *dims, int32_t *code,
                                          char *err, size_t errlen);
/// Pushes a copy of the contiguous device data (dtype, rank, dims).
void *eddy_rt_entry_cuda_list_push(eddy_rt_ctx_t *rt, void *list,
                                   int32_t moved, void *data, int32_t dtype,
                                   int32_t rank, const int64_t *dims,
                                   int32_t *code, char *err, size_t errlen);
/// Pops the last item into out_data (room for dtype, rank, dims); an item
/// of another shape is an error.
void *eddy_rt_entry_cuda_list_pop(eddy_rt_ctx_t *rt, void *list,
                                  int32_t moved, void *out_data, int32_t dtype,
                                  int32_t rank, const int64_t *dims,
                                  int32_t *code, char *err, size_t errlen);
/// tl.get_item into out_data; list is kept.
void eddy_rt_entry_cuda_list_get(eddy_rt_ctx_t *rt, const void *list,
                                 int64_t index, void *out_data, int32_t dtype,
                                 int32_t rank, const int64_t *dims,
                                 int32_t *code, char *err, size_t errlen);
/// tl.set_item of a copy of data.
void *eddy_rt_entry_cuda_list_set(eddy_rt_ctx_t *rt, void *list, int32_t moved,
                                  int64_t index, void *data, int32_t dtype,
                                  int32_t rank, const int64_t *dims,
                                  int32_t *code, char *err, size_t errlen);
/// tl.scatter of the rows of x (in device memory) to the n indices at
/// idx_data (in device memory, of dtype idx_dtype).
void *eddy_rt_entry_cuda_list_scatter(eddy_rt_ctx_t *rt, void *list,
                                      int32_t moved, void *idx_data,
                                      int32_t idx_dtype, int64_t n, void *data,
                                      int32_t dtype, int32_t rank,
                                      const int64_t *dims, int32_t *code,
                                      char *err, size_t errlen);
/// tl.concat and tl.split as eddy_rt_entry_list_concat and _split, with
/// every pointer to device memory.
void eddy_rt_entry_cuda_list_concat(eddy_rt_ctx_t *rt, const void *list,
                                    void *out_data, int32_t dtype,
                                    int32_t rank, const int64_t *dims,
                                    void *out_lengths, int32_t *code,
                                    char *err, size_t errlen);
void *eddy_rt_entry_cuda_list_split(eddy_rt_ctx_t *rt, void *data,
                                    int32_t dtype, int32_t rank,
                                    const int64_t *dims, void *len_data,
                                    int32_t len_dtype, int64_t n,
                                    int32_t erank, const int64_t *edims,
                                    int32_t *code, char *err, size_t errlen);
/// tl.add of two lists of any depth; items set in both are summed through
/// host memory (a synchronous copy each way).
void *eddy_rt_entry_cuda_list_add(eddy_rt_ctx_t *rt, void *list,
                                  int32_t moved, const void *other,
                                  int32_t *code, char *err, size_t errlen);
/// tl.zeros_like of a list of any depth (borrowed): zeroed device blocks.
void *eddy_rt_entry_cuda_list_zeros_like(eddy_rt_ctx_t *rt, const void *list,
                                         int32_t *code, char *err,
                                         size_t errlen);
/// tl.resize of a list of any depth to length n.
void *eddy_rt_entry_cuda_list_resize(eddy_rt_ctx_t *rt, void *list,
                                     int32_t moved, int64_t n, int32_t *code,
                                     char *err, size_t errlen);
/// tl.stack into out_data, which must be exactly (dtype, rank, dims).
void eddy_rt_entry_cuda_list_stack(eddy_rt_ctx_t *rt, const void *list,
                                   void *out_data, int32_t dtype, int32_t rank,
                                   const int64_t *dims, int32_t *code,
                                   char *err, size_t errlen);
/// eddy_rt_entry_list_dims for a device list (the dims are host data).
void eddy_rt_entry_cuda_list_dims(eddy_rt_ctx_t *rt, const void *list,
                                  int32_t what, int64_t index, int32_t rank,
                                  int64_t *out_dims, int32_t *code, char *err,
                                  size_t errlen);
/// Length (0 for NULL).
int64_t eddy_rt_entry_cuda_list_length(const void *list);
/// NULL is fine for both. Release frees the device and pinned memory of
/// items whose last reference goes (after the copies still using it, also
/// after an error).
void eddy_rt_entry_cuda_list_retain(void *list);
void eddy_rt_entry_cuda_list_release(void *list);
/// Lists of lists in device lists: eddy_rt_entry_list_*_nested and
/// *_list's signatures, conventions and messages. The innermost lists (depth
/// 0) are device lists as above; a list of depth > 0 holds references to
/// device lists of one less depth and has no device memory of its own (so
/// these helpers do not need eddy_rt_entry_cuda_begin). The tensor helpers
/// above refuse such a list as the host's do; length, retain and release
/// work on it (release frees the whole tree).
void *eddy_rt_entry_cuda_list_empty_nested(eddy_rt_ctx_t *rt, int32_t depth,
                                           int32_t dtype, int32_t rank,
                                           const int64_t *dims,
                                           int64_t max_elements, int32_t *code,
                                           char *err, size_t errlen);
void *eddy_rt_entry_cuda_list_reserve_nested(eddy_rt_ctx_t *rt, int32_t depth,
                                             int32_t dtype, int32_t rank,
                                             const int64_t *dims, int64_t n,
                                             int32_t *code, char *err,
                                             size_t errlen);
void *eddy_rt_entry_cuda_list_push_list(eddy_rt_ctx_t *rt, void *list,
                                        int32_t moved, void *item,
                                        int32_t *code, char *err,
                                        size_t errlen);
/// Returns the shorter list; the popped item goes to *out_item.
void *eddy_rt_entry_cuda_list_pop_list(eddy_rt_ctx_t *rt, void *list,
                                       int32_t moved, void **out_item,
                                       int32_t *code, char *err,
                                       size_t errlen);
void *eddy_rt_entry_cuda_list_get_list(eddy_rt_ctx_t *rt, const void *list,
                                       int64_t index, int32_t *code, char *err,
                                       size_t errlen);
void *eddy_rt_entry_cuda_list_set_list(eddy_rt_ctx_t *rt, void *list,
                                       int32_t moved, int64_t index,
                                       void *item, int32_t *code, char *err,
                                       size_t errlen);

/// MLIR's GPU runtime ABI: the functions that host code lowered by MLIR's
/// gpu-to-llvm (and LLVM translation of gpu.binary / gpu.launch_func) calls,
/// with exactly the names and signatures of MLIR 19's CUDA runtime wrappers.
/// They are an ABI, not eddy names. All do nothing (and return NULL) on a
/// thread where eddy_rt_entry_cuda_begin has not succeeded or an error is
/// recorded.
///
/// The module loaded from the image at `data` (cuModuleLoadData), cached:
/// the same data pointer gives the same module, loaded once per process.
/// Thread-safe.
void *mgpuModuleLoad(void *data, size_t gpuBlobSize);
/// Does nothing: modules stay cached for the life of the process.
void mgpuModuleUnload(void *module);
/// The kernel `name` of module (cuModuleGetFunction, cached).
void *mgpuModuleGetFunction(void *module, const char *name);
/// The calling thread's stream (not a new one).
void *mgpuStreamCreate(void);
/// Does nothing: the thread's stream lives as long as the thread.
void mgpuStreamDestroy(void *stream);
/// Does nothing. Kernels run in order on the thread's stream, and
/// eddy_rt_entry_cuda_to_host and eddy_rt_entry_cuda_end wait for it, so a
/// wait after each launch would only stall the host; errors of the kernels
/// are reported by those two.
void mgpuStreamSynchronize(void *stream);
/// cuLaunchKernel on stream (the thread's stream when NULL); a failure is
/// recorded. A grid with a zero dimension launches nothing. paramsCount is
/// not used (the driver does not take it).
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount);

#ifdef __cplusplus
}
#endif
#endif
