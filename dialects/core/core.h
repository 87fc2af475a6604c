/// Public helpers of the core dialect (tensor math): its op list, numpy
/// broadcasting and axis normalization, shared by the shape functions,
/// lowerings and autodiff. The op table itself is `eddy_core_dialect` in
/// dialects/dialects.h.
#ifndef EDDY_DIALECTS_CORE_CORE_H
#define EDDY_DIALECTS_CORE_CORE_H

#include "ir/ir.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Every core op, in table order: X(ENUM_SUFFIX, "name without core."). It
/// numbers the table (eddy_core_op_kind_t) and the core ops' opcodes
/// (eddy_opcode_t in dialects/dialects.h).
#define EDDY_CORE_OP_LIST(X)                                                   \
  X(CONSTANT, "constant")                                                      \
  X(IOTA, "iota")                                                              \
  X(NEG, "neg")                                                                \
  X(ABS, "abs")                                                                \
  X(EXP, "exp")                                                                \
  X(LOG, "log")                                                                \
  X(LOG1P, "log1p")                                                            \
  X(TANH, "tanh")                                                              \
  X(SIGMOID, "sigmoid")                                                        \
  X(RELU, "relu")                                                              \
  X(SQRT, "sqrt")                                                              \
  X(RSQRT, "rsqrt")                                                            \
  X(SQUARE, "square")                                                          \
  X(FLOOR, "floor")                                                            \
  X(SIGN, "sign")                                                              \
  X(SIN, "sin")                                                                \
  X(COS, "cos")                                                                \
  X(TAN, "tan")                                                                \
  X(ASIN, "asin")                                                              \
  X(ACOS, "acos")                                                              \
  X(ATAN, "atan")                                                              \
  X(SINH, "sinh")                                                              \
  X(COSH, "cosh")                                                              \
  X(ERF, "erf")                                                                \
  X(EXPM1, "expm1")                                                            \
  X(CEIL, "ceil")                                                              \
  X(ROUND, "round")                                                            \
  X(STOP_GRADIENT, "stop_gradient")                                            \
  X(ADD, "add")                                                                \
  X(SUB, "sub")                                                                \
  X(MUL, "mul")                                                                \
  X(DIV, "div")                                                                \
  X(POW, "pow")                                                                \
  X(MAXIMUM, "maximum")                                                        \
  X(MINIMUM, "minimum")                                                        \
  X(ATAN2, "atan2")                                                            \
  X(REM, "rem")                                                                \
  X(EQ, "eq")                                                                  \
  X(NE, "ne")                                                                  \
  X(LT, "lt")                                                                  \
  X(LE, "le")                                                                  \
  X(GT, "gt")                                                                  \
  X(GE, "ge")                                                                  \
  X(AND, "and")                                                                \
  X(OR, "or")                                                                  \
  X(NOT, "not")                                                                \
  X(BITAND, "bitand")                                                          \
  X(BITOR, "bitor")                                                            \
  X(BITXOR, "bitxor")                                                          \
  X(BITNOT, "bitnot")                                                          \
  X(SHIFT_LEFT, "shift_left")                                                  \
  X(SHIFT_RIGHT, "shift_right")                                                \
  X(SELECT, "select")                                                          \
  X(CAST, "cast")                                                              \
  X(MATMUL, "matmul")                                                          \
  X(REDUCE_SUM, "reduce_sum")                                                  \
  X(REDUCE_MEAN, "reduce_mean")                                                \
  X(REDUCE_MAX, "reduce_max")                                                  \
  X(REDUCE_MIN, "reduce_min")                                                  \
  X(REDUCE_PROD, "reduce_prod")                                                \
  X(RESHAPE, "reshape")                                                        \
  X(TRANSPOSE, "transpose")                                                    \
  X(BROADCAST_TO, "broadcast_to")                                              \
  X(CONCAT, "concat")                                                          \
  X(SPLIT, "split")                                                            \
  X(SLICE, "slice")                                                            \
  X(GATHER, "gather")                                                          \
  X(PAD, "pad")                                                                \
  X(SHAPE, "shape")                                                            \
  X(DIM, "dim")                                                                \
  X(RANGE, "range")                                                            \
  X(REVERSE, "reverse")                                                        \
  X(ARGMAX, "argmax")                                                          \
  X(ARGMIN, "argmin")                                                          \
  X(CUMSUM, "cumsum")                                                          \
  X(CUMPROD, "cumprod")                                                        \
  X(SCATTER, "scatter")                                                        \
  X(TOPK, "topk")                                                              \
  X(WHERE, "where")                                                            \
  X(CONV2D, "conv2d")                                                          \
  X(CONV2D_INPUT_GRAD, "conv2d_input_grad")                                    \
  X(CONV2D_FILTER_GRAD, "conv2d_filter_grad")                                  \
  X(MAX_POOL, "max_pool")                                                      \
  X(AVG_POOL, "avg_pool")                                                      \
  X(MAX_POOL_GRAD, "max_pool_grad")                                            \
  X(AVG_POOL_GRAD, "avg_pool_grad")

/// Largest rank the core shape functions and folders accept; higher ranks
/// are reported as errors.
#define EDDY_CORE_MAX_RANK 64

/// Numpy broadcasting of two ranked shapes (dims may be EDDY_DIM_DYNAMIC).
/// Shapes are aligned at the right; per dim: equal dims stay, a 1 takes the
/// other dim (so 1 vs dynamic is dynamic), dynamic vs n > 1 is n, dynamic vs
/// dynamic is dynamic. Writes max(rank_a, rank_b) dims to out (which may
/// alias neither input). Returns false when two static dims differ and
/// neither is 1.
bool eddy_core_broadcast_dims(const int64_t *a, int32_t rank_a,
                              const int64_t *b, int32_t rank_b, int64_t *out);

/// The broadcast of two tensor types, with dtype dt: unranked when either is
/// unranked. NULL when either is not a tensor, a rank exceeds
/// EDDY_CORE_MAX_RANK, or the shapes are incompatible.
const eddy_type_t *eddy_core_broadcast_type(eddy_ctx_t *ctx,
                                            const eddy_type_t *a,
                                            const eddy_type_t *b,
                                            eddy_dtype_t dt);

/// Maps an axis in [-rank, rank) to [0, rank) (negative axes count from the
/// end). Returns false when it is out of range.
bool eddy_core_normalize_axis(int64_t axis, int64_t rank, int64_t *out);

/// The sliding window of a conv2d-family or pool op (NHWC operands): taps
/// per spatial dim (the filter's for the conv2d ops, the `window` attribute
/// for the pools), strides, dilations (1 for the pools) and pads (top,
/// bottom, left, right).
typedef struct eddy_core_window {
  int64_t size[2];
  int64_t strides[2];
  int64_t dilations[2];
  int64_t pads[4];
} eddy_core_window_t;

/// Reads the window of a verified conv2d, conv2d_input_grad,
/// conv2d_filter_grad, max_pool, avg_pool, max_pool_grad or avg_pool_grad
/// op. False when op is none of them.
bool eddy_core_window_get(const eddy_op_t *op, eddy_core_window_t *out);

/// The attributes that give the window w to a new op named `name` ("core."
/// conv2d ops: dilations; pools: window), plus size_name = size ([2]) when
/// size_name is not NULL; writes at most 5 to out, returns how many.
size_t eddy_core_window_attrs(eddy_ctx_t *ctx, const char *name,
                              const eddy_core_window_t *w,
                              const char *size_name, const int64_t *size,
                              eddy_named_attr_t *out);

#ifdef __cplusplus
}
#endif
#endif
