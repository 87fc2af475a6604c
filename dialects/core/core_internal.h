/// Internals of the core dialect shared by its op table (core_ops.c), shape
/// functions (core_shape*.c) and folders (core_fold*.c).
#ifndef EDDY_DIALECTS_CORE_CORE_INTERNAL_H
#define EDDY_DIALECTS_CORE_CORE_INTERNAL_H

#include "dialects/core/core.h"
#include "dialects/dialects.h"

typedef enum eddy_core_op_kind {
#define EDDY_CORE_X(e, n) EDDY_CORE_OP_##e,
  EDDY_CORE_OP_LIST(EDDY_CORE_X)
#undef EDDY_CORE_X
      EDDY_CORE_OP_COUNT_,
} eddy_core_op_kind_t;

/// The table, indexed by eddy_core_op_kind_t.
extern const eddy_op_def_t eddy_core_op_defs[EDDY_CORE_OP_COUNT_];

/// Which core op a definition describes (from its opcode: the core opcodes
/// are numbered in the same order). EDDY_CORE_OP_COUNT_ when the definition
/// is not a core op.
eddy_core_op_kind_t eddy_core_op_kind(const eddy_op_def_t *def);

/// Folding gives up on results with more elements than this, so that
/// constants stay small in the IR.
#define EDDY_CORE_FOLD_MAX_ELEMENTS 65536

/// ---- Shape-function helpers (core_shape.c) ---------------------------------

/// dtype classes for eddy_core_check_dtype.
enum {
  EDDY_CORE_DT_FLOAT = 1u << 0,
  EDDY_CORE_DT_INT = 1u << 1,  ///< i8 i32 i64
  EDDY_CORE_DT_BOOL = 1u << 2, ///< i1
  EDDY_CORE_DT_NUMERIC = EDDY_CORE_DT_FLOAT | EDDY_CORE_DT_INT,
  EDDY_CORE_DT_ANY = EDDY_CORE_DT_NUMERIC | EDDY_CORE_DT_BOOL,
};

/// Checks the operand count against the definition and that every operand
/// is a tensor. Shape functions run before the generic verifier while an op
/// is built, so they cannot assume anything the verifier checks.
eddy_status_t eddy_core_check_operands(eddy_infer_ctx_t *ic);
/// Checks that operand i has a dtype in `classes`.
eddy_status_t eddy_core_check_dtype(eddy_infer_ctx_t *ic, size_t i,
                                    unsigned classes);
/// Checks that operands i and j have the same dtype.
eddy_status_t eddy_core_check_same_dtype(eddy_infer_ctx_t *ic, size_t i,
                                         size_t j);
/// Integer attribute; dflt when optional and absent.
eddy_status_t eddy_core_attr_int(eddy_infer_ctx_t *ic, const char *name,
                                 bool optional, int64_t dflt, int64_t *out);
/// Array-of-integers attribute (at most EDDY_CORE_MAX_RANK entries). When
/// optional and absent, *out_len is -1.
eddy_status_t eddy_core_attr_ints(eddy_infer_ctx_t *ic, const char *name,
                                  bool optional, int64_t *out,
                                  int32_t *out_len);
/// Optional bool attribute.
eddy_status_t eddy_core_attr_bool(eddy_infer_ctx_t *ic, const char *name,
                                  bool dflt, bool *out);
/// Error "WHAT AXIS is out of range for T".
eddy_status_t eddy_core_axis_error(const eddy_infer_ctx_t *ic, const char *what,
                                   int64_t axis, const eddy_type_t *t);
/// Writes "[1, 2, -1]" into buf (truncated to cap) and returns buf.
const char *eddy_core_ints_str(char *buf, size_t cap, const int64_t *v,
                               int32_t n);
/// Enough room for EDDY_CORE_MAX_RANK integers.
#define EDDY_CORE_INTS_CAP (EDDY_CORE_MAX_RANK * 22 + 4)
/// Pushes tensor<dims x dt>; dims may be NULL for rank 0 or unranked.
void eddy_core_push(eddy_infer_ctx_t *ic, eddy_dtype_t dt, int32_t rank,
                    const int64_t *dims);

/// ---- Shape functions -------------------------------------------------------

eddy_status_t eddy_core_infer_constant(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_unary_float(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_unary_numeric(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_binary_float(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_binary_numeric(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_compare(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_logical_binary(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_logical_not(eddy_infer_ctx_t *ic);
/// Integers only (i8, i32, i64): the bitwise ops and shifts.
eddy_status_t eddy_core_infer_unary_int(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_binary_int(eddy_infer_ctx_t *ic);
/// One operand of any dtype; the result has its type.
eddy_status_t eddy_core_infer_identity(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_select(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_cast(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_matmul(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_reduce(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_reshape(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_transpose(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_broadcast_to(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_concat(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_split(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_slice(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_gather(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_pad(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_shape(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_dim(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_range(eddy_infer_ctx_t *ic);
/// core_index.c: reverse, argmax/argmin, cumsum/cumprod, scatter, topk,
/// where.
eddy_status_t eddy_core_infer_reverse(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_arg(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_cumulative(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_scatter(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_topk(eddy_infer_ctx_t *ic);
eddy_status_t eddy_core_infer_where(eddy_infer_ctx_t *ic);
/// core_window.c: conv2d and its two gradients, the pools and theirs.
eddy_status_t eddy_core_infer_window(eddy_infer_ctx_t *ic);

/// ---- Verifiers -------------------------------------------------------------

eddy_status_t eddy_core_verify_iota(const eddy_op_t *op);
/// Result 0, when a tensor of this rank, must have a dynamic first dim
/// ("result must be tensor<?x...>: WHAT is known at run time only").
eddy_status_t eddy_core_verify_dynamic_dim0(const eddy_op_t *op,
                                            int32_t rank, const char *what);
eddy_status_t eddy_core_verify_range(const eddy_op_t *op);
eddy_status_t eddy_core_verify_where(const eddy_op_t *op);

/// ---- Fold helpers (core_fold.c) --------------------------------------------

/// A static tensor type whose dims multiply (zero dims counted as 1) to
/// something that fits int64, so strides and offsets cannot overflow.
/// Folders only read constants of such types.
bool eddy_core_shape_fits(const eddy_type_t *t);
/// The type of result i when folding may produce it: a static tensor of at
/// most EDDY_CORE_FOLD_MAX_ELEMENTS elements; else NULL. A dynamic declared
/// type is first refined with the shape function on the current operand
/// types.
const eddy_type_t *eddy_core_fold_result_type(const eddy_fold_ctx_t *fc,
                                              size_t i);
/// A dense constant of the float type rt from n computed doubles (n == 1: a
/// splat), rounded like the kernels: f16 and bf16 through f32. f is
/// overwritten with the rounded values. NULL on failure.
const eddy_attr_t *eddy_core_dense_from_f64(eddy_ctx_t *ctx,
                                            const eddy_type_t *rt, double *f,
                                            size_t n);
/// Replaces result 0 by v when v has exactly the result's type, so that no
/// broadcast or type change is hidden. True when it did.
bool eddy_core_fold_to(eddy_fold_ctx_t *fc, eddy_value_t *v);
/// Two's-complement wraparound of v to the width of an integer dtype (i1
/// keeps the low bit).
int64_t eddy_core_wrap(int64_t v, eddy_dtype_t dt);
/// Element i of a dense attribute (splats repeat element 0).
double eddy_core_elem_f64(const eddy_attr_t *a, int64_t i);
int64_t eddy_core_elem_i64(const eddy_attr_t *a, int64_t i);
/// Row-major strides (in elements) of a static shape.
void eddy_core_strides(const int64_t *dims, int32_t rank, int64_t *out);

/// Folding stops before more element operations than this (reductions
/// over big splat constants, big matmuls), so canonicalize stays fast.
#define EDDY_CORE_FOLD_MAX_WORK ((int64_t)1 << 22)

/// Walks the elements of a static shape in row-major order while keeping,
/// for up to 3 operands, the linear offset given by per-dim strides (a
/// stride of 0 repeats an element: broadcasting).
typedef struct eddy_core_iter {
  int32_t rank;
  int64_t dims[EDDY_CORE_MAX_RANK];
  int64_t idx[EDDY_CORE_MAX_RANK];
  int32_t num;
  int64_t strides[3][EDDY_CORE_MAX_RANK];
  int64_t off[3];
} eddy_core_iter_t;

void eddy_core_iter_init(eddy_core_iter_t *it, const int64_t *dims,
                         int32_t rank);
/// Adds an operand whose offset is base + sum(idx[j] * strides[j]);
/// returns its slot.
int32_t eddy_core_iter_add(eddy_core_iter_t *it, int64_t base,
                           const int64_t *strides);
/// Adds an operand of static shape `dims` (rank <= it->rank) read with numpy
/// broadcasting.
int32_t eddy_core_iter_add_broadcast(eddy_core_iter_t *it, const int64_t *dims,
                                     int32_t rank);
/// Steps to the next element.
void eddy_core_iter_next(eddy_core_iter_t *it);

/// A dense attribute of type rt whose element at result index idx is the
/// element of src at offset base + sum(idx[j] * strides[j]). NULL on out of
/// memory or a dtype mismatch.
const eddy_attr_t *eddy_core_fold_gather_elems(eddy_ctx_t *ctx,
                                               const eddy_type_t *rt,
                                               const eddy_attr_t *src,
                                               int64_t base,
                                               const int64_t *strides);
/// True when t is a ranked type with exactly these dims.
bool eddy_core_dims_equal(const eddy_type_t *t, const int64_t *dims,
                          int32_t rank);

/// ---- Folders ---------------------------------------------------------------

bool eddy_core_fold_unary(eddy_fold_ctx_t *fc);
bool eddy_core_fold_binary(eddy_fold_ctx_t *fc);
bool eddy_core_fold_select(eddy_fold_ctx_t *fc);
bool eddy_core_fold_cast(eddy_fold_ctx_t *fc);
bool eddy_core_fold_stop_gradient(eddy_fold_ctx_t *fc);
bool eddy_core_fold_matmul(eddy_fold_ctx_t *fc);
bool eddy_core_fold_reduce(eddy_fold_ctx_t *fc);
bool eddy_core_fold_reshape(eddy_fold_ctx_t *fc);
bool eddy_core_fold_transpose(eddy_fold_ctx_t *fc);
bool eddy_core_fold_broadcast_to(eddy_fold_ctx_t *fc);
bool eddy_core_fold_concat(eddy_fold_ctx_t *fc);
bool eddy_core_fold_split(eddy_fold_ctx_t *fc);
bool eddy_core_fold_slice(eddy_fold_ctx_t *fc);
bool eddy_core_fold_pad(eddy_fold_ctx_t *fc);
bool eddy_core_fold_shape(eddy_fold_ctx_t *fc);
bool eddy_core_fold_dim(eddy_fold_ctx_t *fc);
bool eddy_core_fold_reverse(eddy_fold_ctx_t *fc);
bool eddy_core_fold_arg(eddy_fold_ctx_t *fc);
bool eddy_core_fold_cumulative(eddy_fold_ctx_t *fc);
bool eddy_core_fold_gather(eddy_fold_ctx_t *fc);

#endif
