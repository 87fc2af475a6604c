/// Types of TensorFlow's variant values that eddy can represent: a
/// TensorList of TensorLists (the accumulators of nested while_loops, the
/// "Functional while_loop" RFC) and an Optional of one value (cond_v2 keeps
/// a branch's intermediates in Optionals for the gradient: a tensor, a
/// loop's trip count, or the accumulator list of a loop in the branch).
///
/// The GraphDef types both as "variant", so each one's type is found from
/// the graph, value by value, by following its definition:
/// - OptionalFromValue(x) is an Optional of x's type: `Toutput_types` for a
///   tensor, x's own variant type (traced the same way) for a list;
/// - OptionalNone is an Optional of what another branch of its If or Case
///   returns at the same output (cond_v2 makes all branches return the same
///   types, an OptionalNone where the branch has no such intermediate), or,
///   in a lowered Case (freezing inlines a function and lowers its Case to
///   _SwitchN and Merge), of what another input of the Merge it reaches
///   holds;
/// - a TensorList whose element_dtype is variant holds what the graph
///   pushes or sets onto it: directly, or as a While's loop value, in the
///   While's body; so does a v1 stack of elem_type variant (a v1 gradient
///   of a loop keeps a function call's Optionals on one);
/// - outputs of While, If, Case, Identity, Switch, _SwitchN, Merge (any
///   input), list updates and calls are what their
///   inputs or the called function's results are, and a function's
///   argument is what its callers pass (a gradient of a gradient wraps the
///   first gradient's values, which came in as arguments, again).
/// An Optional is a list of at most one element (`!tl.list<T>`). Tensor
/// shapes are left unknown, so that both branches of an If agree. When the
/// trace ends anywhere else (a function argument, a deeper nesting),
/// nothing is guessed: the caller reports the value as untyped.
#include "dialects/tf/tf_import_internal.h"

#define DT(x) TENSORFLOW__DATA_TYPE__DT_##x

enum { MAX_DEPTH = 32 };

/// The nodes of one graph body: the GraphDef's (fdef NULL) or a function's.
typedef struct vscope {
  Tensorflow__NodeDef *const *defs;
  size_t n;
  const Tensorflow__FunctionDef *fdef;
} vscope_t;

static const eddy_type_t *vt_ref(tf_importer_t *im, vscope_t sc,
                                 const char *ref, int depth);

static bool op_is(const Tensorflow__NodeDef *n, const char *op) {
  return n && n->op && strcmp(n->op, op) == 0;
}

static const Tensorflow__AttrValue *node_attr(const Tensorflow__NodeDef *n,
                                              const char *name) {
  return eddy_tf_attr_find(n->attr, n->n_attr, name);
}

static int attr_type(const Tensorflow__NodeDef *n, const char *name) {
  const Tensorflow__AttrValue *v = node_attr(n, name);
  return v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TYPE ? (int)v->type
                                                                  : 0;
}

/// The single dtype of a list(type) attribute; 0 otherwise.
static int attr_one_type(const Tensorflow__NodeDef *n, const char *name) {
  const Tensorflow__AttrValue *v = node_attr(n, name);
  if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST ||
      v->list->n_type != 1)
    return 0;
  return (int)v->list->type[0];
}

static vscope_t graph_scope(const tf_importer_t *im) {
  return (vscope_t){im->gd->node, im->gd->n_node, NULL};
}

static vscope_t func_scope(const Tensorflow__FunctionDef *f) {
  return (vscope_t){f->node_def, f->n_node_def, f};
}

/// The function a func-valued attribute of n names, or NULL.
static const Tensorflow__FunctionDef *
attr_func(tf_importer_t *im, const Tensorflow__NodeDef *n, const char *name) {
  const Tensorflow__AttrValue *v = node_attr(n, name);
  if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_FUNC ||
      !v->func->name)
    return NULL;
  tf_func_t *fn = tf_importer_find_func(im, v->func->name);
  return fn ? fn->fdef : NULL;
}

/// A reference "node", "node:i" (the graph) or "node:out_arg:i" (a
/// function), split: the node (NULL for a function argument or an unknown
/// name), the output argument (NULL when not named) and the index.
typedef struct vref {
  const Tensorflow__NodeDef *node;
  const char *arg;
  size_t arg_len;
  uint32_t index;
} vref_t;

static vref_t resolve(vscope_t sc, const char *ref) {
  vref_t r = {0};
  if (!ref || ref[0] == '^')
    return r;
  const char *c1 = strchr(ref, ':');
  const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
  size_t len = c1 ? (size_t)(c1 - ref) : strlen(ref);
  const char *num = c2 ? c2 + 1 : c1 ? c1 + 1 : NULL;
  for (const char *p = num; p && *p >= '0' && *p <= '9'; p++)
    r.index = r.index * 10 + (uint32_t)(*p - '0');
  if (c2) {
    r.arg = c1 + 1;
    r.arg_len = (size_t)(c2 - c1 - 1);
  }
  for (size_t i = 0; i < sc.n; i++) {
    const char *name = sc.defs[i]->name;
    if (name && strlen(name) == len && strncmp(name, ref, len) == 0) {
      r.node = sc.defs[i];
      break;
    }
  }
  return r;
}

static bool arg_is(const vref_t *r, const char *name) {
  return r->arg && strlen(name) == r->arg_len &&
         strncmp(r->arg, name, r->arg_len) == 0;
}

/// True when ref names output 0 of node n, or (n NULL) the function
/// argument `arg`.
static bool ref_is(vscope_t sc, const char *ref, const Tensorflow__NodeDef *n,
                   const char *arg) {
  if (!ref || ref[0] == '^')
    return false;
  if (!n)
    return arg && strcmp(ref, arg) == 0;
  vref_t r = resolve(sc, ref);
  return r.node == n && r.index == 0;
}

/// The type of a tensor of TensorFlow dtype dt, shape unknown; NULL for a
/// dtype eddy does not have.
static const eddy_type_t *tensor_of(tf_importer_t *im, int dt) {
  eddy_dtype_t e;
  if (!eddy_tf_dtype_to_eddy(dt, &e))
    return NULL;
  return eddy_ir_tensor_type_get(im->ctx, e, EDDY_RANK_UNKNOWN, NULL);
}

static const eddy_type_t *list_of(tf_importer_t *im, const eddy_type_t *t) {
  return t ? eddy_ir_list_type_get(im->ctx, t) : NULL;
}

static const eddy_type_t *elem_of(const eddy_type_t *t) {
  return t && t->kind == EDDY_TYPE_LIST ? t->elem : NULL;
}

/// What function f returns at output r.
static const eddy_type_t *vt_result(tf_importer_t *im,
                                    const Tensorflow__FunctionDef *f,
                                    uint32_t r, int depth) {
  if (!f || !f->signature || r >= f->signature->n_output_arg)
    return NULL;
  const char *name = f->signature->output_arg[r]->name;
  for (size_t k = f->n_ret; k-- > 0;)
    if (strcmp(f->ret[k]->key, name) == 0)
      return vt_ref(im, func_scope(f), f->ret[k]->value, depth + 1);
  return NULL;
}

/// The items pushed or set onto the list `l` (output 0 of node n of sc, or
/// the function argument arg when n is NULL), or pushed on the v1 stack it
/// is, looking through Identity, the v1 loop ops that carry it (Enter,
/// Merge, Switch) and into the bodies of the While loops that carry it.
static const eddy_type_t *vt_pushed(tf_importer_t *im, vscope_t sc,
                                    const Tensorflow__NodeDef *n,
                                    const char *arg, int depth) {
  if (depth > MAX_DEPTH)
    return NULL;
  // Every output of a switch is the list (only one is live).
  bool any_out = op_is(n, "Switch") || op_is(n, "_SwitchN");
  for (size_t i = 0; i < sc.n; i++) {
    const Tensorflow__NodeDef *u = sc.defs[i];
    const eddy_type_t *t = NULL;
    bool reads0 =
        u->n_input > 0 && (any_out ? resolve(sc, u->input[0]).node == n
                                   : ref_is(sc, u->input[0], n, arg));
    if ((op_is(u, "TensorListPushBack") || op_is(u, "TensorListSetItem")) &&
        u->n_input > 1 && reads0) {
      size_t item = op_is(u, "TensorListPushBack") ? 1 : 2;
      if (u->n_input > item)
        t = vt_ref(im, sc, u->input[item], depth + 1);
      // The list it makes holds the same items.
      if (!t)
        t = vt_pushed(im, sc, u, NULL, depth + 1);
    } else if (op_is(u, "StackPushV2") && u->n_input > 1 && reads0) {
      t = vt_ref(im, sc, u->input[1], depth + 1);
    } else if ((op_is(u, "Identity") || op_is(u, "Enter") ||
                op_is(u, "Switch") || op_is(u, "_SwitchN")) &&
               reads0) {
      t = vt_pushed(im, sc, u, NULL, depth + 1);
    } else if (op_is(u, "Merge")) {
      // A v1 loop value (its NextIteration, the list after the pushes, is
      // not followed: the pushes are found before it).
      bool reads = false;
      for (size_t k = 0; k < u->n_input && !reads; k++)
        reads = any_out ? resolve(sc, u->input[k]).node == n
                        : ref_is(sc, u->input[k], n, arg);
      if (reads)
        t = vt_pushed(im, sc, u, NULL, depth + 1);
    } else if (op_is(u, "While") || op_is(u, "StatelessWhile")) {
      const Tensorflow__FunctionDef *body = attr_func(im, u, "body");
      for (size_t j = 0; j < u->n_input && !t && body; j++)
        if (ref_is(sc, u->input[j], n, arg) && j < body->signature->n_input_arg)
          t = vt_pushed(im, func_scope(body), NULL,
                        body->signature->input_arg[j]->name, depth + 1);
    }
    if (t)
      return t;
  }
  return NULL;
}

static bool is_case(const Tensorflow__NodeDef *n) {
  return op_is(n, "Case") || op_is(n, "StatelessCase");
}

/// Branch i of an If (0: then, 1: else) or a Case (`branches`); NULL past
/// the last. *named is false when the branch exists but names no function
/// of the library.
static const Tensorflow__FunctionDef *branch_func(tf_importer_t *im,
                                                  const Tensorflow__NodeDef *n,
                                                  size_t i, bool *named) {
  *named = false;
  if (op_is(n, "If") || op_is(n, "StatelessIf")) {
    if (i > 1)
      return NULL;
    *named = true;
    return attr_func(im, n, i == 0 ? "then_branch" : "else_branch");
  }
  const Tensorflow__AttrValue *v = is_case(n) ? node_attr(n, "branches") : NULL;
  if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST ||
      i >= v->list->n_func)
    return NULL;
  *named = true;
  const char *name = v->list->func[i]->name;
  tf_func_t *fn = name ? tf_importer_find_func(im, name) : NULL;
  return fn ? fn->fdef : NULL;
}

/// Whether function f is a branch of If or Case n.
static bool has_branch(tf_importer_t *im, const Tensorflow__NodeDef *n,
                       const Tensorflow__FunctionDef *f) {
  bool named = true;
  for (size_t i = 0; named; i++)
    if (branch_func(im, n, i, &named) == f && named)
      return true;
  return false;
}

/// What the branches of If or Case n return at output r: the first branch
/// but `skip` (NULL: none) whose result there types.
static const eddy_type_t *vt_branches(tf_importer_t *im,
                                      const Tensorflow__NodeDef *n,
                                      const Tensorflow__FunctionDef *skip,
                                      uint32_t r, int depth) {
  bool named = true;
  for (size_t i = 0; named; i++) {
    const Tensorflow__FunctionDef *b = branch_func(im, n, i, &named);
    const eddy_type_t *t = b && b != skip ? vt_result(im, b, r, depth) : NULL;
    if (t)
      return t;
  }
  return NULL;
}

/// The Optional an OptionalNone (output 0 of node n of sc) stands for in a
/// lowered Case: what another input of a Merge it reaches through Identity
/// holds.
static const eddy_type_t *vt_none_merged(tf_importer_t *im, vscope_t sc,
                                         const Tensorflow__NodeDef *n,
                                         int depth) {
  if (depth > MAX_DEPTH)
    return NULL;
  for (size_t i = 0; i < sc.n; i++) {
    const Tensorflow__NodeDef *u = sc.defs[i];
    bool reads = false;
    for (size_t k = 0; k < u->n_input && !reads; k++)
      reads = ref_is(sc, u->input[k], n, NULL);
    if (!reads)
      continue;
    const eddy_type_t *t = NULL;
    if (op_is(u, "Identity"))
      t = vt_none_merged(im, sc, u, depth + 1);
    else if (op_is(u, "Merge"))
      for (size_t k = 0; k < u->n_input && !t; k++)
        if (!ref_is(sc, u->input[k], n, NULL))
          t = vt_ref(im, sc, u->input[k], depth + 1);
    if (t)
      return t;
  }
  return NULL;
}

/// The Optional an OptionalNone (node n of sc) stands for: what another
/// branch of an If or Case that calls sc returns at the same output, or
/// (a lowered Case) what the Merge it reaches takes from another branch.
static const eddy_type_t *vt_none(tf_importer_t *im, vscope_t sc,
                                  const Tensorflow__NodeDef *n, int depth) {
  const eddy_type_t *merged = vt_none_merged(im, sc, n, depth + 1);
  if (merged)
    return merged;
  const Tensorflow__FunctionDef *f = sc.fdef;
  if (!f || !f->signature || !f->signature->name)
    return NULL;
  for (uint32_t r = 0; r < f->signature->n_output_arg; r++) {
    const char *name = f->signature->output_arg[r]->name;
    bool returned = false;
    for (size_t k = 0; k < f->n_ret && !returned; k++)
      returned = strcmp(f->ret[k]->key, name) == 0 &&
                 ref_is(sc, f->ret[k]->value, n, NULL);
    if (!returned)
      continue;
    // Every If and Case of the graph and the library that has f as a
    // branch.
    for (size_t s = 0; s <= im->num_funcs; s++) {
      vscope_t cs =
          s < im->num_funcs ? func_scope(im->funcs[s].fdef) : graph_scope(im);
      for (size_t i = 0; i < cs.n; i++) {
        const Tensorflow__NodeDef *u = cs.defs[i];
        const eddy_type_t *ty =
            has_branch(im, u, f) ? vt_branches(im, u, f, r, depth) : NULL;
        if (ty)
          return ty;
      }
    }
  }
  return NULL;
}

/// The type of output `out` of node n of sc when it is a variant.
static const eddy_type_t *vt_out(tf_importer_t *im, vscope_t sc,
                                 const Tensorflow__NodeDef *n, uint32_t out,
                                 int depth) {
  if (depth > MAX_DEPTH || !n)
    return NULL;
  if (op_is(n, "OptionalFromValue")) {
    int dt = attr_one_type(n, "Toutput_types");
    if (!dt || n->n_input < 1)
      return NULL; // no component, or several
    return list_of(im, eddy_tf_dtype_base(dt) == DT(VARIANT)
                           ? vt_ref(im, sc, n->input[0], depth + 1)
                           : tensor_of(im, dt));
  }
  if (op_is(n, "OptionalNone"))
    return vt_none(im, sc, n, depth);
  if (op_is(n, "EmptyTensorList") || op_is(n, "TensorListReserve") ||
      op_is(n, "TensorListFromTensor")) {
    int dt = attr_type(n, "element_dtype");
    if (eddy_tf_dtype_base(dt) != DT(VARIANT))
      return list_of(im, tensor_of(im, dt));
    return list_of(im, vt_pushed(im, sc, n, NULL, depth + 1));
  }
  if (op_is(n, "StackV2")) { // a v1 gradient's stack of Optionals
    int dt = attr_type(n, "elem_type");
    if (eddy_tf_dtype_base(dt) != DT(VARIANT))
      return list_of(im, tensor_of(im, dt));
    return list_of(im, vt_pushed(im, sc, n, NULL, depth + 1));
  }
  if (op_is(n, "TensorListPopBack") || op_is(n, "TensorListGetItem") ||
      op_is(n, "OptionalGetValue") || op_is(n, "StackPopV2")) {
    const eddy_type_t *l =
        n->n_input ? vt_ref(im, sc, n->input[0], depth + 1) : NULL;
    // PopBack's output 0 is the list, output 1 the element.
    return op_is(n, "TensorListPopBack") && out == 0 ? l : elem_of(l);
  }
  // A vector of lists (Pack of lists, TensorListPushBackBatch, and Unpack
  // of it) holds lists of one type.
  if (op_is(n, "TensorListPushBack") || op_is(n, "TensorListSetItem") ||
      op_is(n, "TensorListPushBackBatch") || op_is(n, "Pack") ||
      op_is(n, "Unpack") || op_is(n, "Identity") || op_is(n, "Enter") ||
      op_is(n, "Exit") || op_is(n, "NextIteration") || op_is(n, "Switch") ||
      op_is(n, "_SwitchN") || op_is(n, "ZerosLike"))
    return n->n_input ? vt_ref(im, sc, n->input[0], depth + 1) : NULL;
  if (op_is(n, "AddN") || op_is(n, "Merge")) {
    // A sum of lists or Optionals (of gradients), or the join of a lowered
    // Case's branches (one of which may be an OptionalNone): what any
    // input holds.
    const eddy_type_t *t = NULL;
    for (size_t i = 0; i < n->n_input && !t; i++)
      t = vt_ref(im, sc, n->input[i], depth + 1);
    return t;
  }
  if (op_is(n, "IdentityN") || op_is(n, "While") || op_is(n, "StatelessWhile"))
    return out < n->n_input ? vt_ref(im, sc, n->input[out], depth + 1) : NULL;
  if (op_is(n, "If") || op_is(n, "StatelessIf") || is_case(n))
    return vt_branches(im, n, NULL, out, depth);
  if (op_is(n, "PartitionedCall") || op_is(n, "StatefulPartitionedCall"))
    return vt_result(im, attr_func(im, n, "f"), out, depth);
  return NULL;
}

/// What the callers of function sc pass as its argument j: operand j of a
/// While, a call, or (after the predicate or index) an If or Case.
static const eddy_type_t *vt_arg(tf_importer_t *im, vscope_t sc, size_t j,
                                 int depth) {
  const char *fname = sc.fdef->signature->name;
  for (size_t s = 0; s <= im->num_funcs; s++) {
    vscope_t cs =
        s < im->num_funcs ? func_scope(im->funcs[s].fdef) : graph_scope(im);
    for (size_t i = 0; i < cs.n; i++) {
      const Tensorflow__NodeDef *u = cs.defs[i];
      size_t off = 0;
      bool calls = false;
      if (op_is(u, "If") || op_is(u, "StatelessIf") || is_case(u)) {
        off = 1;
        calls = has_branch(im, u, sc.fdef);
      } else if (op_is(u, "While") || op_is(u, "StatelessWhile")) {
        calls = attr_func(im, u, "body") == sc.fdef ||
                attr_func(im, u, "cond") == sc.fdef;
      } else if (op_is(u, "PartitionedCall") ||
                 op_is(u, "StatefulPartitionedCall")) {
        calls = attr_func(im, u, "f") == sc.fdef;
      } else {
        calls = fname && u->op && strcmp(u->op, fname) == 0;
      }
      const eddy_type_t *t = calls && off + j < u->n_input
                                 ? vt_ref(im, cs, u->input[off + j], depth + 1)
                                 : NULL;
      if (t)
        return t;
    }
  }
  return NULL;
}

static const eddy_type_t *vt_ref(tf_importer_t *im, vscope_t sc,
                                 const char *ref, int depth) {
  if (depth > MAX_DEPTH)
    return NULL;
  vref_t r = resolve(sc, ref);
  const void *key = NULL;
  size_t arg = 0;
  if (r.node) {
    uint32_t out = r.index;
    if (op_is(r.node, "TensorListPopBack") && arg_is(&r, "tensor"))
      out = 1; // the element, after the list
    // One key per output: outputs are few, NodeDefs much larger.
    key = (const char *)r.node + out;
    r.index = out;
  } else if (sc.fdef && ref && !strchr(ref, ':')) {
    const Tensorflow__OpDef *sig = sc.fdef->signature;
    for (arg = 0; arg < sig->n_input_arg; arg++)
      if (strcmp(sig->input_arg[arg]->name, ref) == 0)
        break;
    if (arg < sig->n_input_arg)
      key = sig->input_arg[arg];
  }
  if (!key)
    return NULL;
  void *known = eddy_ptrmap_get(&im->variant_types, key);
  if (known)
    return known == key ? NULL : known; // key: being traced, or untyped
  eddy_ptrmap_put(&im->variant_types, key, (void *)key);
  const eddy_type_t *t = r.node ? vt_out(im, sc, r.node, r.index, depth)
                                : vt_arg(im, sc, arg, depth);
  if (t)
    eddy_ptrmap_put(&im->variant_types, key, (void *)t);
  return t;
}

/// What the readers of output 0 of node n of sc (or, n NULL, of the
/// function argument arg) take it to be, when it is an Optional: the
/// `output_types` of an OptionalGetValue reading it (through Identity, and
/// into the branches of an If or Case it is passed to), an Optional of
/// an Optional where that value is itself read so.
static const eddy_type_t *vt_expect(tf_importer_t *im, vscope_t sc,
                                    const Tensorflow__NodeDef *n,
                                    const char *arg, int depth) {
  if (depth > MAX_DEPTH)
    return NULL;
  for (size_t i = 0; i < sc.n; i++) {
    const Tensorflow__NodeDef *u = sc.defs[i];
    const eddy_type_t *t = NULL;
    bool reads0 = u->n_input > 0 && ref_is(sc, u->input[0], n, arg);
    if (op_is(u, "OptionalGetValue") && reads0) {
      int dt = attr_one_type(u, "output_types");
      if (dt && eddy_tf_dtype_base(dt) != DT(VARIANT))
        t = list_of(im, tensor_of(im, dt));
      else if (dt)
        t = list_of(im, vt_expect(im, sc, u, NULL, depth + 1));
    } else if (op_is(u, "Identity") && reads0) {
      t = vt_expect(im, sc, u, NULL, depth + 1);
    } else if (op_is(u, "If") || op_is(u, "StatelessIf") || is_case(u)) {
      for (size_t k = 1; k < u->n_input && !t; k++) {
        if (!ref_is(sc, u->input[k], n, arg))
          continue;
        bool named = true;
        for (size_t b = 0; named && !t; b++) {
          const Tensorflow__FunctionDef *f = branch_func(im, u, b, &named);
          if (f && f->signature && k - 1 < f->signature->n_input_arg)
            t = vt_expect(im, func_scope(f), NULL,
                          f->signature->input_arg[k - 1]->name, depth + 1);
        }
      }
    }
    if (t)
      return t;
  }
  return NULL;
}

const eddy_type_t *tf_variant_arg_expected(tf_body_t *bd, size_t i) {
  const Tensorflow__FunctionDef *f = bd->fn ? bd->fn->fdef : NULL;
  if (!f || !f->signature || i >= f->signature->n_input_arg)
    return NULL;
  return vt_expect(bd->im, func_scope(f), NULL,
                   f->signature->input_arg[i]->name, 0);
}

const eddy_type_t *tf_variant_type(tf_body_t *bd, const tf_node_t *nd,
                                   uint32_t out) {
  vscope_t sc = bd->fn ? func_scope(bd->fn->fdef) : graph_scope(bd->im);
  return vt_out(bd->im, sc, nd->def, out, 0);
}
