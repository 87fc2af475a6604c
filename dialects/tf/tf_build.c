/// One graph body's nodes to ops, in topological order.
///
/// The back edges of v1 loops (NextIteration -> Merge) are left out of the
/// order: a Merge is built with a stand-in for its back-edge input, which is
/// set once the NextIteration exists. tf.Merge has the BACKEDGE trait, so
/// that later definition verifies.
///
/// Control inputs become !df.token values (docs/dialects/df.md): the
/// token of a node is df.control of its outputs, and a node waits on its
/// control inputs through df.after on its first data input, or on each of
/// its outputs when it has no data input. A node with no outputs (NoOp)
/// gets one token result instead, and takes its control inputs as
/// operands when it has no data inputs.
#include "dialects/tf/tf_import_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DT(x) TENSORFLOW__DATA_TYPE__DT_##x

static const char *plural(size_t n) { return n == 1 ? "" : "s"; }

/// ---- Types ----

/// The type of an output of TensorFlow dtype tf_dt; like (may be NULL) is
/// the type of the input or function result it is known to equal.
static eddy_status_t type_for(tf_body_t *bd, const tf_node_t *nd, int tf_dt,
                              const eddy_type_t *like, uint32_t j,
                              const eddy_type_t **out) {
  int base = eddy_tf_dtype_base(tf_dt);
  if (base == DT(VARIANT) || base == DT(RESOURCE)) {
    if (like && like->kind == EDDY_TYPE_LIST) {
      *out = like;
      return NULL;
    }
    // Optionals and lists of lists, from the graph (tf_variant.c).
    const eddy_type_t *vt =
        base == DT(VARIANT) ? tf_variant_type(bd, nd, j) : NULL;
    if (vt) {
      *out = vt;
      return NULL;
    }
    return tf_error(bd, nd, EDDY_ERR_UNSUPPORTED,
                    "cannot type output #%u: its dtype is %s and no input "
                    "or function result says what it holds",
                    j, eddy_tf_dtype_name(tf_dt));
  }
  eddy_dtype_t dt;
  if (!eddy_tf_dtype_to_eddy(tf_dt, &dt))
    return tf_error(bd, nd, EDDY_ERR_UNSUPPORTED,
                    "output #%u has dtype %s, which eddy does not support", j,
                    eddy_tf_dtype_name(tf_dt));
  // like has the output's shape (Cast: not its dtype).
  if (like && like->kind == EDDY_TYPE_TENSOR)
    *out = like->dtype == dt ? like
                             : eddy_ir_type_with_dtype(bd->im->ctx, like, dt);
  else
    *out = eddy_ir_tensor_type_get(bd->im->ctx, dt, EDDY_RANK_UNKNOWN, NULL);
  return NULL;
}

static eddy_status_t type_attr(tf_body_t *bd, const tf_node_t *nd,
                               const char *name, int *out) {
  const Tensorflow__AttrValue *v = tf_node_attr(nd, name);
  if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TYPE)
    return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                    "%s needs the type attribute '%s'", nd->def->op, name);
  *out = (int)v->type;
  return NULL;
}

static const eddy_type_t *operand_type(eddy_value_t *const *ops, size_t n,
                                       int i) {
  return i >= 0 && (size_t)i < n && ops[i] ? ops[i]->type : NULL;
}

/// Result types from the op table. hints (may be NULL) are the called
/// functions' result types, used where the table names no input.
static eddy_status_t table_types(tf_body_t *bd, const tf_node_t *nd,
                                 eddy_value_t *const *ops, size_t nops,
                                 const eddy_type_t *const *hints,
                                 const eddy_type_t **types) {
  eddy_ctx_t *ctx = bd->im->ctx;
  for (uint32_t a = 0; a < nd->num_out_args; a++) {
    const eddy_tf_out_spec_t *s = &nd->info->outs[a];
    for (uint32_t k = 0; k < nd->out_arg_len[a]; k++) {
      uint32_t j = nd->out_arg_start[a] + k;
      const eddy_type_t *like = operand_type(ops, nops, s->like);
      if (s->like < 0 && hints)
        like = hints[j];
      // The element of a list of lists (TensorListPopBack's tensor,
      // TensorListGetItem's item) is an inner list; the value of an
      // Optional is its element.
      const eddy_type_t *l0 = operand_type(ops, nops, 0);
      if (!like && s->kind == EDDY_TF_OUT_ATTR &&
          strncmp(nd->def->op, "TensorList", 10) == 0 && l0 &&
          l0->kind == EDDY_TYPE_LIST && l0->elem->kind == EDDY_TYPE_LIST)
        like = l0->elem;
      if (!like && s->kind == EDDY_TF_OUT_TYPES &&
          strcmp(nd->def->op, "OptionalGetValue") == 0 && l0 &&
          l0->kind == EDDY_TYPE_LIST)
        like = l0->elem;
      int tdt = 0;
      switch (s->kind) {
      case EDDY_TF_OUT_ATTR:
        EDDY_RETURN_IF_ERROR(type_attr(bd, nd, s->attr, &tdt));
        EDDY_RETURN_IF_ERROR(type_for(bd, nd, tdt, like, j, &types[j]));
        break;
      case EDDY_TF_OUT_FIXED:
        EDDY_RETURN_IF_ERROR(type_for(bd, nd, s->fixed, like, j, &types[j]));
        break;
      case EDDY_TF_OUT_TYPES: {
        const Tensorflow__AttrValue *v = tf_node_attr(nd, s->attr);
        tdt = (int)v->list->type[k]; // counted by layout()
        if (s->like >= 0)
          like = operand_type(ops, nops, s->like + (int)k);
        EDDY_RETURN_IF_ERROR(type_for(bd, nd, tdt, like, j, &types[j]));
        break;
      }
      case EDDY_TF_OUT_LIST: {
        EDDY_RETURN_IF_ERROR(type_attr(bd, nd, s->attr, &tdt));
        eddy_dtype_t dt;
        if (eddy_tf_dtype_base(tdt) == DT(VARIANT)) {
          // A list of lists or of Optionals: typed like the list it
          // updates, else from the items the graph pushes (tf_variant.c).
          if (like && like->kind == EDDY_TYPE_LIST &&
              like->elem->kind == EDDY_TYPE_LIST) {
            types[j] = like;
            break;
          }
          const eddy_type_t *lt = tf_variant_type(bd, nd, j);
          if (!lt)
            return tf_error(bd, nd, EDDY_ERR_UNSUPPORTED,
                            "a TensorList of TensorLists or optionals "
                            "(%s = variant) cannot be typed: no item the "
                            "graph pushes or sets onto it says its type",
                            s->attr);
          types[j] = lt;
          break;
        }
        if (!eddy_tf_dtype_to_eddy(tdt, &dt))
          return tf_error(bd, nd, EDDY_ERR_UNSUPPORTED,
                          "lists of %s are not supported",
                          eddy_tf_dtype_name(tdt));
        if (like && like->kind == EDDY_TYPE_LIST && like->elem->dtype == dt) {
          types[j] = like;
        } else {
          const eddy_type_t *elem =
              eddy_ir_tensor_type_get(ctx, dt, EDDY_RANK_UNKNOWN, NULL);
          types[j] = eddy_ir_list_type_get(ctx, elem);
        }
        break;
      }
      case EDDY_TF_OUT_LIKE:
        if (!like)
          return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                          "output #%u takes the type of input #%d, which "
                          "the node does not have",
                          j, s->like);
        types[j] = like;
        break;
      }
    }
  }
  return NULL;
}

/// Shapes the graph declares ("_output_shapes", or "output_shapes" of the
/// functional ops) replace inferred tensor shapes: they are what
/// TensorFlow knew, including shapes that change across loop iterations.
static eddy_status_t declared_shapes(tf_body_t *bd, const tf_node_t *nd,
                                     const eddy_type_t **types) {
  const char *names[2] = {"_output_shapes", "output_shapes"};
  for (int w = 0; w < 2; w++) {
    const Tensorflow__AttrValue *v = tf_node_attr(nd, names[w]);
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST ||
        v->list->n_shape != nd->num_outs)
      continue;
    for (uint32_t j = 0; j < nd->num_outs; j++) {
      if (types[j]->kind != EDDY_TYPE_TENSOR)
        continue;
      const eddy_type_t *t;
      eddy_status_t st = eddy_tf_shape_type(bd->im->ctx, v->list->shape[j],
                                            types[j]->dtype, &t);
      if (st) {
        char prefix[96];
        snprintf(prefix, sizeof prefix, "attribute '%s': ", names[w]);
        return tf_error_wrap(bd, nd, prefix, st);
      }
      types[j] = t;
    }
    return NULL;
  }
  return NULL;
}

/// ---- Called functions ----

/// The function a func-valued attribute names.
static eddy_status_t callee_of(tf_body_t *bd, const tf_node_t *nd,
                               const char *name, tf_func_t **out) {
  *out = tf_importer_find_func(bd->im, name);
  if (!*out)
    return tf_error(bd, nd, EDDY_ERR_NOT_FOUND,
                    "function '%s' is not in the graph's library", name);
  return NULL;
}

/// Imports fn for a node passing args, checking the argument count, and
/// folds its result types into hints (generalized across branches).
static eddy_status_t import_callee(tf_body_t *bd, const tf_node_t *nd,
                                   tf_func_t *fn, eddy_value_t *const *args,
                                   size_t nargs, const eddy_type_t **hints,
                                   bool first) {
  const Tensorflow__OpDef *sig = fn->fdef->signature;
  if (sig->n_input_arg != nargs)
    return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                    "function '%s' takes %zu argument%s, the node passes %zu",
                    fn->name, sig->n_input_arg, plural(sig->n_input_arg),
                    nargs);
  const eddy_type_t *small[16] = {NULL};
  const eddy_type_t **types = small;
  if (nargs > 16) {
    types = malloc(nargs * sizeof *types);
    if (!types)
      return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  for (size_t i = 0; i < nargs; i++)
    types[i] = args[i]->type;
  eddy_op_t *f = NULL;
  eddy_status_t st = tf_import_function(bd->im, fn, types, nargs, &f);
  if (types != small)
    free(types);
  EDDY_RETURN_IF_ERROR(st);
  if (!hints)
    return NULL;
  const eddy_type_t *ft = eddy_ir_func_type(f);
  if (ft->num_outputs != nd->num_outs)
    return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                    "function '%s' returns %u value%s, the node has %u "
                    "output%s",
                    fn->name, ft->num_outputs, plural(ft->num_outputs),
                    nd->num_outs, plural(nd->num_outs));
  for (uint32_t j = 0; j < nd->num_outs; j++)
    hints[j] = first ? ft->outputs[j]
                     : eddy_ir_type_generalize(bd->im->ctx, hints[j],
                                               ft->outputs[j]);
  return NULL;
}

/// Imports the functions a functional op or a function call uses; fills
/// hints with their result types (for If, Case and calls).
static eddy_status_t import_callees(tf_body_t *bd, const tf_node_t *nd,
                                    eddy_value_t *const *ops, size_t nops,
                                    const eddy_type_t **hints,
                                    bool *has_hints) {
  *has_hints = false;
  if (nd->callee) {
    *has_hints = true;
    return import_callee(bd, nd, nd->callee, ops, nops, hints, true);
  }
  eddy_tf_call_kind_t kind = nd->info->call;
  if (kind == EDDY_TF_CALL_NONE)
    return NULL;
  size_t off = kind == EDDY_TF_CALL_BRANCH ? 1 : 0;
  if (nops < off)
    return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                    "%s needs a predicate or branch index input",
                    nd->def->op);
  static const char *const loop_attrs[] = {"cond", "body", NULL};
  static const char *const if_attrs[] = {"then_branch", "else_branch", NULL};
  static const char *const call_attrs[] = {"f", NULL};
  const char *const *names = kind == EDDY_TF_CALL_LOOP ? loop_attrs
                             : kind == EDDY_TF_CALL_FUNC ? call_attrs
                                                         : if_attrs;
  bool loop = kind == EDDY_TF_CALL_LOOP;
  *has_hints = !loop;
  tf_func_t *fn;
  const Tensorflow__AttrValue *br = tf_node_attr(nd, "branches");
  if (tf_node_is(nd, "Case") || tf_node_is(nd, "StatelessCase")) {
    if (!br || br->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST ||
        br->list->n_func == 0)
      return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                      "%s needs the attribute 'branches' (a list of "
                      "functions)",
                      nd->def->op);
    for (size_t i = 0; i < br->list->n_func; i++) {
      EDDY_RETURN_IF_ERROR(callee_of(bd, nd, br->list->func[i]->name, &fn));
      EDDY_RETURN_IF_ERROR(import_callee(bd, nd, fn, ops + off, nops - off,
                                         hints, i == 0));
    }
    return NULL;
  }
  for (size_t i = 0; names[i]; i++) {
    const Tensorflow__AttrValue *v = tf_node_attr(nd, names[i]);
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_FUNC)
      return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                      "%s needs the function attribute '%s'", nd->def->op,
                      names[i]);
    EDDY_RETURN_IF_ERROR(callee_of(bd, nd, v->func->name, &fn));
    // A loop's cond returns the predicate, not the loop values.
    EDDY_RETURN_IF_ERROR(import_callee(bd, nd, fn, ops + off, nops - off,
                                       loop ? NULL : hints, i == 0));
  }
  return NULL;
}

/// ---- Attributes ----

static const eddy_op_def_t *registered_def(const char *op_name) {
  for (size_t i = 0; i < eddy_tf_dialect.num_ops; i++)
    if (strcmp(eddy_tf_dialect.ops[i].name, op_name) == 0)
      return &eddy_tf_dialect.ops[i];
  return NULL;
}

static bool spec_has(const eddy_op_def_t *def, const char *name) {
  if (!def->attrs)
    return false;
  for (const eddy_attr_spec_t *s = def->attrs; s->name; s++)
    if (strcmp(s->name, name) == 0)
      return true;
  return false;
}

/// The node's attributes under their TensorFlow names; internal ones
/// ("_class") and ones a registered op's spec does not know become
/// discardable "tf.<name>". "_output_shapes" is dropped: it is in the
/// result types. *out is malloc'ed (n entries); extra slots are left for
/// the caller.
static eddy_status_t convert_attrs(tf_body_t *bd, const tf_node_t *nd,
                                   const char *op_name, size_t extra,
                                   eddy_named_attr_t **out, size_t *out_n) {
  eddy_ctx_t *ctx = bd->im->ctx;
  const eddy_op_def_t *def = registered_def(op_name);
  size_t n = nd->def->n_attr;
  eddy_named_attr_t *attrs = malloc((n + extra + 1) * sizeof *attrs);
  if (!attrs)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  size_t k = 0;
  eddy_buf_t name;
  eddy_buf_init(&name);
  for (size_t i = 0; i < n; i++) {
    const Tensorflow__AttrEntry *e = nd->def->attr[i];
    if (!e->key[0] || !e->value || strcmp(e->key, "_output_shapes") == 0)
      continue;
    // A repeated key: the last entry wins, as in a protobuf map.
    if (eddy_tf_attr_find(nd->def->attr + i + 1, n - i - 1, e->key))
      continue;
    const eddy_attr_t *v;
    eddy_status_t st = eddy_tf_attr_convert(ctx, e->value, &v);
    if (st) {
      eddy_buf_destroy(&name);
      free(attrs);
      eddy_buf_t prefix;
      eddy_buf_init(&prefix);
      eddy_buf_printf(&prefix, "attribute '%s': ", e->key);
      st = tf_error_wrap(bd, nd, prefix.data, st);
      eddy_buf_destroy(&prefix);
      return st;
    }
    if (!v)
      continue;
    eddy_buf_clear(&name);
    if (e->key[0] == '_' || (def && !spec_has(def, e->key)))
      eddy_buf_puts(&name, "tf.");
    eddy_buf_puts(&name, e->key);
    attrs[k++] = eddy_ir_named_attr(ctx, name.data, v);
  }
  eddy_buf_destroy(&name);
  *out = attrs;
  *out_n = k;
  return NULL;
}

/// ---- Control edges ----

static eddy_status_t build_df(tf_body_t *bd, const char *name,
                              eddy_value_t *const *ops, size_t n,
                              eddy_value_t **out) {
  return eddy_ir_build_simple(&bd->b, name, ops, n, NULL, 0, out);
}

/// The control output of the source of e: available once the node ran.
static eddy_status_t edge_token(tf_body_t *bd, const tf_edge_t *e,
                                eddy_value_t **out) {
  if (e->src < 0) {
    eddy_value_t *arg = bd->args[-1 - e->src];
    return build_df(bd, "df.control", &arg, 1, out);
  }
  tf_node_t *src = &bd->nodes[e->src];
  if (!src->token) {
    if (src->feed >= 0) {
      EDDY_RETURN_IF_ERROR(build_df(bd, "df.control", src->outs, 1,
                                    &src->token));
    } else if (src->num_outs == 0) {
      src->token = eddy_ir_op_result(src->op, 0);
    } else if (tf_node_is(src, "Switch") || tf_node_is(src, "_SwitchN")) {
      // All but one of a switch's outputs are dead; the node itself ran
      // when its inputs were there.
      eddy_value_t *ins[2] = {eddy_ir_op_operand(src->op, 0),
                              eddy_ir_op_operand(src->op, 1)};
      EDDY_RETURN_IF_ERROR(build_df(bd, "df.control", ins, 2, &src->token));
    } else {
      EDDY_RETURN_IF_ERROR(build_df(bd, "df.control", src->outs,
                                    src->num_outs, &src->token));
    }
  }
  *out = src->token;
  return NULL;
}

/// ---- Building one node ----

typedef struct fixup {
  eddy_op_t *op;     ///< the Merge
  uint32_t operand;  ///< the operand standing in for the back edge
  uint32_t node;     ///< the Merge's node index
  tf_edge_t edge;
} fixup_t;

typedef struct build_state {
  fixup_t *fix;
  size_t num_fix, cap_fix;
} build_state_t;

static bool push_fixup(build_state_t *bs, fixup_t f) {
  if (bs->num_fix == bs->cap_fix) {
    size_t cap = bs->cap_fix ? 2 * bs->cap_fix : 16;
    fixup_t *p = realloc(bs->fix, cap * sizeof *p);
    if (!p)
      return false;
    bs->fix = p;
    bs->cap_fix = cap;
  }
  bs->fix[bs->num_fix++] = f;
  return true;
}

/// Const: the value decides the type; its dtype attribute must agree.
static eddy_status_t const_type(tf_body_t *bd, const tf_node_t *nd,
                                const eddy_named_attr_t *attrs, size_t n,
                                const eddy_type_t **out) {
  const eddy_attr_t *value = NULL;
  for (size_t i = 0; i < n; i++)
    if (strcmp(attrs[i].name->str, "value") == 0)
      value = attrs[i].value;
  if (!value || value->kind != EDDY_ATTR_DENSE)
    return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                    "Const needs a tensor attribute 'value'");
  const Tensorflow__AttrValue *dt = tf_node_attr(nd, "dtype");
  const Tensorflow__AttrValue *v = tf_node_attr(nd, "value");
  if (dt && dt->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TYPE &&
      eddy_tf_dtype_base(dt->type) != eddy_tf_dtype_base(v->tensor->dtype))
    return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                    "attribute 'dtype' is %s but the value tensor is %s",
                    eddy_tf_dtype_name(dt->type),
                    eddy_tf_dtype_name(v->tensor->dtype));
  *out = value->type;
  return NULL;
}

/// Merge: its output covers every input. The back edge of a loop is not
/// built yet: a loop value may change shape across iterations, so without
/// a declared shape only its dtype is known.
static eddy_status_t merge_type(tf_body_t *bd, const tf_node_t *nd,
                                eddy_value_t *const *ops,
                                const eddy_type_t **types) {
  const eddy_type_t *t = NULL;
  bool back = false;
  for (uint32_t k = 0; k < nd->num_data; k++) {
    if (nd->edges[k].back) {
      back = true;
      continue;
    }
    const eddy_type_t *u = ops[k]->type;
    t = t ? eddy_ir_type_generalize(bd->im->ctx, t, u) : u;
    if (!t)
      return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                      "the inputs of the Merge have different types");
  }
  if (back && t && t->kind == EDDY_TYPE_TENSOR)
    t = eddy_ir_tensor_type_get(bd->im->ctx, t->dtype, EDDY_RANK_UNKNOWN,
                                NULL);
  int tdt = 0;
  EDDY_RETURN_IF_ERROR(type_attr(bd, nd, "T", &tdt));
  EDDY_RETURN_IF_ERROR(type_for(bd, nd, tdt, t, 0, &types[0]));
  types[1] = eddy_ir_scalar_type_get(bd->im->ctx, EDDY_DT_I32);
  return NULL;
}

static eddy_status_t build_node(tf_body_t *bd, uint32_t idx,
                                build_state_t *bs) {
  eddy_ctx_t *ctx = bd->im->ctx;
  tf_node_t *nd = &bd->nodes[idx];
  bd->b.loc = eddy_ir_loc_name(ctx, nd->def->name);
  if (nd->feed >= 0) {
    nd->outs[0] = bd->args[nd->feed];
    return NULL;
  }
  if (!bd->fn && tf_node_is(nd, "Placeholder"))
    return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                    "Placeholder is not fed (feed it, or import with "
                    "pruning so that it is not needed)");

  size_t ndata = nd->num_data, ntok = nd->num_edges - nd->num_data;
  eddy_value_t **ops = malloc((ndata + ntok + 1) * sizeof *ops);
  eddy_value_t **toks = malloc((ntok + 1) * sizeof *toks);
  const eddy_type_t **types = malloc((nd->num_outs + 1) * sizeof *types);
  const eddy_type_t **hints = calloc(nd->num_outs + 1, sizeof *hints);
  eddy_named_attr_t *attrs = NULL;
  size_t nattrs = 0;
  eddy_status_t st = NULL;
  if (!ops || !toks || !types || !hints) {
    st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    goto done;
  }
  // Data operands; back edges get a stand-in, replaced after the loop.
  int first_live = -1;
  for (uint32_t k = 0; k < ndata; k++) {
    if (nd->edges[k].back)
      continue;
    ops[k] = tf_edge_value(bd, &nd->edges[k]);
    if (first_live < 0)
      first_live = (int)k;
  }
  for (uint32_t k = 0; k < ndata; k++) {
    if (!nd->edges[k].back)
      continue;
    if (first_live < 0) {
      st = tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                    "every input of the Merge comes from a NextIteration: "
                    "the loop has no entry");
      goto done;
    }
    ops[k] = ops[first_live];
  }
  for (size_t k = 0; k < ntok && !st; k++)
    st = edge_token(bd, &nd->edges[ndata + k], &toks[k]);
  if (st)
    goto done;
  size_t nops = ndata;
  if (ntok && first_live >= 0) {
    // Wait on the control inputs through the first data input.
    eddy_value_t **in = malloc((ntok + 1) * sizeof *in);
    if (!in) {
      st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
      goto done;
    }
    in[0] = ops[first_live];
    memcpy(in + 1, toks, ntok * sizeof *toks);
    st = build_df(bd, "df.after", in, ntok + 1, &ops[first_live]);
    free(in);
    if (st)
      goto done;
  } else if (ntok && nd->num_outs == 0) {
    // NoOp and its kind: the control inputs are its operands.
    memcpy(ops, toks, ntok * sizeof *toks);
    nops = ntok;
  }

  // Attributes, called functions, result types.
  eddy_buf_t op_name;
  eddy_buf_init(&op_name);
  eddy_buf_puts(&op_name, "tf.");
  eddy_buf_puts(&op_name, nd->callee ? "LegacyCall" : nd->def->op);
  st = convert_attrs(bd, nd, op_name.data, 1, &attrs, &nattrs);
  if (!st && nd->callee)
    attrs[nattrs++] = eddy_ir_named_attr(
        ctx, "f",
        eddy_ir_symbol_attr_get(ctx, nd->callee->name,
                                strlen(nd->callee->name)));
  bool has_hints = false;
  if (!st)
    st = import_callees(bd, nd, ops, nops, hints, &has_hints);
  if (!st) {
    if (nd->callee) {
      for (uint32_t j = 0; j < nd->num_outs; j++)
        types[j] = hints[j];
    } else if (tf_node_is(nd, "Const")) {
      st = const_type(bd, nd, attrs, nattrs, &types[0]);
    } else if (tf_node_is(nd, "Merge")) {
      st = merge_type(bd, nd, ops, types);
    } else {
      st = table_types(bd, nd, ops, nops, has_hints ? hints : NULL, types);
    }
  }
  if (!st && !nd->callee)
    st = declared_shapes(bd, nd, types);
  for (uint32_t j = 0; !st && j < nd->num_outs; j++)
    if (!types[j])
      st = tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                    "the functions it calls disagree on the type of output "
                    "#%u",
                    j);
  if (st) {
    eddy_buf_destroy(&op_name);
    goto done;
  }
  size_t nres = nd->num_outs;
  if (nres == 0) {
    types[0] = eddy_ir_token_type_get(ctx);
    nres = 1;
  }
  eddy_op_state_t os = {
      .name = op_name.data,
      .operands = ops,
      .num_operands = nops,
      .attrs = attrs,
      .num_attrs = nattrs,
      .result_types = types,
      .num_results = nres,
      .loc = bd->b.loc,
  };
  st = eddy_ir_build(&bd->b, &os, &nd->op);
  eddy_buf_destroy(&op_name);
  if (st) {
    st = tf_error_wrap(bd, nd, "", st);
    goto done;
  }
  for (uint32_t j = 0; j < nd->num_outs; j++)
    nd->outs[j] = eddy_ir_op_result(nd->op, j);
  // With no data input to wait on, the outputs wait on the control inputs.
  if (ntok && first_live < 0 && nd->num_outs > 0) {
    eddy_value_t **in = malloc((ntok + 1) * sizeof *in);
    if (!in) {
      st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
      goto done;
    }
    memcpy(in + 1, toks, ntok * sizeof *toks);
    for (uint32_t j = 0; j < nd->num_outs && !st; j++) {
      in[0] = nd->outs[j];
      st = build_df(bd, "df.after", in, ntok + 1, &nd->outs[j]);
    }
    free(in);
    if (st)
      goto done;
  }
  for (uint32_t k = 0; k < ndata; k++)
    if (nd->edges[k].back &&
        !push_fixup(bs, (fixup_t){nd->op, k, idx, nd->edges[k]})) {
      st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
      goto done;
    }
done:
  free(ops);
  free(toks);
  free(types);
  free(hints);
  free(attrs);
  return st;
}

/// Closes the back edges: each Merge gets its NextIteration input, and its
/// output type widens to cover it.
static eddy_status_t close_back_edges(tf_body_t *bd, build_state_t *bs) {
  for (size_t i = 0; i < bs->num_fix; i++) {
    fixup_t *f = &bs->fix[i];
    eddy_value_t *v = tf_edge_value(bd, &f->edge);
    eddy_value_t *out = eddy_ir_op_result(f->op, 0);
    const eddy_type_t *g =
        eddy_ir_type_generalize(bd->im->ctx, out->type, v->type);
    if (!g) {
      eddy_buf_t a, b;
      eddy_buf_init(&a);
      eddy_buf_init(&b);
      eddy_ir_type_print(v->type, &a);
      eddy_ir_type_print(out->type, &b);
      eddy_status_t st = tf_error(
          bd, &bd->nodes[f->node], EDDY_ERR_INVALID_ARGUMENT,
          "the NextIteration input '%s' has type %s, the Merge's other "
          "inputs %s",
          bd->nodes[f->edge.src].def->name, a.data, b.data);
      eddy_buf_destroy(&a);
      eddy_buf_destroy(&b);
      return st;
    }
    eddy_ir_op_set_operand(f->op, f->operand, v);
    if (g != out->type)
      eddy_ir_value_set_type(out, g);
  }
  return NULL;
}

eddy_status_t tf_body_build(tf_body_t *bd) {
  uint32_t *order;
  size_t n;
  EDDY_RETURN_IF_ERROR(tf_body_topo_order(bd, &order, &n));
  eddy_ir_builder_set_end(&bd->b, eddy_ir_func_entry(bd->func));
  build_state_t bs = {0};
  eddy_status_t st = NULL;
  for (size_t i = 0; i < n && !st; i++)
    st = build_node(bd, order[i], &bs);
  if (!st)
    st = close_back_edges(bd, &bs);
  free(bs.fix);
  return st;
}
