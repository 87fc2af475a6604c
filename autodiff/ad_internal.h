/// Internals of the autodiff transform, shared by ad.c, rules.c,
/// rules_movement.c, ad_if.c and ad_while.c.
///
/// The transform walks the forward code backwards in *scopes*: the function
/// body, each branch of a ctl.if, each body of a ctl.while. A scope has a
/// forward block (whose values are local to it) and a backward block where
/// the gradient ops go. The backward block of a nested scope is a scratch
/// block; it becomes a region of the gradient if / gradient while when the
/// scope is finished. A rule that needs a forward value asks ad_fwd, which
/// makes it visible in the backward block: at function level it is the value
/// itself; in an if branch the forward if returns it as an extra result; in
/// a loop body the forward loop pushes it to a TensorList that the gradient
/// loop pops. Constants are re-created instead.
#ifndef EDDY_AUTODIFF_AD_INTERNAL_H
#define EDDY_AUTODIFF_AD_INTERNAL_H

#include "autodiff/ad.h"

typedef enum ad_scope_kind {
  AD_SCOPE_FUNC,
  AD_SCOPE_IF,
  AD_SCOPE_WHILE,
} ad_scope_kind_t;

/// Growable array of pointers (malloc-backed).
typedef struct ad_vec {
  void **data;
  size_t len, cap;
} ad_vec_t;

void ad_vec_push(ad_vec_t *v, void *p);
void ad_vec_free(ad_vec_t *v);

typedef struct ad ad_t;

typedef struct ad_scope {
  struct ad_scope *parent;
  ad_scope_kind_t kind;
  ad_t *ad;
  eddy_block_t *fwd;    ///< forward block: values defined here are local
  eddy_block_t *bwd;    ///< where gradient ops go
  eddy_op_t *bwd_before; ///< insertion point in bwd (NULL: at the end)
  eddy_op_t *fwd_op;    ///< the forward ctl.if / ctl.while (not for FUNC)
  int32_t depth;        ///< loops around this scope
  eddy_ptrmap_t adj;    ///< local forward value -> its adjoint so far
  eddy_ptrmap_t vis;    ///< forward value -> visible value (cache)
  /// Exports: forward value exp_fwd[i] is available in bwd as exp_bwd[i]
  /// (IF: a placeholder block arg; WHILE: the popped element).
  ad_vec_t exp_fwd, exp_bwd;
  /// WHILE: the list block arg of each export, and the popped list.
  ad_vec_t exp_list, exp_next;
  /// Adjoints flowing out of the scope to values defined outside it:
  /// cap_fwd[i] is the outside value, cap_cur[i] the adjoint accumulated so
  /// far (WHILE: starting from the block arg cap_arg[i]).
  ad_vec_t cap_fwd, cap_cur, cap_arg;
  /// WHILE: the scratch block arguments in order and what each yields.
  ad_vec_t args, next;
  /// WHILE of a loop marked AD_REVOLVE_ATTR: the scratch block arguments
  /// that ad_revolve_state added, their kinds (AD_REV_*, as intptr_t) and,
  /// for snapshot lists, the forward init of the loop value they hold.
  ad_vec_t rev_arg, rev_kind, rev_val;
} ad_scope_t;

struct ad {
  eddy_ctx_t *ctx;
  const eddy_ad_options_t *opts;
  int32_t num_checkpointed; ///< loops split by ad_checkpoint_loops
  eddy_module_t *m;
  eddy_ptrmap_t repl; ///< old value -> new value after an op was rebuilt
  eddy_ad_stats_t *stats;
  /// Values that depend on a wrt argument (activity analysis): only those
  /// get adjoints. Values made after the analysis count as active.
  eddy_ptrmap_t active;
  eddy_ptrmap_t known; ///< every value that existed during the analysis
  /// Reversible loops (after the split) -> the inverse of one step.
  eddy_ptrmap_t inverse;
  bool active_done;
};

/// Splits every ctl.while of func whose loop-memory policy (its
/// eddy.loop_memory attribute, else ad->opts) is checkpoint into a loop over
/// segments around a loop over the iterations of one segment, marked
/// ad.remat: the gradient stores the loop state once per segment and
/// recomputes each segment's intermediates (ad_checkpoint.c).
eddy_status_t ad_checkpoint_loops(ad_t *ad, eddy_op_t *func);
/// The attribute that marks a ctl.while whose results the gradient
/// recomputes from its operands instead of storing them per iteration of
/// an enclosing loop.
#define AD_REMAT_ATTR "ad.remat"

/// The attribute (an integer, the number of snapshots) that marks a loop
/// over single steps whose states the gradient rebuilds from snapshots on
/// the binomial schedule instead of storing them (ad_checkpoint.c).
#define AD_REVOLVE_ATTR "ad.revolve"
/// The attribute (true) that marks a loop over single steps whose states
/// the gradient rebuilds by inverting each step (ad_reversible.c).
#define AD_REVERSIBLE_ATTR "ad.reversible"
/// Kinds of the gradient-loop arguments that ad_revolve_state and
/// ad_reversible_state add: the forward trip count, the snapshot positions,
/// a snapshot list (init: the forward init it starts with), a loop value
/// after the forward loop (init: that result).
enum { AD_REV_COUNT, AD_REV_POSITIONS, AD_REV_SNAPSHOTS, AD_REV_FINAL };
/// Adds an argument of type t to the gradient body of s, of kind k (val:
/// the forward value its init derives from), yielding itself until
/// ad_rev_set_next says otherwise.
eddy_value_t *ad_rev_arg(ad_scope_t *s, const eddy_type_t *t, int k,
                         eddy_value_t *val);
void ad_rev_set_next(ad_scope_t *s, eddy_value_t *arg, eddy_value_t *v);
/// The loop values of s's forward loop that change (their positions in
/// comp[0..*nc)) and the visible init of each one passed through unchanged
/// (fixed[k]; NULL for the others).
eddy_status_t ad_loop_state(ad_scope_t *s, size_t *comp, size_t *nc,
                            eddy_value_t **fixed);
/// Builds, for loop w (policy reversible), the inverse of one iteration of
/// its body: a detached block whose arguments are the loop values after an
/// iteration and which yields them before it (kept in ad->inverse for the
/// loop over steps w becomes). A body whose update of some loop value is
/// not invertible (not that value plus or minus terms computed without it)
/// is an error naming the op.
eddy_status_t ad_reversible_inverse(ad_t *ad, eddy_op_t *w,
                                    eddy_block_t **out_block);
/// Makes the loop values of s's forward loop (marked AD_REVERSIBLE_ATTR)
/// visible in its gradient body: the gradient loop carries the state after
/// the step it reverses and inverts that step; records them in s->vis.
eddy_status_t ad_reversible_state(ad_scope_t *s);
/// Makes the loop values of s's forward loop (marked AD_REVOLVE_ATTR)
/// visible in its gradient body: rebuilt there, step by step, from
/// snapshots that the gradient loop carries; records them in s->vis.
eddy_status_t ad_revolve_state(ad_scope_t *s);
/// The init, in the parent scope s, of revolve argument number r of the
/// gradient loop of scope bs (count: the forward trip count).
eddy_status_t ad_revolve_init(ad_scope_t *s, ad_scope_t *bs, size_t r,
                              eddy_value_t *count, eddy_value_t **out);
/// Maps (in map) every value that op reads, in its operands and in its
/// regions, that is defined neither inside op nor in `home` (or inside an
/// op of home; home may be NULL) to its visible value in s (ad_fwd).
eddy_status_t ad_map_free(ad_scope_t *s, eddy_op_t *op,
                          const eddy_block_t *home, eddy_ptrmap_t *map);

/// Creates "ctl.while"(inits) with the given loop types and empty blocks.
eddy_status_t ad_build_while(eddy_builder_t *b, eddy_value_t *const *inits,
                             const eddy_type_t *const *types, size_t n,
                             eddy_op_t **out_op);

/// Inlines every ctl.call in func (recursion is an error).
eddy_status_t ad_inline_calls(ad_t *ad, eddy_op_t *func);
/// Marks the values of func that depend on its arguments wrt[0..n).
void ad_activity(ad_t *ad, eddy_op_t *func, const size_t *wrt, size_t n);
/// v is differentiable and may depend on a wrt argument.
bool ad_active(ad_t *ad, const eddy_value_t *v);

void ad_scope_init(ad_scope_t *s, ad_t *ad, ad_scope_t *parent,
                   ad_scope_kind_t kind);
void ad_scope_destroy(ad_scope_t *s);
/// A detached block to build a scope's gradient ops in.
eddy_status_t ad_scratch_block(ad_t *ad, eddy_block_t **out_block);
/// Copies the ops of src to the end of dst, src's arguments read as dst's
/// first src->num_args arguments.
void ad_clone_block(const eddy_block_t *src, eddy_block_t *dst);
/// Moves every op of from to the end of to.
void ad_move_ops(eddy_block_t *from, eddy_block_t *to);
/// Follows the replacements recorded when ops were rebuilt.
eddy_value_t *ad_resolve(ad_t *ad, eddy_value_t *v);
void ad_replace(ad_t *ad, eddy_value_t *from, eddy_value_t *to);

/// True for float tensors and lists (of lists) of float tensors.
bool ad_is_diff(const eddy_type_t *t);
/// True when v is defined in block b or inside an op of b, at any depth.
bool ad_in_block(const eddy_value_t *v, const eddy_block_t *b);
/// True when v is defined in block b (an op result or a block arg).
bool ad_defined_in(const eddy_value_t *v, const eddy_block_t *b);

/// Builds an op at the scope's insertion point (result types inferred when
/// types is NULL).
eddy_status_t ad_emit(ad_scope_t *s, const char *name,
                      eddy_value_t *const *operands, size_t n,
                      const eddy_named_attr_t *attrs, size_t na,
                      eddy_value_t **out);
eddy_status_t ad_emit_typed(ad_scope_t *s, const char *name,
                            eddy_value_t *const *operands, size_t n,
                            const eddy_named_attr_t *attrs, size_t na,
                            const eddy_type_t *const *types, size_t nt,
                            eddy_op_t **out_op);
eddy_status_t ad_un(ad_scope_t *s, const char *name, eddy_value_t *x,
                    eddy_value_t **out);
eddy_status_t ad_bin(ad_scope_t *s, const char *name, eddy_value_t *a,
                     eddy_value_t *b, eddy_value_t **out);
/// A rank-0 constant of dtype dt.
eddy_status_t ad_scalar(ad_scope_t *s, eddy_dtype_t dt, double v,
                        eddy_value_t **out);
/// Zero of type t; src (visible in s) gives the runtime shape when t is not
/// static (a list: its length).
eddy_status_t ad_zeros(ad_scope_t *s, const eddy_type_t *t, eddy_value_t *src,
                       eddy_value_t **out);
/// Zeros shaped like the forward value v.
eddy_status_t ad_zeros_like_fwd(ad_scope_t *s, eddy_value_t *v,
                                eddy_value_t **out);
eddy_status_t ad_attr_i64s(ad_t *ad, const char *name, const int64_t *v,
                           size_t n, eddy_named_attr_t *out);

/// Makes the forward value v visible in s's backward block.
eddy_status_t ad_fwd(ad_scope_t *s, eddy_value_t *v, eddy_value_t **out);
/// core.dim(v){index} computed in the forward code and made visible.
eddy_status_t ad_fwd_dim(ad_scope_t *s, eddy_value_t *v, int64_t index,
                         eddy_value_t **out);
/// tl.length(list) computed in the forward code and made visible.
eddy_status_t ad_fwd_len(ad_scope_t *s, eddy_value_t *list,
                         eddy_value_t **out);

/// Adds g to the adjoint of the forward value v (nothing for values that
/// are not differentiable).
eddy_status_t ad_adj_add(ad_scope_t *s, eddy_value_t *v, eddy_value_t *g);
/// The adjoint of v summed so far in s, for a nested gradient loop to go on
/// summing into (its init): the local adjoint, or s's accumulator of a
/// value s captures (made, with nothing added, when s is a loop that has
/// none yet). NULL when there is none to continue; then the nested loop
/// starts from zeros and its result is added (ad_adj_add).
eddy_status_t ad_adj_take(ad_scope_t *s, eddy_value_t *v, eddy_value_t **out);
/// Replaces the adjoint of v in s by g: the sum a nested loop went on with.
void ad_adj_set(ad_scope_t *s, eddy_value_t *v, eddy_value_t *g);
/// Sums g down to v's shape (undoing broadcasting), then ad_adj_add.
eddy_status_t ad_adj_add_reduced(ad_scope_t *s, eddy_value_t *v,
                                 eddy_value_t *g);
/// The adjoint of local value v, or NULL.
eddy_value_t *ad_adj_get(ad_scope_t *s, eddy_value_t *v);

/// Walks the forward block of s backwards, applying the gradient rules.
eddy_status_t ad_reverse_block(ad_scope_t *s);

/// The gradient rule of one op; g[i] is the adjoint of result i or NULL.
typedef eddy_status_t (*ad_rule_fn)(ad_scope_t *s, eddy_op_t *op,
                                    eddy_value_t **g);
/// op's rule, from the table indexed by opcode (rules.c; ctl.if and
/// ctl.while included). NULL with *known true: the op passes no gradient
/// (integer, comparison...). NULL with *known false: no rule.
ad_rule_fn ad_rule_lookup(const eddy_op_t *op, bool *known);

/// core.matmul of a and b, either transposed (the gradient of a matmul and
/// of a static gather use it).
eddy_status_t ad_matmul(ad_scope_t *s, eddy_value_t *a, eddy_value_t *b,
                        bool ta, bool tb, eddy_value_t **out);

/// Rules of data movement with possibly dynamic shapes (rules_movement.c).
eddy_status_t ad_rule_concat(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g);
eddy_status_t ad_rule_split(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g);
eddy_status_t ad_rule_slice(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g);
eddy_status_t ad_rule_pad(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g);
eddy_status_t ad_rule_gather(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g);
/// rules_window.c: conv2d and the pools, and their gradient ops.
eddy_status_t ad_rule_window(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g);

eddy_status_t ad_if_grad(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g);
eddy_status_t ad_while_grad(ad_scope_t *s, eddy_op_t *op, eddy_value_t **g);

#endif
