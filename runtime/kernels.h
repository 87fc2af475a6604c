/// libeddyrt host kernels: one per core and tl op, for every dtype the op
/// accepts. The evaluator and the dataflow interpreter call these.
///
/// The contract, shared by every kernel (docs/runtime.md has the details):
/// - Inputs are borrowed, validated descriptors with any strides; they are
///   never written.
/// - Outputs are written to `out_` parameters that the caller provides and
///   that hold no reference on entry (they are overwritten). On success each
///   is a contiguous row-major tensor owned by the caller (release it with
///   eddy_rt_tensor_release); it may share an input's buffer when the data
///   is the same (reshape). On error every output is eddy_rt_tensor_empty()
///   and nothing leaks.
/// - Errors name the op ("core.matmul: ..."), and say what was expected and
///   what was given. Sizes are checked for overflow and against the context's
///   memory limit.
/// - Results do not depend on the number of threads of the context.
/// - Negative axes count from the end.
#ifndef EDDY_RUNTIME_KERNELS_H
#define EDDY_RUNTIME_KERNELS_H

#include "runtime/eddyrt.h"

#ifdef __cplusplus
extern "C" {
#endif

/// ---- Op enumerations ------------------------------------------------------

/// core unary elementwise ops. neg abs relu square sign: f16 bf16 f32 f64
/// i8 i32 i64; the others (floor included): f16 bf16 f32 f64.
typedef enum eddy_rt_unary_op {
  EDDY_RT_UNARY_NEG,
  EDDY_RT_UNARY_ABS,
  EDDY_RT_UNARY_EXP,
  EDDY_RT_UNARY_LOG,
  EDDY_RT_UNARY_LOG1P,
  EDDY_RT_UNARY_TANH,
  EDDY_RT_UNARY_SIGMOID,
  EDDY_RT_UNARY_RELU,
  EDDY_RT_UNARY_SQRT,
  EDDY_RT_UNARY_RSQRT,
  EDDY_RT_UNARY_SQUARE,
  EDDY_RT_UNARY_FLOOR,
  EDDY_RT_UNARY_SIGN,
  EDDY_RT_UNARY_SIN,
  EDDY_RT_UNARY_COS,
  EDDY_RT_UNARY_TAN,
  EDDY_RT_UNARY_ASIN,
  EDDY_RT_UNARY_ACOS,
  EDDY_RT_UNARY_ATAN,
  EDDY_RT_UNARY_SINH,
  EDDY_RT_UNARY_COSH,
  EDDY_RT_UNARY_ERF,
  EDDY_RT_UNARY_EXPM1,
  EDDY_RT_UNARY_CEIL,
  EDDY_RT_UNARY_ROUND,
  EDDY_RT_UNARY_BITNOT, ///< integers only
  EDDY_RT_UNARY_COUNT_,
} eddy_rt_unary_op_t;

/// core binary arithmetic with numpy broadcasting, both operands of one
/// dtype: f16 bf16 f32 f64 i8 i32 i64 (pow and atan2: floats only).
typedef enum eddy_rt_binary_op {
  EDDY_RT_BINARY_ADD,
  EDDY_RT_BINARY_SUB,
  EDDY_RT_BINARY_MUL,
  EDDY_RT_BINARY_DIV,
  EDDY_RT_BINARY_POW,
  EDDY_RT_BINARY_MAXIMUM,
  EDDY_RT_BINARY_MINIMUM,
  EDDY_RT_BINARY_ATAN2,
  EDDY_RT_BINARY_REM,
  EDDY_RT_BINARY_BITAND, ///< the bitwise ops and shifts: integers only
  EDDY_RT_BINARY_BITOR,
  EDDY_RT_BINARY_BITXOR,
  EDDY_RT_BINARY_SHIFT_LEFT,
  EDDY_RT_BINARY_SHIFT_RIGHT,
  EDDY_RT_BINARY_COUNT_,
} eddy_rt_binary_op_t;

/// core comparisons: every dtype, result i1.
typedef enum eddy_rt_compare_op {
  EDDY_RT_COMPARE_EQ,
  EDDY_RT_COMPARE_NE,
  EDDY_RT_COMPARE_LT,
  EDDY_RT_COMPARE_LE,
  EDDY_RT_COMPARE_GT,
  EDDY_RT_COMPARE_GE,
  EDDY_RT_COMPARE_COUNT_,
} eddy_rt_compare_op_t;

/// core.and / core.or on i1 (core.not is eddy_rt_logical_not).
typedef enum eddy_rt_logical_op {
  EDDY_RT_LOGICAL_AND,
  EDDY_RT_LOGICAL_OR,
  EDDY_RT_LOGICAL_COUNT_,
} eddy_rt_logical_op_t;

/// core reductions; f16 bf16 f32 f64 i8 i32 i64.
typedef enum eddy_rt_reduce_op {
  EDDY_RT_REDUCE_SUM,
  EDDY_RT_REDUCE_MEAN,
  EDDY_RT_REDUCE_MAX,
  EDDY_RT_REDUCE_MIN,
  EDDY_RT_REDUCE_PROD,
  EDDY_RT_REDUCE_COUNT_,
} eddy_rt_reduce_op_t;

/// The op's full name ("core.neg"), or "?" when out of range.
const char *eddy_rt_unary_op_name(eddy_rt_unary_op_t op);
const char *eddy_rt_binary_op_name(eddy_rt_binary_op_t op);
const char *eddy_rt_compare_op_name(eddy_rt_compare_op_t op);
const char *eddy_rt_logical_op_name(eddy_rt_logical_op_t op);
const char *eddy_rt_reduce_op_name(eddy_rt_reduce_op_t op);
/// Looks an op up by its full name ("core.exp"); false when it is not one of
/// that family. out_op may be NULL.
bool eddy_rt_unary_op_lookup(const char *name, eddy_rt_unary_op_t *out_op);
bool eddy_rt_binary_op_lookup(const char *name, eddy_rt_binary_op_t *out_op);
bool eddy_rt_compare_op_lookup(const char *name, eddy_rt_compare_op_t *out_op);
bool eddy_rt_logical_op_lookup(const char *name, eddy_rt_logical_op_t *out_op);
bool eddy_rt_reduce_op_lookup(const char *name, eddy_rt_reduce_op_t *out_op);

/// ---- Creation and elementwise ----------------------------------------------

/// A contiguous owned copy of x (core.constant materialization, and making a
/// borrowed or strided tensor owned and contiguous).
eddy_rt_status_t eddy_rt_copy(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
                              eddy_rt_tensor_t *out_t);
/// core.iota: out[i0, .., ir-1] = i_dimension, converted to dtype like
/// eddy_rt_cast. Any dtype; rank >= 1.
eddy_rt_status_t eddy_rt_iota(eddy_rt_ctx_t *ctx, int32_t dtype, int32_t rank,
                              const int64_t *dims, int64_t dimension,
                              eddy_rt_tensor_t *out_t);
/// core.range: the 1-D tensor start, start + delta, ... of the scalars'
/// dtype, up to limit (excluded); element i is start + i * delta, computed
/// in double (floats) or int64 (integers). Its length is ceil((limit -
/// start) / delta); delta 0, or a delta pointing away from limit, is an
/// error (as TensorFlow's Range).
eddy_rt_status_t eddy_rt_range(eddy_rt_ctx_t *ctx,
                               const eddy_rt_tensor_t *start,
                               const eddy_rt_tensor_t *limit,
                               const eddy_rt_tensor_t *delta,
                               eddy_rt_tensor_t *out_t);
eddy_rt_status_t eddy_rt_unary(eddy_rt_ctx_t *ctx, eddy_rt_unary_op_t op,
                               const eddy_rt_tensor_t *x,
                               eddy_rt_tensor_t *out_t);
eddy_rt_status_t eddy_rt_binary(eddy_rt_ctx_t *ctx, eddy_rt_binary_op_t op,
                                const eddy_rt_tensor_t *a,
                                const eddy_rt_tensor_t *b,
                                eddy_rt_tensor_t *out_t);
eddy_rt_status_t eddy_rt_compare(eddy_rt_ctx_t *ctx, eddy_rt_compare_op_t op,
                                 const eddy_rt_tensor_t *a,
                                 const eddy_rt_tensor_t *b,
                                 eddy_rt_tensor_t *out_t);
eddy_rt_status_t eddy_rt_logical(eddy_rt_ctx_t *ctx, eddy_rt_logical_op_t op,
                                 const eddy_rt_tensor_t *a,
                                 const eddy_rt_tensor_t *b,
                                 eddy_rt_tensor_t *out_t);
eddy_rt_status_t eddy_rt_logical_not(eddy_rt_ctx_t *ctx,
                                     const eddy_rt_tensor_t *x,
                                     eddy_rt_tensor_t *out_t);
/// core.select: cond (i1) ? a : b, the three broadcast together; a and b of
/// one dtype (any).
eddy_rt_status_t eddy_rt_select(eddy_rt_ctx_t *ctx,
                                const eddy_rt_tensor_t *cond,
                                const eddy_rt_tensor_t *a,
                                const eddy_rt_tensor_t *b,
                                eddy_rt_tensor_t *out_t);
/// core.cast to dtype: any to any (rules in docs/runtime.md).
eddy_rt_status_t eddy_rt_cast(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
                              int32_t dtype, eddy_rt_tensor_t *out_t);

/// ---- Linear algebra and reductions -----------------------------------------

/// core.matmul: a [..., M, K] (or [..., K, M] with transpose_a) times b
/// [..., K, N] (or [..., N, K] with transpose_b), ranks >= 2, batch dims
/// broadcast; f16 bf16 f32 f64 i8 i32 i64.
eddy_rt_status_t eddy_rt_matmul(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *a,
                                const eddy_rt_tensor_t *b, bool transpose_a,
                                bool transpose_b, eddy_rt_tensor_t *out_t);
/// Reduces x over axes[0..naxes) (distinct, negative from the end); axes ==
/// NULL reduces every axis; naxes == 0 with axes != NULL reduces none (a
/// copy). keepdims keeps reduced axes as size 1.
eddy_rt_status_t eddy_rt_reduce(eddy_rt_ctx_t *ctx, eddy_rt_reduce_op_t op,
                                const eddy_rt_tensor_t *x, const int64_t *axes,
                                int32_t naxes, bool keepdims,
                                eddy_rt_tensor_t *out_t);

/// ---- Shape manipulation (any dtype) ------------------------------------------

/// core.reshape: shape[0..n) with at most one -1 (inferred).
eddy_rt_status_t eddy_rt_reshape(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
                                 const int64_t *shape, int32_t n,
                                 eddy_rt_tensor_t *out_t);
/// core.transpose: out.dims[i] = x.dims[perm[i]]; n == rank.
eddy_rt_status_t eddy_rt_transpose(eddy_rt_ctx_t *ctx,
                                   const eddy_rt_tensor_t *x,
                                   const int64_t *perm, int32_t n,
                                   eddy_rt_tensor_t *out_t);
/// core.broadcast_to with numpy's rules.
eddy_rt_status_t eddy_rt_broadcast_to(eddy_rt_ctx_t *ctx,
                                      const eddy_rt_tensor_t *x,
                                      const int64_t *shape, int32_t n,
                                      eddy_rt_tensor_t *out_t);
/// core.concat of xs[0..n) (n >= 1, same dtype and rank >= 1, dims equal
/// except at axis).
eddy_rt_status_t eddy_rt_concat(eddy_rt_ctx_t *ctx,
                                const eddy_rt_tensor_t *const *xs, int32_t n,
                                int64_t axis, eddy_rt_tensor_t *out_t);
/// core.split into num_splits equal parts along axis (the dim must divide);
/// writes out_ts[0..num_splits).
eddy_rt_status_t eddy_rt_split(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
                               int64_t axis, int32_t num_splits,
                               eddy_rt_tensor_t *out_ts);
/// core.slice: per dim d, the indices start[d], start[d] + s, ... below
/// limit[d], with s = strides[d] >= 1 (strides NULL: all 1) and
/// 0 <= start <= limit <= dim. n == rank.
eddy_rt_status_t eddy_rt_slice(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
                               const int64_t *start, const int64_t *limit,
                               const int64_t *strides, int32_t n,
                               eddy_rt_tensor_t *out_t);
/// core.gather: out = params.dims[:axis] + indices.dims +
/// params.dims[axis+1:]; indices i32 or i64, each in [0, params.dims[axis]),
/// otherwise an error naming the index.
eddy_rt_status_t eddy_rt_gather(eddy_rt_ctx_t *ctx,
                                const eddy_rt_tensor_t *params,
                                const eddy_rt_tensor_t *indices, int64_t axis,
                                eddy_rt_tensor_t *out_t);
/// core.pad: low[d] / high[d] >= 0 elements of value (a scalar of x's
/// dtype) before / after each dim; n == rank.
eddy_rt_status_t eddy_rt_pad(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
                             const eddy_rt_tensor_t *value,
                             const int64_t *low, const int64_t *high,
                             int32_t n, eddy_rt_tensor_t *out_t);
/// core.shape: a [rank] i64 tensor of x's dims.
eddy_rt_status_t eddy_rt_shape(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
                               eddy_rt_tensor_t *out_t);
/// core.dim: an i64 scalar holding x.dims[index] (negative from the end).
eddy_rt_status_t eddy_rt_dim(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
                             int64_t index, eddy_rt_tensor_t *out_t);

/// ---- Ops along an axis (k_index.c) -------------------------------------------

/// core.reverse: x with the order of elements along each of axes[0..n)
/// (distinct, negative from the end) reversed; any dtype.
eddy_rt_status_t eddy_rt_reverse(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
                                 const int64_t *axes, int32_t n,
                                 eddy_rt_tensor_t *out_t);
/// core.argmax (is_max) / core.argmin: the index along axis of the largest
/// (smallest) element, the first one of equals; a NaN counts as the extreme
/// (the first NaN wins). The dim must not be empty. dtype: i32 or i64.
eddy_rt_status_t eddy_rt_arg(eddy_rt_ctx_t *ctx, bool is_max,
                             const eddy_rt_tensor_t *x, int64_t axis,
                             int32_t dtype, eddy_rt_tensor_t *out_t);
/// core.cumprod (is_prod) / core.cumsum along axis: element k is the sum
/// (product) of the elements before k (exclusive) or up to k, counting from
/// the end when reverse. Numeric dtypes.
eddy_rt_status_t eddy_rt_cumulative(eddy_rt_ctx_t *ctx, bool is_prod,
                                    const eddy_rt_tensor_t *x, int64_t axis,
                                    bool exclusive, bool reverse,
                                    eddy_rt_tensor_t *out_t);
/// core.scatter: updates is pre + indices.dims + post (pre: the first axis
/// dims); the result pre + [size] + post, zeros plus each update added at
/// [pre, indices[j], post], in row-major order of the updates (floats
/// rounded to the dtype after each add). An index outside [0, size) is an
/// error naming it. Numeric dtypes; indices i8, i32 or i64.
/// core.topk: the k largest elements along the last dim, largest first,
/// equal ones by lower index first (a NaN counts as the largest), into
/// out_ts[0] (x's dtype) and their indices into out_ts[1] (i32). The last
/// dim must hold at least k elements.
eddy_rt_status_t eddy_rt_topk(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
                              int64_t k, eddy_rt_tensor_t *out_ts);
eddy_rt_status_t eddy_rt_scatter(eddy_rt_ctx_t *ctx,
                                 const eddy_rt_tensor_t *indices,
                                 const eddy_rt_tensor_t *updates, int64_t axis,
                                 int64_t size, eddy_rt_tensor_t *out_t);
/// core.where: the coordinates of the nonzero elements of x (true, or !=
/// 0: NaN counts, -0.0 does not), in row-major order, as an i64 tensor
/// [n, rank(x)]. n (an integer scalar) must be their number.
eddy_rt_status_t eddy_rt_where(eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
                               const eddy_rt_tensor_t *n,
                               eddy_rt_tensor_t *out_t);

/// ---- Sliding windows over NHWC tensors (k_window.c) -------------------------

/// The ops of eddy_rt_window, named after their core ops.
typedef enum eddy_rt_window_op {
  EDDY_RT_CONV2D,
  EDDY_RT_CONV2D_INPUT_GRAD,
  EDDY_RT_CONV2D_FILTER_GRAD,
  EDDY_RT_MAX_POOL,
  EDDY_RT_AVG_POOL,
  EDDY_RT_MAX_POOL_GRAD,
  EDDY_RT_AVG_POOL_GRAD,
} eddy_rt_window_op_t;

/// A window over the two spatial dims: taps per dim (for conv2d and its
/// input gradient the filter's, which the kernel reads from it), strides,
/// dilations and pads (top, bottom, left, right); see
/// eddy_scalar_window_out.
typedef struct eddy_rt_window {
  int64_t size[2];
  int64_t strides[2];
  int64_t dilations[2];
  int64_t pads[4];
} eddy_rt_window_t;

/// The sliding-window op `kind` (semantics in docs/dialects/core.md) of a
/// (and b for the two-operand ops, else NULL), float rank-4 tensors of one
/// dtype: conv2d(x, filter), conv2d_input_grad(dy, filter),
/// conv2d_filter_grad(x, dy) (w->size: the filter's [KH, KW]),
/// max_pool(x) or max_pool(x, g) (g's elements at x's maxima),
/// avg_pool(x), max_pool_grad(x, dy), avg_pool_grad(dy).
/// input_size ([H, W]) is read by the input-gradient ops only. Every
/// element is accumulated in f64 in tap order and rounded once.
eddy_rt_status_t eddy_rt_window(eddy_rt_ctx_t *ctx, eddy_rt_window_op_t kind,
                                const eddy_rt_tensor_t *a,
                                const eddy_rt_tensor_t *b,
                                const eddy_rt_window_t *w,
                                const int64_t *input_size,
                                eddy_rt_tensor_t *out_t);

/// ---- TensorList ops (tl dialect) ---------------------------------------------
/// Element shapes follow TensorFlow's lists: an item must match the known
/// parts of the element shape; see docs/runtime.md. Indices and lengths
/// (tensor arguments) are integer scalars (i8, i32 or i64).

/// tl.empty: a list of length 0. max_elements < 0: unbounded.
eddy_rt_status_t eddy_rt_list_empty(eddy_rt_ctx_t *ctx, int32_t dtype,
                                    const eddy_rt_elem_shape_t *elem_shape,
                                    int64_t max_elements,
                                    eddy_rt_list_t **out_list);
/// tl.reserve: a list of length n whose items are unset (they read as zeros
/// of the element shape when it is fully known; otherwise reading one is an
/// error).
eddy_rt_status_t eddy_rt_list_reserve(eddy_rt_ctx_t *ctx, int32_t dtype,
                                      const eddy_rt_elem_shape_t *elem_shape,
                                      const eddy_rt_tensor_t *n,
                                      eddy_rt_list_t **out_list);
/// tl.push_back. Consumes owned_list (even on error).
eddy_rt_status_t eddy_rt_list_push_back(eddy_rt_ctx_t *ctx,
                                        eddy_rt_list_t *owned_list,
                                        const eddy_rt_tensor_t *x,
                                        eddy_rt_list_t **out_list);
/// tl.pop_back. Consumes owned_list (even on error). Popping an empty list
/// is an error.
eddy_rt_status_t eddy_rt_list_pop_back(eddy_rt_ctx_t *ctx,
                                       eddy_rt_list_t *owned_list,
                                       eddy_rt_list_t **out_list,
                                       eddy_rt_tensor_t *out_t);
/// tl.get_item; index out of [0, length) is an error.
eddy_rt_status_t eddy_rt_list_get_item(eddy_rt_ctx_t *ctx,
                                       const eddy_rt_list_t *list,
                                       const eddy_rt_tensor_t *index,
                                       eddy_rt_tensor_t *out_t);
/// tl.set_item. Consumes owned_list (even on error).
eddy_rt_status_t eddy_rt_list_set_item(eddy_rt_ctx_t *ctx,
                                       eddy_rt_list_t *owned_list,
                                       const eddy_rt_tensor_t *index,
                                       const eddy_rt_tensor_t *x,
                                       eddy_rt_list_t **out_list);
/// tl.resize: the list cut to, or padded with unset items to, length n (a
/// scalar integer >= 0). Any nesting depth. Consumes owned_list (even on
/// error).
eddy_rt_status_t eddy_rt_list_resize(eddy_rt_ctx_t *ctx,
                                     eddy_rt_list_t *owned_list,
                                     const eddy_rt_tensor_t *n,
                                     eddy_rt_list_t **out_list);
/// tl.scatter: item indices[k] becomes x[k] (the slices of x along axis 0,
/// one per index; a later index of a repeated one wins); the list grows to
/// max(indices) + 1 when shorter. Consumes owned_list (even on error).
eddy_rt_status_t eddy_rt_list_scatter(eddy_rt_ctx_t *ctx,
                                      eddy_rt_list_t *owned_list,
                                      const eddy_rt_tensor_t *indices,
                                      const eddy_rt_tensor_t *x,
                                      eddy_rt_list_t **out_list);
/// tl.add: the item-wise sum of two lists of one length, depth and dtype
/// (TensorFlow's AddN of TensorLists): an item set in one list only is that
/// item (shared, not copied), an item set in both is their sum (of one
/// shape; in lists of lists, the item lists' tl.add), an item set in
/// neither stays unset. Consumes owned_list (even on error); other is
/// borrowed and may be owned_list itself.
eddy_rt_status_t eddy_rt_list_add(eddy_rt_ctx_t *ctx,
                                  eddy_rt_list_t *owned_list,
                                  const eddy_rt_list_t *other,
                                  eddy_rt_list_t **out_list);
/// tl.zeros_like: a new list of list's length, depth, dtype and element
/// shape whose item i is zeros of item i's shape (an item list: its
/// zeros_like), or unset where list's is (TensorFlow's ZerosLike of a
/// TensorList). list is borrowed.
eddy_rt_status_t eddy_rt_list_zeros_like(eddy_rt_ctx_t *ctx,
                                         const eddy_rt_list_t *list,
                                         eddy_rt_list_t **out_list);
/// tl.concat: the items (rank >= 1, equal in every dim but the first)
/// joined along axis 0, and their first dims (an i64 vector). Unset items
/// read as zeros of the element shape when it is fully known; an empty
/// list needs its element shape known but for the first dim.
eddy_rt_status_t eddy_rt_list_concat(eddy_rt_ctx_t *ctx,
                                     const eddy_rt_list_t *list,
                                     eddy_rt_tensor_t *out_t,
                                     eddy_rt_tensor_t *out_lengths);
/// tl.split: the list of the consecutive slices of x along axis 0 with
/// the given lengths (a 1-D integer tensor of values >= 0 summing to
/// x's first dim); elem_shape (may be NULL) is the list's element shape,
/// which every slice must match.
eddy_rt_status_t eddy_rt_list_split(eddy_rt_ctx_t *ctx,
                                    const eddy_rt_tensor_t *x,
                                    const eddy_rt_tensor_t *lengths,
                                    const eddy_rt_elem_shape_t *elem_shape,
                                    eddy_rt_list_t **out_list);
/// tl.length: an i64 scalar.
eddy_rt_status_t eddy_rt_list_length(eddy_rt_ctx_t *ctx,
                                     const eddy_rt_list_t *list,
                                     eddy_rt_tensor_t *out_t);
/// tl.stack: [length, ...element shape]. Items must all have one shape; an
/// empty list needs a fully known element shape.
eddy_rt_status_t eddy_rt_list_stack(eddy_rt_ctx_t *ctx,
                                    const eddy_rt_list_t *list,
                                    eddy_rt_tensor_t *out_t);
/// tl.from_tensor: items x[0], x[1], ... (sharing x's buffer when x is
/// owned). x has rank >= 1. elem_shape NULL: x.dims[1:]; otherwise x.dims[1:]
/// must match it and it becomes the list's element shape.
eddy_rt_status_t eddy_rt_list_from_tensor(
    eddy_rt_ctx_t *ctx, const eddy_rt_tensor_t *x,
    const eddy_rt_elem_shape_t *elem_shape, eddy_rt_list_t **out_list);

/// Item i of a list as it is stored, for serializers (the interpreter's
/// messages between ranks): 0 when i is out of range or the item was never
/// set, 1 a tensor (*out_t shares its buffer), 2 a list (*out_item, a new
/// reference).
int eddy_rt_list_peek(const eddy_rt_list_t *list, int64_t i,
                      eddy_rt_tensor_t *out_t, eddy_rt_list_t **out_item);

/// ---- Lists of lists ------------------------------------------------------------
/// A list of depth d > 0 (eddy_rt_list_depth) holds lists of depth d - 1 of
/// the same dtype and a compatible element shape. The tensor forms above
/// reject it ("the list holds lists"), tl.stack included; the forms below
/// reject a list of tensors. tl.length works on both. Items are shared by
/// reference (a pushed list is retained, not copied; copy-on-write keeps the
/// values immutable).

/// tl.empty / tl.reserve of a list of the given depth (0: same as the
/// tensor forms). Unset items of a nested list read as new empty lists.
eddy_rt_status_t eddy_rt_list_empty_nested(
    eddy_rt_ctx_t *ctx, int32_t depth, int32_t dtype,
    const eddy_rt_elem_shape_t *elem_shape, int64_t max_elements,
    eddy_rt_list_t **out_list);
eddy_rt_status_t eddy_rt_list_reserve_nested(
    eddy_rt_ctx_t *ctx, int32_t depth, int32_t dtype,
    const eddy_rt_elem_shape_t *elem_shape, const eddy_rt_tensor_t *n,
    eddy_rt_list_t **out_list);
/// tl.push_back of the list x (borrowed: the list takes its own reference).
/// Consumes owned_list (even on error).
eddy_rt_status_t eddy_rt_list_push_back_list(eddy_rt_ctx_t *ctx,
                                             eddy_rt_list_t *owned_list,
                                             eddy_rt_list_t *x,
                                             eddy_rt_list_t **out_list);
/// tl.pop_back; *out_item is a new reference. Consumes owned_list.
eddy_rt_status_t eddy_rt_list_pop_back_list(eddy_rt_ctx_t *ctx,
                                            eddy_rt_list_t *owned_list,
                                            eddy_rt_list_t **out_list,
                                            eddy_rt_list_t **out_item);
/// tl.get_item; *out_item is a new reference.
eddy_rt_status_t eddy_rt_list_get_item_list(eddy_rt_ctx_t *ctx,
                                            const eddy_rt_list_t *list,
                                            const eddy_rt_tensor_t *index,
                                            eddy_rt_list_t **out_item);
/// tl.set_item of the list x (borrowed). Consumes owned_list.
eddy_rt_status_t eddy_rt_list_set_item_list(eddy_rt_ctx_t *ctx,
                                            eddy_rt_list_t *owned_list,
                                            const eddy_rt_tensor_t *index,
                                            eddy_rt_list_t *x,
                                            eddy_rt_list_t **out_list);

#ifdef __cplusplus
}
#endif
#endif
