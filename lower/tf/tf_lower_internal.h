/// Internal interface of legalize-tf: the translation state shared by the
/// driver (legalize.c: functions, regions, functional control flow), the
/// builders the rules share (legalize_build.c) and the op rules
/// (legalize_ops.c and the other legalize_*.c). Not installed.
#ifndef EDDY_LOWER_TF_TF_LOWER_INTERNAL_H
#define EDDY_LOWER_TF_TF_LOWER_INTERNAL_H

#include "lower/tf/tf_lower.h"

/// Translation state. Source ops (tf) are read and never changed; their
/// replacements are built at `b`, and `map` sends each source value to its
/// replacement. A value not in the map stands for itself (a function
/// argument, a value defined above the translated code). A source value
/// mapped to `z->none` has no replacement (a control token).
typedef struct eddy_tfl {
  eddy_ctx_t *ctx;
  eddy_module_t *m;
  eddy_builder_t b;
  eddy_ptrmap_t map;
  eddy_ptrmap_t callees; ///< func.func op -> non-NULL: inlined, to remove
  int depth;             ///< nesting of inlined calls
  eddy_value_t none;     ///< sentinel for "no value" (dropped tokens)
  /// eddy_tf_legalize_dataflow: df ops and control tokens are kept (the
  /// graph stays a v1 dataflow graph) instead of dropped.
  bool keep_dataflow;
  eddy_op_t *func;          ///< the function being translated
  const eddy_block_t *top;  ///< its source entry block
} eddy_tfl_t;

/// Types the reads of v1 TensorArrays and stacks in every function of m
/// with what is written into them (v1_array_types.c): for the graph kept as
/// dataflow, where the arrays stay resource ops.
eddy_status_t eddy_tfl_v1_array_types(eddy_module_t *m);

/// keep_dataflow: the type of result 0 of a v1 read op (TensorArrayReadV3,
/// StackPopV2, TensorArrayGatherV3) refined with what is written into its
/// array, each written value already translated counting with its
/// translation's type (legalization finds shapes the graph does not record,
/// such as those of a loop value TensorFlow left unknown, pushed on a stack
/// for the gradient); result 0's own type otherwise (v1_array_types.c).
eddy_status_t eddy_tfl_v1_read_type(eddy_tfl_t *z, const eddy_op_t *op,
                                    const eddy_type_t **out);

/// The replacement of a source value (the value itself when unmapped).
eddy_value_t *eddy_tfl_get(eddy_tfl_t *z, eddy_value_t *v);
void eddy_tfl_set(eddy_tfl_t *z, eddy_value_t *src, eddy_value_t *dst);

/// Builds op `name` with inferred result types at the insertion point;
/// *out is result 0. Errors are located at the source op.
eddy_status_t eddy_tfl_build(eddy_tfl_t *z, const eddy_op_t *src,
                             const char *name, eddy_value_t *const *operands,
                             size_t n, const eddy_named_attr_t *attrs,
                             size_t na, eddy_value_t **out);
/// Builds an op with explicit result types; *out_op is the op.
eddy_status_t eddy_tfl_build_typed(eddy_tfl_t *z, const eddy_op_t *src,
                                   const char *name,
                                   eddy_value_t *const *operands, size_t n,
                                   const eddy_named_attr_t *attrs, size_t na,
                                   const eddy_type_t *const *types,
                                   size_t ntypes, eddy_op_t **out_op);
/// The constant a (translated) value is known to hold, folding through the
/// ops that define it; NULL when unknown.
const eddy_attr_t *eddy_tfl_const(eddy_tfl_t *z, eddy_value_t *v);
/// The integers of a known constant (up to cap); -1 when not constant.
int64_t eddy_tfl_const_ints(eddy_tfl_t *z, eddy_value_t *v, int64_t *out,
                            size_t cap);
/// A scalar or tensor constant of dtype dt and static type with all
/// elements = x.
eddy_status_t eddy_tfl_splat(eddy_tfl_t *z, eddy_dtype_t dt, int32_t rank,
                             const int64_t *dims, double x,
                             eddy_value_t **out);
/// v converted to dtype dt (v itself when it already has it).
eddy_status_t eddy_tfl_cast(eddy_tfl_t *z, const eddy_op_t *src,
                            eddy_value_t *v, eddy_dtype_t dt,
                            eddy_value_t **out);
/// The largest rank the reshape helpers below take.
#define EDDY_TFL_MAX_RANK 64
/// core.dim(v) {index = k}: an i64 scalar.
eddy_status_t eddy_tfl_dim(eddy_tfl_t *z, const eddy_op_t *src,
                           eddy_value_t *v, int64_t k, eddy_value_t **out);
/// core.reshape of v to dims, any number of them dynamic (< 0): with two or
/// more, dimv[i] is the run-time value of dynamic dim i (an i32 or i64
/// scalar; -1 is inferred); with one, dimv[i] may be NULL: it is then
/// inferred from the element count.
eddy_status_t eddy_tfl_reshape_dyn(eddy_tfl_t *z, const eddy_op_t *src,
                                   eddy_value_t *v, const int64_t *dims,
                                   size_t rank, eddy_value_t *const *dimv,
                                   eddy_value_t **out);
/// core.reshape of v to dims where each dynamic dim i (dims[i] < 0) is dim
/// from[i] of v (ExpandDims, Squeeze, new axes: the data keeps its dims).
eddy_status_t eddy_tfl_reshape_keep(eddy_tfl_t *z, const eddy_op_t *src,
                                    eddy_value_t *v, const int64_t *dims,
                                    size_t rank, const int64_t *from,
                                    eddy_value_t **out);
/// core.transpose of v by perm[0..n).
eddy_status_t eddy_tfl_transpose(eddy_tfl_t *z, const eddy_op_t *src,
                                 eddy_value_t *v, const int64_t *perm,
                                 size_t n, eddy_value_t **out);
/// core.reshape of v to dims (one may be -1).
eddy_status_t eddy_tfl_reshape(eddy_tfl_t *z, const eddy_op_t *src,
                               eddy_value_t *v, const int64_t *dims,
                               size_t rank, eddy_value_t **out);
/// The dtype in a string attribute of src ("f32"); false when absent.
bool eddy_tfl_attr_dtype(const eddy_op_t *src, const char *name,
                         eddy_dtype_t *out);
/// An error at the source op: "node 'n': TF-OP: message".
eddy_status_t eddy_tfl_error(const eddy_op_t *src, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/// st (when not NULL) as an eddy_tfl_error of src, st's message kept.
eddy_status_t eddy_tfl_wrap_error(const eddy_op_t *src, eddy_status_t st);

/// ---- Small helpers the rules share -------------------------------------

/// True when op is not NULL and is the op `name`.
static inline bool tfl_is(const eddy_op_t *op, const char *name) {
  return op && eddy_ir_op_is(op, name);
}
/// The op of block b that is op or contains it; NULL when none.
static inline eddy_op_t *tfl_in_block(eddy_op_t *op, eddy_block_t *b) {
  while (op && op->block != b)
    op = eddy_ir_op_parent_op(op);
  return op;
}
/// The replacement of operand i of the source op.
static inline eddy_value_t *tfl_in(eddy_tfl_t *z, const eddy_op_t *op,
                                   size_t i) {
  return eddy_tfl_get(z, eddy_ir_op_operand(op, i));
}
/// Maps result 0 of the source op to v.
static inline void tfl_out1(eddy_tfl_t *z, const eddy_op_t *op,
                            eddy_value_t *v) {
  eddy_tfl_set(z, &op->results[0], v);
}
/// The binary op `name` of a and b.
static inline eddy_status_t tfl_bin(eddy_tfl_t *z, const eddy_op_t *op,
                                    const char *name, eddy_value_t *a,
                                    eddy_value_t *b, eddy_value_t **out) {
  eddy_value_t *ops[2] = {a, b};
  return eddy_tfl_build(z, op, name, ops, 2, NULL, 0, out);
}
/// core.select(c, a, b).
static inline eddy_status_t tfl_sel(eddy_tfl_t *z, const eddy_op_t *op,
                                    eddy_value_t *c, eddy_value_t *a,
                                    eddy_value_t *b, eddy_value_t **out) {
  eddy_value_t *ops[3] = {c, a, b};
  return eddy_tfl_build(z, op, "core.select", ops, 3, NULL, 0, out);
}
/// A scalar constant x of v's dtype.
static inline eddy_status_t tfl_scalar_like(eddy_tfl_t *z, eddy_value_t *v,
                                            double x, eddy_value_t **out) {
  return eddy_tfl_splat(z, v->type->dtype, 0, NULL, x, out);
}
/// The dims of a tensor type of known rank (at most EDDY_TFL_MAX_RANK),
/// dynamic ones as -1; false otherwise.
static inline bool tfl_dims_of(const eddy_type_t *t, int64_t *dims) {
  if (t->kind != EDDY_TYPE_TENSOR || t->rank == EDDY_RANK_UNKNOWN ||
      t->rank > EDDY_TFL_MAX_RANK)
    return false;
  for (int32_t i = 0; i < t->rank; i++)
    dims[i] = t->dims[i];
  return true;
}

/// Rules for the non-control-flow tf ops (legalize_ops.c). Sets *handled
/// to false when op is not one of them.
eddy_status_t eddy_tfl_lower_op(eddy_tfl_t *z, const eddy_op_t *op,
                                bool *handled);
/// functionalize's second step (stacks.c): a v1 stack pushed in one loop
/// frame and popped in another (through nested frames and conds) becomes a
/// loop value of every frame and a value of every cond on the way.
eddy_status_t eddy_tfl_thread_stacks(eddy_ctx_t *ctx, eddy_block_t *b);
/// On a TensorArrayGradV3 that functionalize made (tensor_arrays.c): the
/// gradient array starts with every item a zero like the forward array's
/// (not unset), so that writes can add to the item.
#define EDDY_TFL_ZEROS_ATTR "_eddy_zeros"
/// The branch (0: else, 1: then) and predicate of the v1 cond a value of
/// block b is computed in: the first cond Switch output found walking back
/// from v, not through Merges or Enters (functionalize.c); false when none
/// is found within a few hundred ops.
bool eddy_tfl_branch_of(eddy_value_t *v, eddy_value_t **out_pred,
                        int *out_branch);
/// functionalize, before the raising (switch_n.c): each _SwitchN of block
/// b (a lowered Case) becomes a chain of Switches on index == k, each Merge
/// of more than two inputs nested Merges of two, so that the lowered Case
/// is nested two-way conds.
eddy_status_t eddy_tfl_split_switch_n(eddy_ctx_t *ctx, eddy_block_t *b);
/// Reorders block b so that each op comes after the ops of b that define
/// its operands (and those of the ops nested in it), the NextIteration ->
/// Merge back edges of v1 loops excepted; ops already in order stay in
/// order (functionalize.c). A block with another cycle is left as it is.
void eddy_tfl_block_sort(eddy_block_t *b);
/// Builds op `name` at bb with explicit result types (stacks.c); *out is
/// the op.
eddy_status_t eddy_tfl_make(eddy_builder_t *bb, const char *name,
                            eddy_value_t *const *ops, size_t n,
                            const eddy_named_attr_t *attrs, size_t na,
                            const eddy_type_t *const *types, size_t nt,
                            const eddy_loc_t *loc, eddy_op_t **out);
/// Drops operand `index` of a consumer of control (df.control, df.after,
/// ControlTrigger, NoOp); one left with nothing to wait on goes too: the
/// uses of its token are dropped in turn (up to depth 16), a df.after
/// becomes its value (functionalize.c).
void eddy_tfl_drop_token_use(eddy_op_t *op, uint32_t index, int depth);
/// legalize-tf's first step (optionals.c): an Optional output of an If
/// whose branches return Optionals of different types (cond_v2 shares the
/// slot between the branches' intermediates) becomes two outputs, one per
/// branch, and the gradient If on the same predicate passes both.
eddy_status_t eddy_tfl_split_optionals(eddy_module_t *m);
/// functionalize (cond_stages.c): the switches sws[0..*nsw) on pred, whose
/// then and else outputs reach the ops of tset and eset (Merges included,
/// not gone through), may open several conds one after the other, the
/// later reading the Merges of the earlier (a cond and its gradient cond,
/// on the same predicate). Only the first cond is then kept in the sets
/// and in sws: a value of its branch that a later cond reads leaves it
/// through a new Merge, whose other input is a zero of its type, and
/// comes back through a new Switch on pred; a switch both read is copied
/// for the later ones; a control edge between them is dropped.
eddy_status_t eddy_tfl_cond_first_stage(eddy_ctx_t *ctx, eddy_block_t *b,
                                        eddy_value_t *pred, eddy_op_t **sws,
                                        size_t *nsw, eddy_ptrmap_t *tset,
                                        eddy_ptrmap_t *eset);
/// functionalize's first step (tensor_arrays.c): the flows of v1
/// TensorArray gradients are made to carry their lists (gradient arrays
/// found again are look-ups, ones made in a loop are made before it), and
/// stacks whose pops only feed control edges are removed.
eddy_status_t eddy_tfl_thread_tensor_arrays(eddy_ctx_t *ctx, eddy_block_t *b);
/// keep_dataflow (v1_dataflow.c): copies a v1 stack or TensorArray op, or a
/// ControlTrigger (live even when its inputs are dead), as it is, for the
/// dataflow interpreter to run. Sets *handled to false for any other op.
eddy_status_t eddy_tfl_keep_dataflow_op(eddy_tfl_t *z, const eddy_op_t *op,
                                        bool *handled);
/// Rules for shape and data-movement ops (legalize_shape.c; slices and pads
/// in legalize_slice.c).
eddy_status_t eddy_tfl_lower_shape_op(eddy_tfl_t *z, const eddy_op_t *op,
                                      bool *handled);
extern const char *const eddy_tfl_shape_ops[]; ///< NULL-terminated
/// Rules for elementwise math, activations and their gradient ops
/// (legalize_math.c), and fn(name) for each op they lower.
eddy_status_t eddy_tfl_lower_math_op(eddy_tfl_t *z, const eddy_op_t *op,
                                     bool *handled);
void eddy_tfl_math_ops_each(void (*fn)(const char *name, void *user),
                            void *user);
/// StridedSlice, StridedSliceGrad, Slice, Pad and PadV2 (legalize_slice.c),
/// called by eddy_tfl_lower_shape_op.
eddy_status_t eddy_tfl_lower_strided_slice(eddy_tfl_t *z, const eddy_op_t *op);
eddy_status_t eddy_tfl_lower_strided_slice_grad(eddy_tfl_t *z,
                                                const eddy_op_t *op);
eddy_status_t eddy_tfl_lower_slice(eddy_tfl_t *z, const eddy_op_t *op);
eddy_status_t eddy_tfl_lower_pad(eddy_tfl_t *z, const eddy_op_t *op);
/// MirrorPad and MirrorPadGrad (legalize_slice.c).
eddy_status_t eddy_tfl_lower_mirror_pad(eddy_tfl_t *z, const eddy_op_t *op);
/// TensorList and TensorArray rules of legalize_lists.c: the ops named in
/// eddy_tfl_is_list_op, and the forms of basic list ops that
/// eddy_tfl_is_list_form picks out (lists that grow, whole-array scatters).
bool eddy_tfl_is_list_op(const char *t);
void eddy_tfl_list_ops_each(void (*fn)(const char *name, void *user),
                            void *user);
bool eddy_tfl_is_list_form(eddy_tfl_t *z, const eddy_op_t *op);
eddy_status_t eddy_tfl_lower_list_op(eddy_tfl_t *z, const eddy_op_t *op);
/// Pack of lists (a vector of lists: one list of their items stacked) and
/// Unpack of such a vector (legalize_lists.c), called by
/// eddy_tfl_lower_shape_op.
eddy_status_t eddy_tfl_lower_list_pack(eddy_tfl_t *z, const eddy_op_t *op);
eddy_status_t eddy_tfl_lower_list_unpack(eddy_tfl_t *z, const eddy_op_t *op);
/// Range of run-time operands: core.range (legalize_lists.c).
eddy_status_t eddy_tfl_lower_range_dynamic(eddy_tfl_t *z, const eddy_op_t *op);
/// functionalize's first step: marks the writes to a TensorArray made with
/// dynamic_size = true, which grow the array (legalize_lists.c).
void eddy_tfl_mark_growing_writes(eddy_ctx_t *ctx, eddy_block_t *b);
/// Rules for indexing, scan and arg-reduction ops (legalize_index.c):
/// ReverseV2, Any, All, ArgMax, ArgMin, Cumsum, Cumprod, OneHot,
/// ConcatOffset, BroadcastArgs, BroadcastTo, InvertPermutation,
/// EuclideanNorm, DynamicStitch (and the one-operand Where, refused with a
/// reason).
eddy_status_t eddy_tfl_lower_index_op(eddy_tfl_t *z, const eddy_op_t *op,
                                      bool *handled);
void eddy_tfl_index_ops_each(void (*fn)(const char *name, void *user),
                             void *user);
/// The positions 0..d-1 along dim `axis` of x (d static or read at run
/// time), as an i64 tensor [d, 1] (k = 0: rows) or [1, d] (k = 1: columns)
/// (legalize_index.c).
eddy_status_t eddy_tfl_positions(eddy_tfl_t *z, const eddy_op_t *op,
                                 eddy_value_t *x, int32_t axis, int k,
                                 eddy_value_t **out);
/// MatrixDiag, MatrixDiagPart and MatrixSetDiag, V1 to V3 (legalize_diag.c),
/// called by eddy_tfl_lower_index_op.
eddy_status_t eddy_tfl_lower_matrix_diag(eddy_tfl_t *z, const eddy_op_t *op);
/// Einsum of any number of operands (legalize_einsum.c), called by
/// eddy_tfl_lower_index_op.
eddy_status_t eddy_tfl_lower_einsum(eddy_tfl_t *z, const eddy_op_t *op);
/// legalize_window.c: Conv2D, MaxPool, AvgPool and their gradients.
eddy_status_t eddy_tfl_lower_window_op(eddy_tfl_t *z, const eddy_op_t *op,
                                       bool *handled);
void eddy_tfl_window_ops_each(void (*fn)(const char *name, void *user),
                              void *user);
/// legalize_special.c: Lgamma, Digamma, Polygamma and Zeta.
eddy_status_t eddy_tfl_lower_special_op(eddy_tfl_t *z, const eddy_op_t *op,
                                        bool *handled);
void eddy_tfl_special_ops_each(void (*fn)(const char *name, void *user),
                               void *user);
/// legalize_linalg.c: Cholesky, MatrixTriangularSolve, MatrixSolve,
/// MatrixInverse, MatrixDeterminant and LogMatrixDeterminant, each a
/// ctl.while over the matrix size.
eddy_status_t eddy_tfl_lower_linalg_op(eddy_tfl_t *z, const eddy_op_t *op,
                                       bool *handled);
void eddy_tfl_linalg_ops_each(void (*fn)(const char *name, void *user),
                              void *user);
/// legalize_crop.c: CropAndResize, CropAndResizeGradImage and
/// CropAndResizeGradBoxes.
eddy_status_t eddy_tfl_lower_crop_op(eddy_tfl_t *z, const eddy_op_t *op,
                                     bool *handled);
void eddy_tfl_crop_ops_each(void (*fn)(const char *name, void *user),
                            void *user);
/// legalize_space.c: SpaceToBatchND, BatchToSpaceND, DepthToSpace and
/// SpaceToDepth.
eddy_status_t eddy_tfl_lower_space_op(eddy_tfl_t *z, const eddy_op_t *op,
                                      bool *handled);
void eddy_tfl_space_ops_each(void (*fn)(const char *name, void *user),
                             void *user);
/// legalize_quant.c: FakeQuantWithMinMaxArgs and FakeQuantWithMinMaxVars and
/// their gradients.
/// legalize_ragged.c: RaggedTensorToTensor.
eddy_status_t eddy_tfl_lower_ragged_op(eddy_tfl_t *z, const eddy_op_t *op,
                                       bool *handled);
void eddy_tfl_ragged_ops_each(void (*fn)(const char *name, void *user),
                              void *user);
/// legalize_ctc.c: CTCGreedyDecoder.
eddy_status_t eddy_tfl_lower_ctc_op(eddy_tfl_t *z, const eddy_op_t *op,
                                    bool *handled);
void eddy_tfl_ctc_ops_each(void (*fn)(const char *name, void *user),
                           void *user);
/// legalize_random.c: the stateless random ops (Philox, TensorFlow's
/// streams), and StatelessRandomGetKeyCounter and the algorithm queries.
eddy_status_t eddy_tfl_lower_random_op(eddy_tfl_t *z, const eddy_op_t *op,
                                       bool *handled);
void eddy_tfl_random_ops_each(void (*fn)(const char *name, void *user),
                              void *user);
eddy_status_t eddy_tfl_lower_quant_op(eddy_tfl_t *z, const eddy_op_t *op,
                                      bool *handled);
void eddy_tfl_quant_ops_each(void (*fn)(const char *name, void *user),
                             void *user);
/// legalize_unique.c: Unique, UniqueWithCounts (and their V2 forms on a
/// vector), DynamicPartition and HistogramFixedWidth.
eddy_status_t eddy_tfl_lower_unique_op(eddy_tfl_t *z, const eddy_op_t *op,
                                       bool *handled);
void eddy_tfl_unique_ops_each(void (*fn)(const char *name, void *user),
                              void *user);
/// DynamicStitch and ParallelDynamicStitch (legalize_stitch.c), called by
/// eddy_tfl_lower_index_op.
eddy_status_t eddy_tfl_lower_dynamic_stitch(eddy_tfl_t *z,
                                            const eddy_op_t *op);
/// When v is the (cast) core.shape of a tensor, that tensor; else NULL
/// (legalize_shape.c).
eddy_value_t *eddy_tfl_shape_source(eddy_value_t *v);
/// An i64 tensor of the shape the 1-D integer tensor s holds (s a constant
/// or a run-time value of known length), element k holding k: the
/// row-major index of each element. Its static dims are those of op's
/// result 0 where that has the same rank.
eddy_status_t eddy_tfl_shape_grid(eddy_tfl_t *z, const eddy_op_t *op,
                                  eddy_value_t *s, eddy_value_t **out);
/// GatherNd, ScatterNd, TensorScatterUpdate (add false) / TensorScatterAdd,
/// and the segment reductions (kind "sum", "mean", "max", "min", "prod";
/// sorted: the Segment* ops, else UnsortedSegment*) (legalize_scatter.c).
eddy_status_t eddy_tfl_lower_gather_nd(eddy_tfl_t *z, const eddy_op_t *op);
eddy_status_t eddy_tfl_lower_scatter_nd(eddy_tfl_t *z, const eddy_op_t *op);
eddy_status_t eddy_tfl_lower_sparse_to_dense(eddy_tfl_t *z,
                                             const eddy_op_t *op);
eddy_status_t eddy_tfl_lower_tensor_scatter(eddy_tfl_t *z,
                                            const eddy_op_t *op, bool add);
eddy_status_t eddy_tfl_lower_segment(eddy_tfl_t *z, const eddy_op_t *op,
                                     const char *kind, bool sorted);
/// DenseBincount (legalize_scatter.c): counts (or weights, or 0/1) of
/// each value in [0, size), per row of a rank-2 input.
eddy_status_t eddy_tfl_lower_bincount(eddy_tfl_t *z, const eddy_op_t *op);
/// Entry i of the 1-D integer tensor s, as a scalar of its dtype
/// (legalize_shape.c).
eddy_status_t eddy_tfl_element(eddy_tfl_t *z, const eddy_op_t *op,
                               eddy_value_t *s, int64_t i,
                               eddy_value_t **out);
/// x broadcast to the run-time shape of y with core ops (legalize_shape.c).
eddy_status_t eddy_tfl_broadcast_like(eddy_tfl_t *z, const eddy_op_t *op,
                                      eddy_value_t *x, eddy_value_t *y,
                                      eddy_value_t **out);
/// x broadcast to the run-time shape s, a 1-D integer tensor of known
/// length: like a core.range of prod(s) elements reshaped to s (dims the
/// result type of op knows static), with core ops (legalize_shape.c).
/// False, with nothing built, when the length of s is not known; else
/// *status is the outcome.
bool eddy_tfl_broadcast_to_run_time(eddy_tfl_t *z, const eddy_op_t *op,
                                    eddy_value_t *x, eddy_value_t *s,
                                    eddy_value_t **out, eddy_status_t *status);
/// Reduction `name` (core.reduce_sum, ...) of x over axes[0..n), keepdims
/// `keep`; without keep, and with two or more dynamic dims left, it
/// reduces with keepdims and reshapes the reduced dims away, which autodiff
/// can undo (legalize_shape.c).
eddy_status_t eddy_tfl_reduce(eddy_tfl_t *z, const eddy_op_t *op,
                              const char *name, eddy_value_t *x,
                              const int64_t *axes, size_t n, bool keep,
                              eddy_value_t **out);
/// Sum `op` of x over output k of BroadcastGradientArgs `bga` of shapes
/// known at run time only (TensorFlow's gradient of a broadcasting binary
/// op): x summed to the shape of the tensor that input k of bga is the
/// Shape of, the dims summed at run time in a ctl.if where that tensor's
/// dim is dynamic (legalize_shape.c). Where the two shapes broadcast to
/// fewer dims than x has (batch shapes of matrices), x's trailing dims are
/// kept. Without keep_dims, the sum has that tensor's rank (TensorFlow's
/// drops the summed dims) plus the trailing dims: only Reshapes may read
/// it.
eddy_status_t eddy_tfl_sum_broadcast(eddy_tfl_t *z, const eddy_op_t *op,
                                     const eddy_op_t *bga, uint32_t k,
                                     eddy_value_t **out);
/// True when legalize-tf lowers the op named `name` (without "tf.").
bool eddy_tfl_is_supported(const char *name);
/// Calls fn for every op legalize-tf lowers (names without "tf."), each
/// table's in its order; a name may come more than once.
void eddy_tfl_supported_each(void (*fn)(const char *name, void *user),
                             void *user);

/// functionalize of df frames (functionalize_df.c). True when the loop
/// value (enter, merge, sw, next, exit) of the frame whose df.loop_cond is
/// `loopcond` is the maximum_iterations counter to-dataflow adds: then *max
/// is the limit, *pred the loop's own predicate and skip[0..4] the ops made
/// for the counter (and, lt, after M, add, after 1).
bool eddy_tfl_df_counter(eddy_op_t *loopcond, eddy_op_t *enter,
                         eddy_op_t *merge, eddy_op_t *sw, eddy_op_t *next,
                         eddy_op_t *exit, int64_t *max, eddy_value_t **pred,
                         eddy_op_t **skip);
/// After raising the df frames of func: every df.after(c, token) of a
/// constant (an op with no operands) becomes a copy of c in place, c goes
/// once unused, and so do df.control tokens nothing uses.
eddy_status_t eddy_tfl_df_unpivot(eddy_op_t *func);

/// An integer constant of dtype dt and shape [n] (rank 0 when n < 0)
/// (legalize.c).
eddy_status_t eddy_tfl_int_constant(eddy_tfl_t *z, eddy_dtype_t dt,
                                    const int64_t *v, int64_t n,
                                    eddy_value_t **out);

/// name = v (a bool attribute).
static inline eddy_named_attr_t eddy_tfl_bool_attr(eddy_tfl_t *z,
                                                   const char *name, bool v) {
  return eddy_ir_named_attr(z->ctx, name, eddy_ir_bool_attr_get(z->ctx, v));
}
/// name = v (an i64 attribute), name = [v...] (an i64 array).
static inline eddy_named_attr_t eddy_tfl_int_attr(eddy_tfl_t *z,
                                                  const char *name, int64_t v) {
  return eddy_ir_named_attr(z->ctx, name,
                            eddy_ir_int_attr_get(z->ctx, v, EDDY_DT_I64));
}
static inline eddy_named_attr_t eddy_tfl_ints_attr(eddy_tfl_t *z,
                                                   const char *name,
                                                   const int64_t *v, size_t n) {
  return eddy_ir_named_attr(z->ctx, name,
                            eddy_ir_i64_array_attr_get(z->ctx, v, n));
}

#endif
