/// libeddyrt internals shared by the runtime's .c files: error helpers,
/// output allocation, element loads and stores with the cast rules, and the
/// strided elementwise iteration engine every kernel is built on.
#ifndef EDDY_RUNTIME_RT_INTERNAL_H
#define EDDY_RUNTIME_RT_INTERNAL_H

#include "runtime/eddyrt.h"
#include "runtime/kernels.h"
#include "runtime/scalar.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

/// Big enough for any formatted shape of EDDY_RT_MAX_RANK dims.
#define RT_SHAPE_BUF 400

/// Elementwise work below this many elements runs on the caller alone.
#define RT_PAR_MIN_ELEMS ((int64_t)1 << 15)
/// Elements per parallel task (fixed: chunking never depends on threads).
#define RT_PAR_CHUNK ((int64_t)1 << 14)

/// ---- f32 matmul (gemm.c) ---------------------------------------------------

/// eddy_rt_sgemm's tiled kernel with the micro-kernel of the given level
/// (EDDY_RT_ISA_SSE, _AVX2 or _AVX512; the caller checks the CPU runs it),
/// so tests reach every micro-kernel this CPU has. Same contract as
/// eddy_rt_sgemm; m, n, k > 0.
void rt_sgemm_tiled(eddy_rt_ctx_t *rt, int32_t isa, int32_t trans, int64_t m,
                    int64_t n, int64_t k, const float *a, int64_t lda,
                    const float *b, int64_t ldb, float *c, int64_t ldc);

/// ---- Errors -----------------------------------------------------------------

/// "OP: " + the formatted message.
eddy_rt_status_t rt_err(eddy_rt_code_t code, const char *op, const char *fmt,
                        ...) EDDY_RT_PRINTF(3, 4);
/// A dtype that the op does not accept; `expected` lists what it does.
eddy_rt_status_t rt_err_dtype(const char *op, const char *what, int32_t dtype,
                              const char *expected);

/// Formats the tensor's shape ("[2, 3]") into buf (RT_SHAPE_BUF bytes).
char *rt_shape_str(const eddy_rt_tensor_t *t, char *buf);
/// Formats the tensor's type ("f32[2, 3]") into buf (RT_SHAPE_BUF bytes).
char *rt_type_str(const eddy_rt_tensor_t *t, char *buf);
/// Formats a list's element shape ("[2, ?]", "<unknown rank>") into buf
/// (RT_SHAPE_BUF bytes).
char *rt_elem_str(const eddy_rt_elem_shape_t *s, char *buf);
/// Formats an expected type of compiled code ("f32[4,?]") into buf; returns
/// buf.
char *rt_spec_str(int32_t dtype, int32_t rank, const int64_t *dims, char *buf,
                 size_t size);

/// ---- Tensors ------------------------------------------------------------------

/// Allocates an uninitialized contiguous output; checks overflow of the
/// element count and byte size and the memory limit, naming op.
eddy_rt_status_t rt_alloc_tensor(eddy_rt_ctx_t *ctx, const char *op,
                                 int32_t dtype, int32_t rank,
                                 const int64_t *dims, eddy_rt_tensor_t *out_t);
/// Product of dims with overflow check; false on overflow.
bool rt_numel_checked(int32_t rank, const int64_t *dims, int64_t *out_n);
/// a * b for a, b >= 0, saturating at INT64_MAX: for products over the
/// dims of tensors that may be empty, where only a zero matters.
static inline int64_t rt_mul_sat(int64_t a, int64_t b) {
  if (a == 0 || b == 0)
    return 0;
  return a > INT64_MAX / b ? INT64_MAX : a * b;
}
/// The calling thread's floating-point control bits (x86: MXCSR; AArch64:
/// FPCR; 0 elsewhere), and the ones that flush subnormal results to zero
/// and read subnormal operands as zero (x86: FTZ and DAZ; AArch64: FZ).
static inline uint64_t rt_fp_mode(void) {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_ia32_stmxcsr();
#elif defined(__aarch64__)
  uint64_t v;
  __asm__ volatile("mrs %0, fpcr" : "=r"(v));
  return v;
#else
  return 0;
#endif
}
static inline void rt_fp_set_mode(uint64_t m) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_ldmxcsr((unsigned)m);
#elif defined(__aarch64__)
  __asm__ volatile("msr fpcr, %0" : : "r"(m));
#else
  (void)m;
#endif
}
#if defined(__x86_64__) || defined(__i386__)
#define RT_FP_FLUSH ((uint64_t)0x8040)
#elif defined(__aarch64__)
#define RT_FP_FLUSH ((uint64_t)1 << 24)
#else
#define RT_FP_FLUSH ((uint64_t)0)
#endif
/// Sets row-major strides from dims (saturating for empty tensors, whose
/// strides are never used).
void rt_set_contiguous_strides(eddy_rt_tensor_t *t);
/// Normalizes axis into [0, rank); error naming op and what ("axis").
eddy_rt_status_t rt_norm_axis(const char *op, const char *what, int64_t axis,
                              int32_t rank, int32_t *out_axis);
/// eddy_rt_tensor_validate with op and "operand N".
eddy_rt_status_t rt_check_operand(const eddy_rt_tensor_t *t, const char *op,
                                  int index);
/// A scalar index (i8, i32 or i64, rank 0) read as int64.
eddy_rt_status_t rt_read_index(const eddy_rt_tensor_t *t, const char *op,
                               const char *what, int64_t *out_v);

/// ---- Cast conversions -----------------------------------------------------

/// Float to integer: NaN gives 0, values truncate toward zero and saturate
/// at the type's range. Integer to integer wraps (two's complement).
/// Anything to i1: nonzero (NaN included) gives 1. f64 to f16/bf16 goes
/// through f32 (as the constant folder does). The element conversions are
/// those of runtime/scalar.h.

/// Reads element p of dtype as double (ints exactly up to 2^53).
double rt_load_f64(int32_t dtype, const void *p);
/// Reads element p of dtype as int64 (floats with the cast rules).
int64_t rt_load_i64(int32_t dtype, const void *p);
/// Writes v to p with the cast rules (double source).
void rt_store_f64(int32_t dtype, void *p, double v);
/// Writes v to p with the cast rules (int64 source: exact for ints).
void rt_store_i64(int32_t dtype, void *p, int64_t v);

/// ---- Elementwise iteration ---------------------------------------------------------

#define RT_EW_MAX_OPS 4

/// Operand 0 is the output, the others inputs broadcast to its shape.
/// Strides are in elements; size-1 dims are dropped and mergeable dims
/// merged, so the innermost loop is as long as possible.
typedef struct rt_ew {
  int32_t rank; ///< >= 1 after init
  int32_t nops;
  int64_t total;
  int64_t dims[EDDY_RT_MAX_RANK];
  int64_t strides[RT_EW_MAX_OPS][EDDY_RT_MAX_RANK];
  char *base[RT_EW_MAX_OPS];
  int64_t esize[RT_EW_MAX_OPS];
} rt_ew_t;

/// Processes one row: ptrs[k] is operand k's first element, strides[k] its
/// stride in elements along the row, n the row length.
typedef void (*rt_ew_row_fn)(void *arg, char *const *ptrs,
                             const int64_t *strides, int64_t n);

/// out (any strides) receives; ins[0..nin) must be broadcastable to out's
/// dims (checked by the caller).
void rt_ew_init(rt_ew_t *it, const eddy_rt_tensor_t *out, int32_t nin,
                const eddy_rt_tensor_t *const *ins);
/// The running mean of the time a spinning worker of pool takes to claim a
/// task after a job is posted, in ns (0: no pool, or fewer than 8 measured
/// since the last pause of 50 ms without one).
int64_t rt_pool_handoff_ns(const eddy_rt_pool_t *pool);

/// Runs fn over every row, on the context's pool when the work is large.
void rt_ew_run(eddy_rt_ctx_t *ctx, const rt_ew_t *it, rt_ew_row_fn fn,
               void *arg);
/// Broadcast shape of ins[0..n) with numpy's rules; error names op.
eddy_rt_status_t rt_broadcast_shapes(const char *op, int32_t n,
                                     const eddy_rt_tensor_t *const *ins,
                                     int32_t *out_rank, int64_t *out_dims);
/// Copies src into dst elementwise (same dtype; src broadcast to dst's
/// dims; dst any strides).
void rt_copy_into(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *dst,
                  const eddy_rt_tensor_t *src);
/// A typed unary row loop: n elements of a (stride sa) to o (contiguous).
typedef void (*rt_un_fn)(char *o, const char *a, int64_t sa, int64_t n);
/// Allocates out_t (x's shape, out_dtype) and runs fn over x into it.
eddy_rt_status_t rt_ew_unary(eddy_rt_ctx_t *ctx, const char *op, rt_un_fn fn,
                             int32_t out_dtype, const eddy_rt_tensor_t *x,
                             eddy_rt_tensor_t *out_t);
/// A view of x (no reference taken) with dims/strides replaced.
eddy_rt_tensor_t rt_view(const eddy_rt_tensor_t *x, int32_t rank,
                         const int64_t *dims, const int64_t *strides,
                         void *data);
/// A contiguous owned tensor with x's data: shares x's buffer when x is
/// owned and contiguous, copies otherwise.
eddy_rt_status_t rt_make_owned_contiguous(eddy_rt_ctx_t *ctx, const char *op,
                                          const eddy_rt_tensor_t *x,
                                          eddy_rt_tensor_t *out_t);

/// The dims (rank and dims[rank]) eddy_rt_list_stack gives list, checked as
/// it checks them (an error for a list of lists, items of two shapes, or no
/// set item and an element shape not fully known).
eddy_rt_status_t rt_list_stack_dims(const eddy_rt_list_t *list,
                                    int32_t *out_rank, int64_t *out_dims);
/// Writes list's items, stacked, into out (rank and dims from
/// rt_list_stack_dims); unset items as zeros.
void rt_list_stack_fill(const eddy_rt_list_t *list, int32_t rank,
                        const int64_t *dims, void *out);

/// A TensorList entry helper's failure (entry.c, entry_nested.c): the first
/// one stores -CODE in the entry's error slot *code and writes its message to
/// err; st is destroyed. Returns NULL (the failed helper's list).
void *rt_entry_list_fail(eddy_rt_status_t st, int32_t *code, char *err,
                         size_t errlen);

/// out[k] = a[k] + b[k] for k < n, elements of dtype (f16 and bf16 through
/// f32, integers wrapping); false for i1 and i8, which no list sum takes.
bool rt_list_sum_elems(int32_t dtype, int64_t n, const void *a, const void *b,
                       void *out);

#endif
