/// The core dialect's op table: tensor math as data. Shape functions live
/// in core_shape*.c, folders in core_fold*.c, semantics in
/// docs/dialects/core.md.
#include "dialects/core/core_internal.h"

#define PURE EDDY_TRAIT_PURE
#define ELEM EDDY_TRAIT_ELEMENTWISE
#define BCAST EDDY_TRAIT_BROADCAST
#define COMM EDDY_TRAIT_COMMUTATIVE

static const eddy_attr_spec_t attrs_constant[] = {
    {"value", EDDY_ATTR_DENSE, false}, {NULL, 0, false}};
static const eddy_attr_spec_t attrs_iota[] = {
    {"dimension", EDDY_ATTR_INT, false}, {NULL, 0, false}};
static const eddy_attr_spec_t attrs_cast[] = {
    {"dtype", EDDY_ATTR_STRING, false}, {NULL, 0, false}};
static const eddy_attr_spec_t attrs_matmul[] = {
    {"transpose_a", EDDY_ATTR_BOOL, true},
    {"transpose_b", EDDY_ATTR_BOOL, true},
    {NULL, 0, false}};
static const eddy_attr_spec_t attrs_reduce[] = {
    {"axes", EDDY_ATTR_ARRAY, false},
    {"keepdims", EDDY_ATTR_BOOL, true},
    {NULL, 0, false}};
static const eddy_attr_spec_t attrs_shape[] = {
    {"shape", EDDY_ATTR_ARRAY, false}, {NULL, 0, false}};
static const eddy_attr_spec_t attrs_perm[] = {{"perm", EDDY_ATTR_ARRAY, false},
                                              {NULL, 0, false}};
static const eddy_attr_spec_t attrs_axis[] = {{"axis", EDDY_ATTR_INT, false},
                                              {NULL, 0, false}};
static const eddy_attr_spec_t attrs_split[] = {
    {"axis", EDDY_ATTR_INT, false},
    {"num_splits", EDDY_ATTR_INT, false},
    {NULL, 0, false}};
static const eddy_attr_spec_t attrs_slice[] = {
    {"limit", EDDY_ATTR_ARRAY, false},
    {"start", EDDY_ATTR_ARRAY, false},
    {"strides", EDDY_ATTR_ARRAY, true},
    {NULL, 0, false}};
static const eddy_attr_spec_t attrs_pad[] = {{"high", EDDY_ATTR_ARRAY, false},
                                             {"low", EDDY_ATTR_ARRAY, false},
                                             {NULL, 0, false}};
static const eddy_attr_spec_t attrs_dim[] = {{"index", EDDY_ATTR_INT, false},
                                             {NULL, 0, false}};
static const eddy_attr_spec_t attrs_axes[] = {{"axes", EDDY_ATTR_ARRAY, false},
                                              {NULL, 0, false}};
static const eddy_attr_spec_t attrs_arg[] = {
    {"axis", EDDY_ATTR_INT, false},
    {"dtype", EDDY_ATTR_STRING, false},
    {NULL, 0, false}};
static const eddy_attr_spec_t attrs_cumulative[] = {
    {"axis", EDDY_ATTR_INT, false},
    {"exclusive", EDDY_ATTR_BOOL, true},
    {"reverse", EDDY_ATTR_BOOL, true},
    {NULL, 0, false}};
static const eddy_attr_spec_t attrs_topk[] = {{"k", EDDY_ATTR_INT, false},
                                              {NULL, 0, false}};
static const eddy_attr_spec_t attrs_scatter[] = {
    {"axis", EDDY_ATTR_INT, false},
    {"size", EDDY_ATTR_INT, false},
    {NULL, 0, false}};

static const eddy_attr_spec_t attrs_conv[] = {
    {"dilations", EDDY_ATTR_ARRAY, true},
    {"pads", EDDY_ATTR_ARRAY, true},
    {"strides", EDDY_ATTR_ARRAY, true},
    {NULL, 0, false}};
static const eddy_attr_spec_t attrs_conv_input_grad[] = {
    {"dilations", EDDY_ATTR_ARRAY, true},
    {"input_size", EDDY_ATTR_ARRAY, false},
    {"pads", EDDY_ATTR_ARRAY, true},
    {"strides", EDDY_ATTR_ARRAY, true},
    {NULL, 0, false}};
static const eddy_attr_spec_t attrs_conv_filter_grad[] = {
    {"dilations", EDDY_ATTR_ARRAY, true},
    {"filter_size", EDDY_ATTR_ARRAY, false},
    {"pads", EDDY_ATTR_ARRAY, true},
    {"strides", EDDY_ATTR_ARRAY, true},
    {NULL, 0, false}};
static const eddy_attr_spec_t attrs_pool[] = {
    {"pads", EDDY_ATTR_ARRAY, true},
    {"strides", EDDY_ATTR_ARRAY, true},
    {"window", EDDY_ATTR_ARRAY, false},
    {NULL, 0, false}};
static const eddy_attr_spec_t attrs_pool_grad[] = {
    {"input_size", EDDY_ATTR_ARRAY, false},
    {"pads", EDDY_ATTR_ARRAY, true},
    {"strides", EDDY_ATTR_ARRAY, true},
    {"window", EDDY_ATTR_ARRAY, false},
    {NULL, 0, false}};

/// One operand count / one result, no regions.
#define OP(e, nm, nops, tr, at, ver, inf, fld)                                 \
  [EDDY_CORE_OP_##e] = {                                                       \
      .name = "core." nm,                                                      \
      .num_operands = (nops),                                                  \
      .min_operands = 0,                                                       \
      .num_results = 1,                                                        \
      .num_regions = 0,                                                        \
      .traits = (tr),                                                          \
      .attrs = (at),                                                           \
      .verify = (ver),                                                         \
      .infer = (inf),                                                          \
      .fold = (fld),                                                           \
      .opcode = EDDY_OP_CORE_##e,                                              \
  }
#define UNARY_F(e, nm)                                                         \
  OP(e, nm, 1, PURE | ELEM, NULL, NULL, eddy_core_infer_unary_float,           \
     eddy_core_fold_unary)
#define UNARY_N(e, nm)                                                         \
  OP(e, nm, 1, PURE | ELEM, NULL, NULL, eddy_core_infer_unary_numeric,         \
     eddy_core_fold_unary)
#define BINARY(e, nm, tr, inf)                                                 \
  OP(e, nm, 2, PURE | ELEM | BCAST | (tr), NULL, NULL, inf,                    \
     eddy_core_fold_binary)
#define REDUCE(e, nm)                                                          \
  OP(e, nm, 1, PURE, attrs_reduce, NULL, eddy_core_infer_reduce,               \
     eddy_core_fold_reduce)

const eddy_op_def_t eddy_core_op_defs[EDDY_CORE_OP_COUNT_] = {
    OP(CONSTANT, "constant", 0, PURE | EDDY_TRAIT_CONSTANT, attrs_constant,
       NULL, eddy_core_infer_constant, NULL),
    /* iota's result type cannot come from operands: it is given. */
    OP(IOTA, "iota", 0, PURE, attrs_iota, eddy_core_verify_iota, NULL, NULL),
    UNARY_N(NEG, "neg"),
    UNARY_N(ABS, "abs"),
    UNARY_F(EXP, "exp"),
    UNARY_F(LOG, "log"),
    UNARY_F(LOG1P, "log1p"),
    UNARY_F(TANH, "tanh"),
    UNARY_F(SIGMOID, "sigmoid"),
    UNARY_N(RELU, "relu"),
    UNARY_F(SQRT, "sqrt"),
    UNARY_F(RSQRT, "rsqrt"),
    UNARY_N(SQUARE, "square"),
    UNARY_F(FLOOR, "floor"),
    UNARY_N(SIGN, "sign"),
    UNARY_F(SIN, "sin"),
    UNARY_F(COS, "cos"),
    UNARY_F(TAN, "tan"),
    UNARY_F(ASIN, "asin"),
    UNARY_F(ACOS, "acos"),
    UNARY_F(ATAN, "atan"),
    UNARY_F(SINH, "sinh"),
    UNARY_F(COSH, "cosh"),
    UNARY_F(ERF, "erf"),
    UNARY_F(EXPM1, "expm1"),
    UNARY_F(CEIL, "ceil"),
    UNARY_F(ROUND, "round"),
    /* The identity; autodiff gives it a zero derivative (TensorFlow's
       StopGradient). */
    OP(STOP_GRADIENT, "stop_gradient", 1, PURE | ELEM, NULL, NULL,
       eddy_core_infer_identity, eddy_core_fold_stop_gradient),
    BINARY(ADD, "add", COMM, eddy_core_infer_binary_numeric),
    BINARY(SUB, "sub", 0, eddy_core_infer_binary_numeric),
    BINARY(MUL, "mul", COMM, eddy_core_infer_binary_numeric),
    BINARY(DIV, "div", 0, eddy_core_infer_binary_numeric),
    BINARY(POW, "pow", 0, eddy_core_infer_binary_float),
    BINARY(MAXIMUM, "maximum", COMM, eddy_core_infer_binary_numeric),
    BINARY(MINIMUM, "minimum", COMM, eddy_core_infer_binary_numeric),
    BINARY(ATAN2, "atan2", 0, eddy_core_infer_binary_float),
    BINARY(REM, "rem", 0, eddy_core_infer_binary_numeric),
    BINARY(EQ, "eq", COMM, eddy_core_infer_compare),
    BINARY(NE, "ne", COMM, eddy_core_infer_compare),
    BINARY(LT, "lt", 0, eddy_core_infer_compare),
    BINARY(LE, "le", 0, eddy_core_infer_compare),
    BINARY(GT, "gt", 0, eddy_core_infer_compare),
    BINARY(GE, "ge", 0, eddy_core_infer_compare),
    BINARY(AND, "and", COMM, eddy_core_infer_logical_binary),
    BINARY(OR, "or", COMM, eddy_core_infer_logical_binary),
    OP(NOT, "not", 1, PURE | ELEM, NULL, NULL, eddy_core_infer_logical_not,
       eddy_core_fold_unary),
    /* Bitwise ops of integers, two's complement; shifts clamp the count to
       [0, bits - 1] (TensorFlow's LeftShift and RightShift), and
       shift_right is arithmetic. */
    BINARY(BITAND, "bitand", COMM, eddy_core_infer_binary_int),
    BINARY(BITOR, "bitor", COMM, eddy_core_infer_binary_int),
    BINARY(BITXOR, "bitxor", COMM, eddy_core_infer_binary_int),
    OP(BITNOT, "bitnot", 1, PURE | ELEM, NULL, NULL, eddy_core_infer_unary_int,
       eddy_core_fold_unary),
    BINARY(SHIFT_LEFT, "shift_left", 0, eddy_core_infer_binary_int),
    BINARY(SHIFT_RIGHT, "shift_right", 0, eddy_core_infer_binary_int),
    OP(SELECT, "select", 3, PURE | ELEM | BCAST, NULL, NULL,
       eddy_core_infer_select, eddy_core_fold_select),
    OP(CAST, "cast", 1, PURE | ELEM, attrs_cast, NULL, eddy_core_infer_cast,
       eddy_core_fold_cast),
    OP(MATMUL, "matmul", 2, PURE, attrs_matmul, NULL, eddy_core_infer_matmul,
       eddy_core_fold_matmul),
    REDUCE(REDUCE_SUM, "reduce_sum"),
    REDUCE(REDUCE_MEAN, "reduce_mean"),
    REDUCE(REDUCE_MAX, "reduce_max"),
    REDUCE(REDUCE_MIN, "reduce_min"),
    REDUCE(REDUCE_PROD, "reduce_prod"),
    [EDDY_CORE_OP_RESHAPE] =
        {
            .name = "core.reshape",
            .num_operands = EDDY_VARIADIC, // x, then one i32/i64 scalar per
            .min_operands = 1,             // -1 of `shape` (or none)
            .num_results = 1,
            .traits = PURE,
            .attrs = attrs_shape,
            .infer = eddy_core_infer_reshape,
            .fold = eddy_core_fold_reshape,
            .opcode = EDDY_OP_CORE_RESHAPE,
        },
    OP(TRANSPOSE, "transpose", 1, PURE, attrs_perm, NULL,
       eddy_core_infer_transpose, eddy_core_fold_transpose),
    OP(BROADCAST_TO, "broadcast_to", 1, PURE, attrs_shape, NULL,
       eddy_core_infer_broadcast_to, eddy_core_fold_broadcast_to),
    [EDDY_CORE_OP_CONCAT] =
        {
            .name = "core.concat",
            .num_operands = EDDY_VARIADIC,
            .min_operands = 1,
            .num_results = 1,
            .traits = PURE,
            .attrs = attrs_axis,
            .infer = eddy_core_infer_concat,
            .fold = eddy_core_fold_concat,
            .opcode = EDDY_OP_CORE_CONCAT,
        },
    [EDDY_CORE_OP_SPLIT] =
        {
            .name = "core.split",
            .num_operands = 1,
            .num_results = EDDY_VARIADIC,
            .traits = PURE,
            .attrs = attrs_split,
            .infer = eddy_core_infer_split,
            .fold = eddy_core_fold_split,
            .opcode = EDDY_OP_CORE_SPLIT,
        },
    OP(SLICE, "slice", 1, PURE, attrs_slice, NULL, eddy_core_infer_slice,
       eddy_core_fold_slice),
    OP(GATHER, "gather", 2, PURE, attrs_axis, NULL, eddy_core_infer_gather,
       eddy_core_fold_gather),
    OP(PAD, "pad", 2, PURE, attrs_pad, NULL, eddy_core_infer_pad,
       eddy_core_fold_pad),
    OP(SHAPE, "shape", 1, PURE, NULL, NULL, eddy_core_infer_shape,
       eddy_core_fold_shape),
    OP(DIM, "dim", 1, PURE, attrs_dim, NULL, eddy_core_infer_dim,
       eddy_core_fold_dim),
    /* Its length is known at run time only: no folder (legalize-tf makes
       a constant of a range of constants). */
    OP(RANGE, "range", 3, PURE, NULL, eddy_core_verify_range,
       eddy_core_infer_range, NULL),
    OP(REVERSE, "reverse", 1, PURE, attrs_axes, NULL, eddy_core_infer_reverse,
       eddy_core_fold_reverse),
    OP(ARGMAX, "argmax", 1, PURE, attrs_arg, NULL, eddy_core_infer_arg,
       eddy_core_fold_arg),
    OP(ARGMIN, "argmin", 1, PURE, attrs_arg, NULL, eddy_core_infer_arg,
       eddy_core_fold_arg),
    OP(CUMSUM, "cumsum", 1, PURE, attrs_cumulative, NULL,
       eddy_core_infer_cumulative, eddy_core_fold_cumulative),
    OP(CUMPROD, "cumprod", 1, PURE, attrs_cumulative, NULL,
       eddy_core_infer_cumulative, eddy_core_fold_cumulative),
    [EDDY_CORE_OP_SCATTER] =
        {
            .name = "core.scatter",
            .num_operands = EDDY_VARIADIC, // indices, updates, then the
            .min_operands = 2,             // size when `size` is -1
            .num_results = 1,
            .traits = PURE,
            .attrs = attrs_scatter,
            .infer = eddy_core_infer_scatter,
            .fold = NULL,
            .opcode = EDDY_OP_CORE_SCATTER,
        },
    [EDDY_CORE_OP_TOPK] =
        {
            .name = "core.topk",
            .num_operands = 1,
            .num_results = 2,
            .traits = PURE,
            .attrs = attrs_topk,
            .infer = eddy_core_infer_topk,
            .fold = NULL,
            .opcode = EDDY_OP_CORE_TOPK,
        },
    /* Its row count is the run-time operand n: no folder. */
    OP(WHERE, "where", 2, PURE, NULL, eddy_core_verify_where,
       eddy_core_infer_where, NULL),
    /* Sliding windows over NHWC tensors (core_window.c); no folders: the
       constants they would make are large and rare. */
    OP(CONV2D, "conv2d", 2, PURE, attrs_conv, NULL, eddy_core_infer_window,
       NULL),
    OP(CONV2D_INPUT_GRAD, "conv2d_input_grad", 2, PURE, attrs_conv_input_grad,
       NULL, eddy_core_infer_window, NULL),
    OP(CONV2D_FILTER_GRAD, "conv2d_filter_grad", 2, PURE,
       attrs_conv_filter_grad, NULL, eddy_core_infer_window, NULL),
    [EDDY_CORE_OP_MAX_POOL] =
        {
            .name = "core.max_pool",
            .num_operands = EDDY_VARIADIC, // x, and optionally g: the
            .min_operands = 1,             // elements of g at x's maxima
            .num_results = 1,
            .traits = PURE,
            .attrs = attrs_pool,
            .infer = eddy_core_infer_window,
            .opcode = EDDY_OP_CORE_MAX_POOL,
        },
    OP(AVG_POOL, "avg_pool", 1, PURE, attrs_pool, NULL, eddy_core_infer_window,
       NULL),
    OP(MAX_POOL_GRAD, "max_pool_grad", 2, PURE, attrs_pool, NULL,
       eddy_core_infer_window, NULL),
    OP(AVG_POOL_GRAD, "avg_pool_grad", 1, PURE, attrs_pool_grad, NULL,
       eddy_core_infer_window, NULL),
};

const eddy_dialect_t eddy_core_dialect = {
    .name = "core",
    .ops = eddy_core_op_defs,
    .num_ops = EDDY_CORE_OP_COUNT_,
    .allow_unknown_ops = false,
};

/* Both number the core ops in the order of EDDY_CORE_OP_LIST. */
_Static_assert(EDDY_OP_CORE_AVG_POOL_GRAD - EDDY_OP_CORE_CONSTANT ==
                   EDDY_CORE_OP_AVG_POOL_GRAD,
               "core opcodes and table indices differ");

eddy_core_op_kind_t eddy_core_op_kind(const eddy_op_def_t *def) {
  int k = (int)def->opcode - (int)EDDY_OP_CORE_CONSTANT;
  return k >= 0 && k < EDDY_CORE_OP_COUNT_ ? (eddy_core_op_kind_t)k
                                           : EDDY_CORE_OP_COUNT_;
}
