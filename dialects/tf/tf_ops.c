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
static const eddy_tf_out_spec_t out_T_like0[] = {O_ATTR("out", "T", 0)};
static const eddy_tf_out_spec_t index_i64[] = {O_FIXED("index", INT64, -1)};
static const eddy_tf_out_spec_t topk_outs[] = {
    O_ATTR("values", "T", -1), O_ATTR("indices", "index_type", -1)};
static const eddy_tf_out_spec_t xent_outs[] = {O_ATTR("loss", "T", -1),
                                               O_ATTR("backprop", "T", -1)};
static const eddy_tf_out_spec_t output_Tout[] = {
    O_ATTR("output", "Tout", -1)};

/// v1 control flow: values pass through with their type.
static const eddy_tf_out_spec_t switch_outs[] = {
    O_ATTR("output_false", "T", 0), O_ATTR("output_true", "T", 0)};
/// Merge's output type is computed by the importer from all its inputs
/// (the back edge included), so no `like` here.
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

#define OP(name, outs) {#name, outs, sizeof(outs) / sizeof(outs[0]), EDDY_TF_CALL_NONE}
#define OP_CALL(name, outs, call) {#name, outs, sizeof(outs) / sizeof(outs[0]), call}
#define OP_NONE(name) {#name, NULL, 0, EDDY_TF_CALL_NONE}

/// Sorted by name (strcmp order; a unit test checks it).
static const eddy_tf_op_info_t k_ops[] = {
    OP(Abs, y_T_like0),
    OP(Acos, y_T_like0),
    OP(Add, z_T),
    OP(AddN, sum_T_like0),
    OP(AddV2, z_T),
    OP(All, output_bool),
    OP(Any, output_bool),
    OP(ArgMax, output_output_type),
    OP(ArgMin, output_output_type),
    OP(Asin, y_T_like0),
    OP(Atan, y_T_like0),
    OP(Atan2, z_T),
    OP(BatchMatMulV2, output_T),
    OP(BatchMatMulV3, output_Tout),
    OP(BiasAdd, output_T_like0),
    OP(BiasAddGrad, output_T),
    OP(BiasAddV1, output_T_like0),
    OP(BroadcastArgs, r0_T),
    OP(BroadcastGradientArgs, bcast_args),
    OP(BroadcastTo, output_T),
    OP_CALL(Case, call_outs, EDDY_TF_CALL_BRANCH),
    OP(Cast, y_DstT_like0),
    OP(Ceil, y_T_like0),
    OP(ClipByValue, output_T_like0),
    OP(ConcatOffset, concat_offsets),
    OP(ConcatV2, output_T),
    OP(Const, output_dtype),
    OP_NONE(ControlTrigger),
    OP(Cos, y_T_like0),
    OP(Cosh, y_T_like0),
    OP(Cumprod, out_T_like0),
    OP(Cumsum, out_T_like0),
    OP(Div, z_T),
    OP(DivNoNan, z_T),
    OP(Einsum, output_T),
    OP(Elu, activations_T_like0),
    OP(EluGrad, backprops_T_like0),
    OP(EmptyTensorList, tl_new),
    OP(Enter, output_T_like0),
    OP(Equal, z_bool),
    OP(Erf, y_T_like0),
    OP(Erfc, y_T_like0),
    OP(EuclideanNorm, output_T),
    OP(Exit, output_T_like0),
    OP(Exp, y_T_like0),
    OP(ExpandDims, output_T),
    OP(Expm1, y_T_like0),
    OP(Fill, output_T),
    OP(Floor, y_T_like0),
    OP(FloorDiv, z_T),
    OP(FloorMod, z_T),
    OP(GatherNd, output_Tparams),
    OP(GatherV2, output_Tparams),
    OP(Greater, z_bool),
    OP(GreaterEqual, z_bool),
    OP(Identity, output_T_like0),
    OP(IdentityN, identity_n),
    OP_CALL(If, call_outs, EDDY_TF_CALL_BRANCH),
    OP(Inv, y_T_like0),
    OP(InvGrad, z_T_like0),
    OP(InvertPermutation, y_T_like0),
    OP(IsFinite, y_bool_like0),
    OP(IsInf, y_bool_like0),
    OP(IsNan, y_bool_like0),
    OP(LeakyRelu, activations_T_like0),
    OP(LeakyReluGrad, backprops_T_like0),
    OP(Less, z_bool),
    OP(LessEqual, z_bool),
    OP(Log, y_T_like0),
    OP(Log1p, y_T_like0),
    OP(LogSoftmax, logsoftmax_T_like0),
    OP(LogicalAnd, z_bool),
    OP(LogicalNot, y_bool_like0),
    OP(LogicalOr, z_bool),
    OP(LoopCond, output_bool_like0),
    OP(MatMul, product_T),
    OP(Max, output_T),
    OP(Maximum, z_T),
    OP(Mean, output_T),
    OP(Merge, merge_outs),
    OP(Min, output_T),
    OP(Minimum, z_T),
    OP(Mod, z_T),
    OP(Mul, z_T),
    OP(MulNoNan, z_T),
    OP(Neg, y_T_like0),
    OP(NextIteration, output_T_like0),
    OP_NONE(NoOp),
    OP(NotEqual, z_bool),
    OP(OneHot, output_T),
    OP(OnesLike, y_T_like0),
    OP(OptionalFromValue, opt_new),
    OP(OptionalGetValue, opt_get),
    OP(OptionalHasValue, opt_has),
    OP(OptionalNone, opt_new),
    OP(Pack, output_T),
    OP(Pad, output_T),
    OP(PadV2, output_T),
    OP_CALL(PartitionedCall, call_outs, EDDY_TF_CALL_FUNC),
    OP(Placeholder, output_dtype),
    OP(PlaceholderWithDefault, output_dtype_like0),
    OP(Pow, z_T),
    OP(Prod, output_T),
    OP(Range, output_Tidx),
    OP(Rank, output_i32),
    OP(RealDiv, z_T),
    OP(Reciprocal, y_T_like0),
    OP(ReciprocalGrad, z_T_like0),
    OP(Relu, activations_T_like0),
    OP(Relu6, activations_T_like0),
    OP(Relu6Grad, backprops_T_like0),
    OP(ReluGrad, backprops_T_like0),
    OP(Reshape, output_T),
    OP(ReverseV2, output_T_like0),
    OP(Rint, y_T_like0),
    OP(Round, y_T_like0),
    OP(Rsqrt, y_T_like0),
    OP(RsqrtGrad, z_T_like0),
    OP(ScatterNd, output_T),
    OP(Select, output_T_like1),
    OP(SelectV2, output_T),
    OP(Selu, activations_T_like0),
    OP(SeluGrad, backprops_T_like0),
    OP(Shape, output_out_type),
    OP(Sigmoid, y_T_like0),
    OP(SigmoidGrad, z_T_like0),
    OP(Sign, y_T_like0),
    OP(Sin, y_T_like0),
    OP(Sinh, y_T_like0),
    OP(Size, output_out_type),
    OP(Slice, output_T),
    OP(Softmax, softmax_T_like0),
    OP(SoftmaxCrossEntropyWithLogits, xent_outs),
    OP(Softplus, activations_T_like0),
    OP(SoftplusGrad, backprops_T_like0),
    OP(Softsign, activations_T_like0),
    OP(SoftsignGrad, backprops_T_like0),
    OP(SparseSoftmaxCrossEntropyWithLogits, xent_outs),
    OP(Split, split_outs),
    OP(SplitV, split_outs),
    OP(Sqrt, y_T_like0),
    OP(SqrtGrad, z_T_like0),
    OP(Square, y_T_like0),
    OP(SquaredDifference, z_T),
    OP(Squeeze, output_T),
    OP_NONE(StackCloseV2),
    OP(StackPopV2, stack_pop),
    OP(StackPushV2, output_T_like1),
    OP(StackV2, stack_new),
    OP_CALL(StatefulPartitionedCall, call_outs, EDDY_TF_CALL_FUNC),
    OP_CALL(StatelessCase, call_outs, EDDY_TF_CALL_BRANCH),
    OP_CALL(StatelessIf, call_outs, EDDY_TF_CALL_BRANCH),
    OP_CALL(StatelessWhile, while_outs, EDDY_TF_CALL_LOOP),
    OP(StopGradient, output_T_like0),
    OP(StridedSlice, output_T),
    OP(StridedSliceGrad, output_T),
    OP(Sub, z_T),
    OP(Sum, output_T),
    OP(Switch, switch_outs),
    OP(Tan, y_T_like0),
    OP(Tanh, y_T_like0),
    OP(TanhGrad, z_T_like0),
    OP_NONE(TensorArrayCloseV3),
    OP(TensorArrayConcatV3, ta_concat),
    OP(TensorArrayGatherV3, ta_value),
    OP(TensorArrayGradV3, ta_grad),
    OP(TensorArrayReadV3, ta_value),
    OP(TensorArrayScatterV3, ta_flow),
    OP(TensorArraySizeV3, ta_size),
    OP(TensorArraySplitV3, ta_flow),
    OP(TensorArrayV3, ta_new),
    OP(TensorArrayWriteV3, ta_flow),
    OP(TensorListConcat, tl_concat),
    OP(TensorListConcatV2, tl_concat),
    OP(TensorListElementShape, tl_element_shape),
    OP(TensorListFromTensor, tl_from_tensor),
    OP(TensorListGather, tl_gather),
    OP(TensorListGetItem, tl_get_item),
    OP(TensorListLength, tl_length),
    OP(TensorListPopBack, tl_pop_back),
    OP(TensorListPushBack, tl_update),
    OP(TensorListPushBackBatch, tl_update_batch),
    OP(TensorListReserve, tl_new),
    OP(TensorListResize, tl_same),
    OP(TensorListScatter, tl_from_tensor),
    OP(TensorListScatterIntoExistingList, tl_update),
    OP(TensorListScatterV2, tl_from_tensor),
    OP(TensorListSetItem, tl_update),
    OP(TensorListSplit, tl_from_tensor),
    OP(TensorListStack, tl_stack),
    OP(TensorScatterAdd, output_T_like0),
    OP(TensorScatterUpdate, output_T_like0),
    OP(Tile, output_T),
    OP(TopKV2, topk_outs),
    OP(Transpose, y_T),
    OP(TruncateDiv, z_T),
    OP(TruncateMod, z_T),
    OP(Unpack, unpack_outs),
    OP(UnsortedSegmentSum, output_T),
    OP(Where, index_i64),
    OP_CALL(While, while_outs, EDDY_TF_CALL_LOOP),
    OP(Xdivy, z_T),
    OP(Xlogy, z_T),
    OP(ZerosLike, y_T_like0),
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
