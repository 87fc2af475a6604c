/// The importer's table of TensorFlow ops: for each op it can import, its
/// output arguments (names, as TensorFlow's OpDef calls them, because
/// FunctionDef inputs refer to "node:output_arg:index") and how each gets
/// its type. An op missing here is reported as unsupported by the import.
#include "dialects/tf/tf_internal.h"

#include <stdlib.h>
#include <string.h>

#define DT(x) TENSORFLOW__DATA_TYPE__DT_##x

#define O_ATTR(n, a, like) {n, EDDY_TF_OUT_ATTR, a, 0, NULL, like}
#define O_REPEAT(n, a, num) {n, EDDY_TF_OUT_ATTR, a, 0, num, -1}
#define O_FIXED(n, dt, like) {n, EDDY_TF_OUT_FIXED, NULL, DT(dt), NULL, like}
#define O_LIST(n, a, like) {n, EDDY_TF_OUT_LIST, a, 0, NULL, like}
#define O_TYPES(n, a, like) {n, EDDY_TF_OUT_TYPES, a, 0, NULL, like}
#define O_LIKE(n, like) {n, EDDY_TF_OUT_LIKE, NULL, 0, NULL, like}

/// Output signatures shared by several ops. "_like0": the result has the
/// shape of input 0 (elementwise on one input, or identity-like).
static const eddy_tf_out_spec_t y_T_like0[] = {O_ATTR("y", "T", 0)};
static const eddy_tf_out_spec_t z_T[] = {O_ATTR("z", "T", -1)};
static const eddy_tf_out_spec_t z_T_like0[] = {O_ATTR("z", "T", 0)};
static const eddy_tf_out_spec_t z_bool[] = {O_FIXED("z", BOOL, -1)};
static const eddy_tf_out_spec_t y_bool_like0[] = {O_FIXED("y", BOOL, 0)};
static const eddy_tf_out_spec_t output_T[] = {O_ATTR("output", "T", -1)};
static const eddy_tf_out_spec_t output_T_like0[] = {O_ATTR("output", "T", 0)};
static const eddy_tf_out_spec_t output_T_like1[] = {O_ATTR("output", "T", 1)};
static const eddy_tf_out_spec_t output_dtype[] = {
    O_ATTR("output", "dtype", -1)};
static const eddy_tf_out_spec_t output_dtype_like0[] = {
    O_ATTR("output", "dtype", 0)};
static const eddy_tf_out_spec_t output_out_type[] = {
    O_ATTR("output", "out_type", -1)};
static const eddy_tf_out_spec_t output_bool_like0[] = {
    O_FIXED("output", BOOL, 0)};
static const eddy_tf_out_spec_t output_i32[] = {O_FIXED("output", INT32, -1)};
/// The stateless random ops' key and counter: TensorFlow's uint64 words,
/// held in i64 (the same bits; nothing but these ops reads them).
static const eddy_tf_out_spec_t key_counter[] = {O_FIXED("key", INT64, -1),
                                                 O_FIXED("counter", INT64, -1)};
static const eddy_tf_out_spec_t key_counter_alg[] = {
    O_FIXED("key", INT64, -1), O_FIXED("counter", INT64, -1),
    O_FIXED("alg", INT32, -1)};
static const eddy_tf_out_spec_t alg_i32[] = {O_FIXED("alg", INT32, -1)};
static const eddy_tf_out_spec_t ctc_greedy_outs[] = {
    O_FIXED("decoded_indices", INT64, -1), O_FIXED("decoded_values", INT64, -1),
    O_FIXED("decoded_shape", INT64, -1), O_ATTR("log_probability", "T", -1)};
static const eddy_tf_out_spec_t dense_T[] = {O_ATTR("dense", "T", -1)};
static const eddy_tf_out_spec_t result_T[] = {O_ATTR("result", "T", -1)};
static const eddy_tf_out_spec_t y_T[] = {O_ATTR("y", "T", -1)};
static const eddy_tf_out_spec_t y_DstT_like0[] = {O_ATTR("y", "DstT", 0)};
static const eddy_tf_out_spec_t sum_T_like0[] = {O_ATTR("sum", "T", 0)};
static const eddy_tf_out_spec_t product_T[] = {O_ATTR("product", "T", -1)};
static const eddy_tf_out_spec_t activations_T_like0[] = {
    O_ATTR("activations", "T", 0)};
static const eddy_tf_out_spec_t backprops_T_like0[] = {
    O_ATTR("backprops", "T", 0)};
static const eddy_tf_out_spec_t softmax_T_like0[] = {
    O_ATTR("softmax", "T", 0)};
static const eddy_tf_out_spec_t logsoftmax_T_like0[] = {
    O_ATTR("logsoftmax", "T", 0)};
static const eddy_tf_out_spec_t bcast_args[] = {O_ATTR("r0", "T", -1),
                                                O_ATTR("r1", "T", -1)};
static const eddy_tf_out_spec_t output_Tidx[] = {
    O_ATTR("output", "Tidx", -1)};
static const eddy_tf_out_spec_t output_Tparams[] = {
    O_ATTR("output", "Tparams", -1)};
static const eddy_tf_out_spec_t split_outs[] = {
    O_REPEAT("output", "T", "num_split")};
static const eddy_tf_out_spec_t unpack_outs[] = {
    O_REPEAT("output", "T", "num")};
static const eddy_tf_out_spec_t identity_n[] = {O_TYPES("output", "T", 0)};
static const eddy_tf_out_spec_t output_bool[] = {O_FIXED("output", BOOL, -1)};
static const eddy_tf_out_spec_t output_output_type[] = {
    O_ATTR("output", "output_type", -1)};
static const eddy_tf_out_spec_t r0_T[] = {O_ATTR("r0", "T", -1)};
static const eddy_tf_out_spec_t concat_offsets[] = {
    O_REPEAT("offset", "shape_type", "N")};
static const eddy_tf_out_spec_t shape_n_outs[] = {
    O_REPEAT("output", "out_type", "N")};
static const eddy_tf_out_spec_t merged_T[] = {O_ATTR("merged", "T", -1)};
static const eddy_tf_out_spec_t out_T_like0[] = {O_ATTR("out", "T", 0)};
static const eddy_tf_out_spec_t index_i64[] = {O_FIXED("index", INT64, -1)};
static const eddy_tf_out_spec_t output_i32_like0[] = {
    O_FIXED("output", INT32, 0)};
static const eddy_tf_out_spec_t list_diff_outs[] = {
    O_ATTR("out", "T", -1), O_ATTR("idx", "out_idx", -1)};
static const eddy_tf_out_spec_t topk_outs[] = {
    O_ATTR("values", "T", -1), O_ATTR("indices", "index_type", -1)};
static const eddy_tf_out_spec_t xent_outs[] = {O_ATTR("loss", "T", -1),
                                               O_ATTR("backprop", "T", -1)};
static const eddy_tf_out_spec_t band_T_like0[] = {O_ATTR("band", "T", 0)};
static const eddy_tf_out_spec_t output_Tout[] = {
    O_ATTR("output", "Tout", -1)};
static const eddy_tf_out_spec_t diagonal_T[] = {O_ATTR("diagonal", "T", -1)};
static const eddy_tf_out_spec_t slogdet_outs[] = {
    O_ATTR("sign", "T", -1), O_ATTR("log_abs_determinant", "T", -1)};
static const eddy_tf_out_spec_t resized_f32[] = {
    O_FIXED("resized_images", FLOAT, -1)};
static const eddy_tf_out_spec_t precision_bool[] = {
    O_FIXED("precision", BOOL, -1)};
static const eddy_tf_out_spec_t fq_outputs[] = {O_FIXED("outputs", FLOAT, 0)};
static const eddy_tf_out_spec_t fq_backprops[] = {
    O_FIXED("backprops", FLOAT, 0)};
static const eddy_tf_out_spec_t fq_vars_grad[] = {
    O_FIXED("backprops_wrt_input", FLOAT, 0),
    O_FIXED("backprop_wrt_min", FLOAT, -1),
    O_FIXED("backprop_wrt_max", FLOAT, -1)};
static const eddy_tf_out_spec_t crops_f32[] = {O_FIXED("crops", FLOAT, -1)};
static const eddy_tf_out_spec_t output_f32[] = {O_FIXED("output", FLOAT, -1)};
static const eddy_tf_out_spec_t partition_outs[] = {
    O_REPEAT("outputs", "T", "num_partitions")};
static const eddy_tf_out_spec_t out_dtype[] = {O_ATTR("out", "dtype", -1)};
static const eddy_tf_out_spec_t unique_outs[] = {O_ATTR("y", "T", -1),
                                                 O_ATTR("idx", "out_idx", 0)};
static const eddy_tf_out_spec_t unique_count_outs[] = {
    O_ATTR("y", "T", -1), O_ATTR("idx", "out_idx", 0),
    O_ATTR("count", "out_idx", -1)};
static const eddy_tf_out_spec_t resized_T[] = {
    O_ATTR("resized_images", "T", -1)};

/// v1 control flow: values pass through with their type.
static const eddy_tf_out_spec_t switch_outs[] = {
    O_ATTR("output_false", "T", 0), O_ATTR("output_true", "T", 0)};
/// Merge's output type is computed by the importer from all its inputs
/// (the back edge included), so no `like` here.
/// _SwitchN (a lowered Case: freezing inlines a function and lowers its
/// Case) forwards its data to output `output_index`, num_outs of them.
static const eddy_tf_out_spec_t switch_n_outs[] = {
    {"outputs", EDDY_TF_OUT_ATTR, "T", 0, "num_outs", 0}};
static const eddy_tf_out_spec_t merge_outs[] = {
    O_ATTR("output", "T", -1), O_FIXED("value_index", INT32, -1)};

/// Functional control flow and calls: While's outputs are its loop values;
/// the others take their types from the called functions' results.
static const eddy_tf_out_spec_t while_outs[] = {O_TYPES("output", "T", 0)};
static const eddy_tf_out_spec_t call_outs[] = {O_TYPES("output", "Tout", -1)};

/// TensorLists: the handle is typed as the list it holds.
static const eddy_tf_out_spec_t tl_new[] = {
    O_LIST("handle", "element_dtype", -1)};
static const eddy_tf_out_spec_t tl_update[] = {
    O_LIST("output_handle", "element_dtype", 0)};
static const eddy_tf_out_spec_t tl_update_batch[] = {
    O_LIST("output_handles", "element_dtype", 0)};
static const eddy_tf_out_spec_t tl_from_tensor[] = {
    O_LIST("output_handle", "element_dtype", -1)};
static const eddy_tf_out_spec_t tl_pop_back[] = {
    O_LIST("output_handle", "element_dtype", 0),
    O_ATTR("tensor", "element_dtype", -1)};
static const eddy_tf_out_spec_t tl_get_item[] = {
    O_ATTR("item", "element_dtype", -1)};
static const eddy_tf_out_spec_t tl_stack[] = {
    O_ATTR("tensor", "element_dtype", -1)};
static const eddy_tf_out_spec_t tl_length[] = {O_FIXED("length", INT32, -1)};
static const eddy_tf_out_spec_t tl_same[] = {O_LIKE("output_handle", 0)};
static const eddy_tf_out_spec_t tl_concat[] = {
    O_ATTR("tensor", "element_dtype", -1), O_FIXED("lengths", INT64, -1)};
static const eddy_tf_out_spec_t tl_gather[] = {
    O_ATTR("values", "element_dtype", -1)};
static const eddy_tf_out_spec_t tl_element_shape[] = {
    O_ATTR("element_shape", "shape_type", -1)};

/// Optionals (a cond in a while_loop accumulates them for its gradient):
/// typed as a list of at most one element by the importer (tf_variant.c).
static const eddy_tf_out_spec_t opt_new[] = {
    O_FIXED("optional", VARIANT, -1)};
static const eddy_tf_out_spec_t opt_get[] = {
    O_TYPES("components", "output_types", -1)};
static const eddy_tf_out_spec_t opt_has[] = {
    O_FIXED("has_value", BOOL, -1)};

/// v1 stacks and TensorArrays (v1 gradients and map_fn/scan/foldl): their
/// resource handles are typed as the list they hold.
static const eddy_tf_out_spec_t stack_new[] = {
    O_LIST("handle", "elem_type", -1)};
static const eddy_tf_out_spec_t stack_pop[] = {
    O_ATTR("elem", "elem_type", -1)};
static const eddy_tf_out_spec_t ta_new[] = {O_LIST("handle", "dtype", -1),
                                            O_FIXED("flow", FLOAT, -1)};
static const eddy_tf_out_spec_t ta_grad[] = {O_LIKE("grad_handle", 0),
                                             O_FIXED("flow_out", FLOAT, -1)};
static const eddy_tf_out_spec_t ta_flow[] = {O_FIXED("flow_out", FLOAT, -1)};
static const eddy_tf_out_spec_t ta_value[] = {O_ATTR("value", "dtype", -1)};
static const eddy_tf_out_spec_t ta_size[] = {O_FIXED("size", INT32, -1)};
static const eddy_tf_out_spec_t ta_concat[] = {O_ATTR("value", "dtype", -1),
                                               O_FIXED("lengths", INT64, -1)};

/// Data inputs, as TensorFlow's OpDef counts them: exactly n, or at least n.
#define IN(n) {n, n}
#define IN_ATLEAST(n) {n, -1}
#define OP(name, in, outs)                                                     \
  {#name, outs, sizeof(outs) / sizeof(outs[0]), EDDY_TF_CALL_NONE, in}
#define OP_CALL(name, in, outs, call)                                          \
  {#name, outs, sizeof(outs) / sizeof(outs[0]), call, in}
#define OP_NONE(name, in) {#name, NULL, 0, EDDY_TF_CALL_NONE, in}

/// Sorted by name (strcmp order; a unit test checks it).
static const eddy_tf_op_info_t k_ops[] = {
    OP(Abs, IN(1), y_T_like0),
    OP(Acos, IN(1), y_T_like0),
    OP(Add, IN(2), z_T),
    OP(AddN, IN_ATLEAST(1), sum_T_like0),
    OP(AddV2, IN(2), z_T),
    OP(All, IN(2), output_bool),
    OP(Any, IN(2), output_bool),
    OP(ArgMax, IN(2), output_output_type),
    OP(ArgMin, IN(2), output_output_type),
    OP(Asin, IN(1), y_T_like0),
    OP_NONE(Assert, IN_ATLEAST(1)),
    OP(Atan, IN(1), y_T_like0),
    OP(Atan2, IN(2), z_T),
    OP(AvgPool, IN(1), output_T),
    OP(AvgPool3D, IN(1), output_T),
    OP(AvgPool3DGrad, IN(2), output_T),
    OP(AvgPoolGrad, IN(2), output_T),
    OP(BatchMatMulV2, IN(2), output_T),
    OP(BatchMatMulV3, IN(2), output_Tout),
    OP(BatchToSpaceND, IN(3), output_T),
    OP(BesselI0, IN(1), y_T_like0),
    OP(BesselI0e, IN(1), y_T_like0),
    OP(BesselI1, IN(1), y_T_like0),
    OP(BesselI1e, IN(1), y_T_like0),
    OP(Betainc, IN(3), z_T),
    OP(BiasAdd, IN(2), output_T_like0),
    OP(BiasAddGrad, IN(1), output_T),
    OP(BiasAddV1, IN(2), output_T_like0),
    OP(BitwiseAnd, IN(2), z_T),
    OP(BitwiseOr, IN(2), z_T),
    OP(BitwiseXor, IN(2), z_T),
    OP(BroadcastArgs, IN(2), r0_T),
    OP(BroadcastGradientArgs, IN(2), bcast_args),
    OP(BroadcastTo, IN(2), output_T),
    OP(Bucketize, IN(1), output_i32_like0),
    OP(CTCGreedyDecoder, IN(2), ctc_greedy_outs),
    OP_CALL(Case, IN_ATLEAST(1), call_outs, EDDY_TF_CALL_BRANCH),
    OP(Cast, IN(1), y_DstT_like0),
    OP(Ceil, IN(1), y_T_like0),
    OP(Cholesky, IN(1), output_T_like0),
    OP(ClipByValue, IN(3), output_T_like0),
    OP(ConcatOffset, IN_ATLEAST(3), concat_offsets),
    OP(ConcatV2, IN_ATLEAST(3), output_T),
    OP(Const, IN(0), output_dtype),
    OP_NONE(ControlTrigger, IN(0)),
    OP(Conv2D, IN(2), output_T),
    OP(Conv2DBackpropFilter, IN(3), output_T),
    OP(Conv2DBackpropInput, IN(3), output_T),
    OP(Conv3D, IN(2), output_T),
    OP(Conv3DBackpropFilterV2, IN(3), output_T),
    OP(Conv3DBackpropInputV2, IN(3), output_T),
    OP(Cos, IN(1), y_T_like0),
    OP(Cosh, IN(1), y_T_like0),
    OP(CropAndResize, IN(4), crops_f32),
    OP(CropAndResizeGradBoxes, IN(4), output_f32),
    OP(CropAndResizeGradImage, IN(4), output_T),
    OP(Cumprod, IN(2), out_T_like0),
    OP(Cumsum, IN(2), out_T_like0),
    OP(CumulativeLogsumexp, IN(2), out_T_like0),
    OP(DenseBincount, IN(3), output_T),
    OP(DepthToSpace, IN(1), output_T),
    OP(DepthwiseConv2dNative, IN(2), output_T),
    OP(DepthwiseConv2dNativeBackpropFilter, IN(3), output_T),
    OP(DepthwiseConv2dNativeBackpropInput, IN(3), output_T),
    OP(Digamma, IN(1), y_T_like0),
    OP(Div, IN(2), z_T),
    OP(DivNoNan, IN(2), z_T),
    OP(DynamicPartition, IN(2), partition_outs),
    OP(DynamicStitch, IN_ATLEAST(2), merged_T),
    OP(Einsum, IN_ATLEAST(1), output_T),
    OP(Elu, IN(1), activations_T_like0),
    OP(EluGrad, IN(2), backprops_T_like0),
    OP(Empty, IN(1), output_dtype),
    OP(EmptyTensorList, IN(2), tl_new),
    OP(Enter, IN(1), output_T_like0),
    OP(Equal, IN(2), z_bool),
    OP(Erf, IN(1), y_T_like0),
    OP(Erfc, IN(1), y_T_like0),
    OP(Erfinv, IN(1), y_T_like0),
    OP(EuclideanNorm, IN(2), output_T),
    OP(Exit, IN(1), output_T_like0),
    OP(Exp, IN(1), y_T_like0),
    OP(ExpandDims, IN(2), output_T),
    OP(Expm1, IN(1), y_T_like0),
    OP(FakeQuantWithMinMaxArgs, IN(1), fq_outputs),
    OP(FakeQuantWithMinMaxArgsGradient, IN(2), fq_backprops),
    OP(FakeQuantWithMinMaxVars, IN(3), fq_outputs),
    OP(FakeQuantWithMinMaxVarsGradient, IN(4), fq_vars_grad),
    OP(Fill, IN(2), output_T),
    OP(Floor, IN(1), y_T_like0),
    OP(FloorDiv, IN(2), z_T),
    OP(FloorMod, IN(2), z_T),
    OP(GatherNd, IN(2), output_Tparams),
    OP(GatherV2, IN(3), output_Tparams),
    OP(Greater, IN(2), z_bool),
    OP(GreaterEqual, IN(2), z_bool),
    OP(HistogramFixedWidth, IN(3), out_dtype),
    OP(Identity, IN(1), output_T_like0),
    OP(IdentityN, IN_ATLEAST(1), identity_n),
    OP_CALL(If, IN_ATLEAST(1), call_outs, EDDY_TF_CALL_BRANCH),
    OP(Igamma, IN(2), z_T),
    OP(Igammac, IN(2), z_T),
    OP(InTopKV2, IN(3), precision_bool),
    OP(Inv, IN(1), y_T_like0),
    OP(InvGrad, IN(2), z_T_like0),
    OP(Invert, IN(1), y_T_like0),
    OP(InvertPermutation, IN(1), y_T_like0),
    OP(IsFinite, IN(1), y_bool_like0),
    OP(IsInf, IN(1), y_bool_like0),
    OP(IsNan, IN(1), y_bool_like0),
    OP(L2Loss, IN(1), output_T),
    OP(LRN, IN(1), output_T),
    OP(LRNGrad, IN(3), output_T),
    OP(LeakyRelu, IN(1), activations_T_like0),
    OP(LeakyReluGrad, IN(2), backprops_T_like0),
    OP(LeftShift, IN(2), z_T),
    OP(Less, IN(2), z_bool),
    OP(LessEqual, IN(2), z_bool),
    OP(Lgamma, IN(1), y_T_like0),
    OP(ListDiff, IN(2), list_diff_outs),
    OP(Log, IN(1), y_T_like0),
    OP(Log1p, IN(1), y_T_like0),
    OP(LogMatrixDeterminant, IN(1), slogdet_outs),
    OP(LogSoftmax, IN(1), logsoftmax_T_like0),
    OP(LogicalAnd, IN(2), z_bool),
    OP(LogicalNot, IN(1), y_bool_like0),
    OP(LogicalOr, IN(2), z_bool),
    OP(LoopCond, IN(1), output_bool_like0),
    OP(LowerBound, IN(2), output_out_type),
    OP(MatMul, IN(2), product_T),
    OP(MatrixBandPart, IN(3), band_T_like0),
    OP(MatrixDeterminant, IN(1), output_T),
    OP(MatrixDiag, IN(1), output_T),
    OP(MatrixDiagPart, IN(1), diagonal_T),
    OP(MatrixDiagPartV2, IN(3), diagonal_T),
    OP(MatrixDiagPartV3, IN(3), diagonal_T),
    OP(MatrixDiagV2, IN(5), output_T),
    OP(MatrixDiagV3, IN(5), output_T),
    OP(MatrixInverse, IN(1), output_T_like0),
    OP(MatrixSetDiag, IN(2), output_T),
    OP(MatrixSetDiagV2, IN(3), output_T),
    OP(MatrixSetDiagV3, IN(3), output_T),
    OP(MatrixSolve, IN(2), output_T_like1),
    OP(MatrixTriangularSolve, IN(2), output_T),
    OP(Max, IN(2), output_T),
    OP(MaxPool, IN(1), output_T),
    OP(MaxPool3D, IN(1), output_T),
    OP(MaxPool3DGrad, IN(3), output_T_like0),
    OP(MaxPoolGrad, IN(3), output_T_like0),
    OP(MaxPoolGradV2, IN(5), output_T_like0),
    OP(MaxPoolV2, IN(3), output_T),
    OP(Maximum, IN(2), z_T),
    OP(Mean, IN(2), output_T),
    OP(Merge, IN_ATLEAST(1), merge_outs),
    OP(Min, IN(2), output_T),
    OP(Minimum, IN(2), z_T),
    OP(MirrorPad, IN(2), output_T),
    OP(MirrorPadGrad, IN(2), output_T),
    OP(Mod, IN(2), z_T),
    OP(Mul, IN(2), z_T),
    OP(MulNoNan, IN(2), z_T),
    OP(Ndtri, IN(1), y_T_like0),
    OP(Neg, IN(1), y_T_like0),
    OP(NextIteration, IN(1), output_T_like0),
    OP_NONE(NoOp, IN(0)),
    OP(NotEqual, IN(2), z_bool),
    OP(OneHot, IN(4), output_T),
    OP(OnesLike, IN(1), y_T_like0),
    OP(OptionalFromValue, IN_ATLEAST(1), opt_new),
    OP(OptionalGetValue, IN(1), opt_get),
    OP(OptionalHasValue, IN(1), opt_has),
    OP(OptionalNone, IN(0), opt_new),
    OP(Pack, IN_ATLEAST(1), output_T),
    OP(Pad, IN(2), output_T),
    OP(PadV2, IN(3), output_T),
    OP(ParallelDynamicStitch, IN_ATLEAST(2), merged_T),
    OP_CALL(PartitionedCall, IN_ATLEAST(0), call_outs, EDDY_TF_CALL_FUNC),
    OP(Placeholder, IN(0), output_dtype),
    OP(PlaceholderWithDefault, IN(1), output_dtype_like0),
    OP(Polygamma, IN(2), z_T),
    OP(Pow, IN(2), z_T),
    OP(Prod, IN(2), output_T),
    OP(RaggedTensorToTensor, IN_ATLEAST(4), result_T),
    OP(Range, IN(3), output_Tidx),
    OP(Rank, IN(1), output_i32),
    OP(RealDiv, IN(2), z_T),
    OP(Reciprocal, IN(1), y_T_like0),
    OP(ReciprocalGrad, IN(2), z_T_like0),
    OP(Relu, IN(1), activations_T_like0),
    OP(Relu6, IN(1), activations_T_like0),
    OP(Relu6Grad, IN(2), backprops_T_like0),
    OP(ReluGrad, IN(2), backprops_T_like0),
    OP(Reshape, IN(2), output_T),
    OP(ResizeArea, IN(2), resized_f32),
    OP(ResizeBicubic, IN(2), resized_f32),
    OP(ResizeBicubicGrad, IN(2), output_T),
    OP(ResizeBilinear, IN(2), resized_f32),
    OP(ResizeBilinearGrad, IN(2), output_T),
    OP(ResizeNearestNeighbor, IN(2), resized_T),
    OP(ResizeNearestNeighborGrad, IN(2), output_T),
    OP(ReverseSequence, IN(2), output_T_like0),
    OP(ReverseV2, IN(2), output_T_like0),
    OP(RightShift, IN(2), z_T),
    OP(Rint, IN(1), y_T_like0),
    OP(Round, IN(1), y_T_like0),
    OP(Rsqrt, IN(1), y_T_like0),
    OP(RsqrtGrad, IN(2), z_T_like0),
    OP(ScatterNd, IN(3), output_T),
    OP(SegmentMax, IN(2), output_T),
    OP(SegmentMean, IN(2), output_T),
    OP(SegmentMin, IN(2), output_T),
    OP(SegmentProd, IN(2), output_T),
    OP(SegmentSum, IN(2), output_T),
    OP(Select, IN(3), output_T_like1),
    OP(SelectV2, IN(3), output_T),
    OP(Selu, IN(1), activations_T_like0),
    OP(SeluGrad, IN(2), backprops_T_like0),
    OP(Shape, IN(1), output_out_type),
    OP(ShapeN, IN_ATLEAST(1), shape_n_outs),
    OP(Sigmoid, IN(1), y_T_like0),
    OP(SigmoidGrad, IN(2), z_T_like0),
    OP(Sign, IN(1), y_T_like0),
    OP(Sin, IN(1), y_T_like0),
    OP(Sinh, IN(1), y_T_like0),
    OP(Size, IN(1), output_out_type),
    OP(Slice, IN(3), output_T),
    OP(Softmax, IN(1), softmax_T_like0),
    OP(SoftmaxCrossEntropyWithLogits, IN(2), xent_outs),
    OP(Softplus, IN(1), activations_T_like0),
    OP(SoftplusGrad, IN(2), backprops_T_like0),
    OP(Softsign, IN(1), activations_T_like0),
    OP(SoftsignGrad, IN(2), backprops_T_like0),
    OP(SpaceToBatchND, IN(3), output_T),
    OP(SpaceToDepth, IN(1), output_T),
    OP(SparseSoftmaxCrossEntropyWithLogits, IN(2), xent_outs),
    OP(SparseToDense, IN(4), dense_T),
    OP(Split, IN(2), split_outs),
    OP(SplitV, IN(3), split_outs),
    OP(Sqrt, IN(1), y_T_like0),
    OP(SqrtGrad, IN(2), z_T_like0),
    OP(Square, IN(1), y_T_like0),
    OP(SquaredDifference, IN(2), z_T),
    OP(Squeeze, IN(1), output_T),
    OP_NONE(StackCloseV2, IN(1)),
    OP(StackPopV2, IN(1), stack_pop),
    OP(StackPushV2, IN(2), output_T_like1),
    OP(StackV2, IN(1), stack_new),
    OP_CALL(StatefulPartitionedCall, IN_ATLEAST(0), call_outs, EDDY_TF_CALL_FUNC),
    OP_CALL(StatelessCase, IN_ATLEAST(1), call_outs, EDDY_TF_CALL_BRANCH),
    OP_CALL(StatelessIf, IN_ATLEAST(1), call_outs, EDDY_TF_CALL_BRANCH),
    OP(StatelessRandomGetAlg, IN(0), alg_i32),
    OP(StatelessRandomGetKeyCounter, IN(1), key_counter),
    OP(StatelessRandomGetKeyCounterAlg, IN(1), key_counter_alg),
    OP(StatelessRandomNormal, IN(2), output_dtype),
    OP(StatelessRandomNormalV2, IN(4), output_dtype),
    OP(StatelessRandomUniform, IN(2), output_dtype),
    OP(StatelessRandomUniformInt, IN(4), output_dtype),
    OP(StatelessRandomUniformIntV2, IN(6), output_dtype),
    OP(StatelessRandomUniformV2, IN(4), output_dtype),
    OP_CALL(StatelessWhile, IN_ATLEAST(0), while_outs, EDDY_TF_CALL_LOOP),
    OP(StopGradient, IN(1), output_T_like0),
    OP(StridedSlice, IN(4), output_T),
    OP(StridedSliceGrad, IN(5), output_T),
    OP(Sub, IN(2), z_T),
    OP(Sum, IN(2), output_T),
    OP(Switch, IN(2), switch_outs),
    OP(Tan, IN(1), y_T_like0),
    OP(Tanh, IN(1), y_T_like0),
    OP(TanhGrad, IN(2), z_T_like0),
    OP_NONE(TensorArrayCloseV3, IN(1)),
    OP(TensorArrayConcatV3, IN(2), ta_concat),
    OP(TensorArrayGatherV3, IN(3), ta_value),
    OP(TensorArrayGradV3, IN(2), ta_grad),
    OP(TensorArrayReadV3, IN(3), ta_value),
    OP(TensorArrayScatterV3, IN(4), ta_flow),
    OP(TensorArraySizeV3, IN(2), ta_size),
    OP(TensorArraySplitV3, IN(4), ta_flow),
    OP(TensorArrayV3, IN(1), ta_new),
    OP(TensorArrayWriteV3, IN(4), ta_flow),
    OP(TensorListConcat, IN(1), tl_concat),
    OP(TensorListConcatV2, IN(3), tl_concat),
    OP(TensorListElementShape, IN(1), tl_element_shape),
    OP(TensorListFromTensor, IN(2), tl_from_tensor),
    OP(TensorListGather, IN(3), tl_gather),
    OP(TensorListGetItem, IN(3), tl_get_item),
    OP(TensorListLength, IN(1), tl_length),
    OP(TensorListPopBack, IN(2), tl_pop_back),
    OP(TensorListPushBack, IN(2), tl_update),
    OP(TensorListPushBackBatch, IN(2), tl_update_batch),
    OP(TensorListReserve, IN(2), tl_new),
    OP(TensorListResize, IN(2), tl_same),
    OP(TensorListScatter, IN(3), tl_from_tensor),
    OP(TensorListScatterIntoExistingList, IN(3), tl_update),
    OP(TensorListScatterV2, IN(4), tl_from_tensor),
    OP(TensorListSetItem, IN(3), tl_update),
    OP(TensorListSplit, IN(3), tl_from_tensor),
    OP(TensorListStack, IN(2), tl_stack),
    OP(TensorScatterAdd, IN(3), output_T_like0),
    OP(TensorScatterUpdate, IN(3), output_T_like0),
    OP(Tile, IN(2), output_T),
    OP(TopKV2, IN(2), topk_outs),
    OP(Transpose, IN(2), y_T),
    OP(TruncateDiv, IN(2), z_T),
    OP(TruncateMod, IN(2), z_T),
    OP(Unique, IN(1), unique_outs),
    OP(UniqueV2, IN(2), unique_outs),
    OP(UniqueWithCounts, IN(1), unique_count_outs),
    OP(UniqueWithCountsV2, IN(2), unique_count_outs),
    OP(Unpack, IN(1), unpack_outs),
    OP(UnsortedSegmentMax, IN(3), output_T),
    OP(UnsortedSegmentMin, IN(3), output_T),
    OP(UnsortedSegmentProd, IN(3), output_T),
    OP(UnsortedSegmentSum, IN(3), output_T),
    OP(UpperBound, IN(2), output_out_type),
    OP(Where, IN(1), index_i64),
    OP_CALL(While, IN_ATLEAST(0), while_outs, EDDY_TF_CALL_LOOP),
    OP(Xdivy, IN(2), z_T),
    OP(Xlog1py, IN(2), z_T),
    OP(Xlogy, IN(2), z_T),
    OP(ZerosLike, IN(1), y_T_like0),
    OP(Zeta, IN(2), z_T),
    OP(_SwitchN, IN(2), switch_n_outs),
};

static int cmp_info(const void *key, const void *elem) {
  return strcmp((const char *)key, ((const eddy_tf_op_info_t *)elem)->name);
}

const eddy_tf_op_info_t *eddy_tf_op_info(const char *name) {
  return bsearch(name, k_ops, sizeof k_ops / sizeof k_ops[0],
                 sizeof k_ops[0], cmp_info);
}

const eddy_tf_op_info_t *eddy_tf_op_info_all(size_t *out_count) {
  *out_count = sizeof k_ops / sizeof k_ops[0];
  return k_ops;
}
