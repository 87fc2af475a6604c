/// The GraphDef importer's driver: reads the file, indexes the function
/// library, checks up front what the import needs (every op known, every
/// called function defined, no function calling itself), then builds the
/// graph's function, importing each library function the first time a node
/// calls it, with the argument types that node passes.
#include "dialects/tf/tf_import_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// Most node names listed per unsupported op.
#define MAX_NAMES_PER_OP 8

tf_func_t *tf_importer_find_func(tf_importer_t *im, const char *name) {
  const eddy_ident_t *id = eddy_ir_ident_cstr(im->ctx, name);
  return eddy_ptrmap_get(&im->func_by_name, id);
}

static eddy_status_t file_error(const tf_importer_t *im,
                                eddy_status_code_t code, const char *fmt,
                                ...) __attribute__((format(printf, 3, 4)));

static eddy_status_t file_error(const tf_importer_t *im,
                                eddy_status_code_t code, const char *fmt,
                                ...) {
  va_list ap;
  va_start(ap, fmt);
  eddy_status_t inner = eddy_status_createv(code, fmt, ap);
  va_end(ap);
  eddy_status_t st = eddy_status_create_at(code, im->file, "%s",
                                           eddy_status_message(inner));
  eddy_status_destroy(inner);
  return st;
}

static eddy_status_t index_library(tf_importer_t *im) {
  const Tensorflow__FunctionDefLibrary *lib = im->gd->library;
  size_t n = lib ? lib->n_function : 0;
  im->funcs = eddy_arena_alloc(im->arena, (n ? n : 1) * sizeof(tf_func_t));
  for (size_t i = 0; i < n; i++) {
    const Tensorflow__FunctionDef *f = lib->function[i];
    if (!f->signature || !f->signature->name[0])
      return file_error(im, EDDY_ERR_INVALID_ARGUMENT,
                        "function #%zu of the library has no name", i);
    const eddy_ident_t *id = eddy_ir_ident_cstr(im->ctx, f->signature->name);
    if (eddy_ptrmap_has(&im->func_by_name, id))
      return file_error(im, EDDY_ERR_INVALID_ARGUMENT,
                        "function '%s' is defined twice in the library",
                        f->signature->name);
    tf_func_t *fn = &im->funcs[im->num_funcs++];
    fn->fdef = f;
    fn->name = f->signature->name;
    eddy_ptrmap_put(&im->func_by_name, id, fn);
  }
  return NULL;
}

/// ---- The pre-pass ----

/// Unsupported ops seen so far, each with the nodes that use it.
typedef struct unsupported {
  const char *op;
  eddy_buf_t nodes;
  size_t count;
} unsupported_t;

typedef struct scan {
  tf_importer_t *im;
  unsupported_t *unsup;
  size_t num_unsup, cap_unsup;
  tf_func_t *path[EDDY_TF_MAX_CALL_DEPTH + 1];
} scan_t;

static eddy_status_t note_unsupported(scan_t *s, const tf_func_t *fn,
                                      const Tensorflow__NodeDef *n) {
  unsupported_t *u = NULL;
  for (size_t i = 0; i < s->num_unsup; i++)
    if (strcmp(s->unsup[i].op, n->op) == 0)
      u = &s->unsup[i];
  if (!u) {
    if (s->num_unsup == s->cap_unsup) {
      size_t cap = s->cap_unsup ? 2 * s->cap_unsup : 8;
      unsupported_t *p = realloc(s->unsup, cap * sizeof *p);
      if (!p)
        return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
      s->unsup = p;
      s->cap_unsup = cap;
    }
    u = &s->unsup[s->num_unsup++];
    u->op = n->op;
    u->count = 0;
    eddy_buf_init(&u->nodes);
  }
  if (u->count < MAX_NAMES_PER_OP) {
    eddy_buf_printf(&u->nodes, "%s'%s'", u->count ? ", " : "", n->name);
    if (fn)
      eddy_buf_printf(&u->nodes, " in function '%s'", fn->name);
  }
  u->count++;
  return NULL;
}

static eddy_status_t visit_func(scan_t *s, tf_func_t *fn, int depth);

static eddy_status_t visit_ref(scan_t *s, const tf_func_t *in,
                               const Tensorflow__NodeDef *n,
                               const char *attr, const char *name,
                               int depth) {
  tf_func_t *callee = tf_importer_find_func(s->im, name);
  if (!callee) {
    eddy_buf_t loc;
    eddy_buf_init(&loc);
    eddy_buf_puts(&loc, s->im->file);
    if (in)
      eddy_buf_printf(&loc, ": function '%s'", in->name);
    eddy_buf_printf(&loc, ": node '%s'", n->name);
    eddy_status_t st = eddy_status_create_at(
        EDDY_ERR_NOT_FOUND, loc.data,
        "function '%s' (attribute '%s') is not in the graph's library", name,
        attr);
    eddy_buf_destroy(&loc);
    return st;
  }
  return visit_func(s, callee, depth);
}

/// Checks the nodes of one body: ops known, functions defined and not
/// recursive. depth is the number of functions on the call path.
static eddy_status_t scan_nodes(scan_t *s, const tf_func_t *in,
                                Tensorflow__NodeDef **defs, size_t n,
                                const tf_body_t *pruned, int depth) {
  for (size_t i = 0; i < n; i++) {
    const Tensorflow__NodeDef *nd = defs[i];
    if (pruned && !pruned->nodes[i].keep)
      continue;
    if (!nd->op[0])
      continue; // tf_body_resolve reports it, with the node
    tf_func_t *callee = tf_importer_find_func(s->im, nd->op);
    if (callee) {
      EDDY_RETURN_IF_ERROR(visit_func(s, callee, depth));
    } else if (!eddy_tf_op_info(nd->op)) {
      EDDY_RETURN_IF_ERROR(note_unsupported(s, in, nd));
    }
    for (size_t a = 0; a < nd->n_attr; a++) {
      const Tensorflow__AttrValue *v = nd->attr[a]->value;
      if (!v)
        continue;
      if (v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_FUNC)
        EDDY_RETURN_IF_ERROR(visit_ref(s, in, nd, nd->attr[a]->key,
                                       v->func->name, depth));
      if (v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST)
        for (size_t k = 0; k < v->list->n_func; k++)
          EDDY_RETURN_IF_ERROR(visit_ref(s, in, nd, nd->attr[a]->key,
                                         v->list->func[k]->name, depth));
    }
  }
  return NULL;
}

static eddy_status_t visit_func(scan_t *s, tf_func_t *fn, int depth) {
  if (fn->visit == 2)
    return NULL;
  if (fn->visit == 1) {
    eddy_buf_t path;
    eddy_buf_init(&path);
    int start = 0;
    while (start < depth && s->path[start] != fn)
      start++;
    for (int i = start; i < depth; i++)
      eddy_buf_printf(&path, "%s -> ", s->path[i]->name);
    eddy_buf_puts(&path, fn->name);
    eddy_buf_t loc;
    eddy_buf_init(&loc);
    eddy_buf_printf(&loc, "%s: function '%s'", s->im->file, fn->name);
    eddy_status_t st = eddy_status_create_at(
        EDDY_ERR_UNSUPPORTED, loc.data,
        depth - start == 1
            ? "the function calls itself (%s); recursion is not supported"
            : "functions call each other in a cycle (%s); recursion is not "
              "supported",
        path.data);
    eddy_buf_destroy(&path);
    eddy_buf_destroy(&loc);
    return st;
  }
  if (depth >= EDDY_TF_MAX_CALL_DEPTH)
    return file_error(s->im, EDDY_ERR_RESOURCE,
                      "function '%s': functions call each other more than %d "
                      "deep",
                      fn->name, EDDY_TF_MAX_CALL_DEPTH);
  fn->visit = 1;
  s->path[depth] = fn;
  EDDY_RETURN_IF_ERROR(scan_nodes(s, fn, fn->fdef->node_def,
                                  fn->fdef->n_node_def, NULL, depth + 1));
  fn->visit = 2;
  return NULL;
}

static int cmp_unsupported(const void *a, const void *b) {
  return strcmp(((const unsupported_t *)a)->op, ((const unsupported_t *)b)->op);
}

/// Checks the graph's kept nodes and every function they reach.
static eddy_status_t prepass(tf_importer_t *im, const tf_body_t *graph) {
  scan_t s = {.im = im};
  eddy_status_t st =
      scan_nodes(&s, NULL, im->gd->node, im->gd->n_node, graph, 0);
  if (!st && s.num_unsup) {
    // By name: the message should not depend on the library's order.
    qsort(s.unsup, s.num_unsup, sizeof *s.unsup, cmp_unsupported);
    eddy_buf_t msg;
    eddy_buf_init(&msg);
    eddy_buf_puts(&msg, "unsupported TensorFlow op");
    eddy_buf_puts(&msg, s.num_unsup == 1 ? ": " : "s: ");
    for (size_t i = 0; i < s.num_unsup; i++) {
      unsupported_t *u = &s.unsup[i];
      eddy_buf_printf(&msg, "%s%s (node%s %s", i ? "; " : "", u->op,
                      u->count == 1 ? "" : "s", u->nodes.data);
      if (u->count > MAX_NAMES_PER_OP)
        eddy_buf_printf(&msg, " and %zu more", u->count - MAX_NAMES_PER_OP);
      eddy_buf_putc(&msg, ')');
    }
    st = file_error(im, EDDY_ERR_UNSUPPORTED, "%s", msg.data);
    eddy_buf_destroy(&msg);
  }
  for (size_t i = 0; i < s.num_unsup; i++)
    eddy_buf_destroy(&s.unsup[i].nodes);
  free(s.unsup);
  return st;
}

/// ---- Functions ----

/// The shape in a FunctionDef's arg_attr[i]["_output_shapes"], or NULL.
static const Tensorflow__TensorShapeProto *
arg_shape(const Tensorflow__FunctionDef *f, size_t i) {
  for (size_t k = f->n_arg_attr; k-- > 0;) {
    const Tensorflow__FunctionDef__ArgAttrEntry *e = f->arg_attr[k];
    if (e->key != i || !e->value)
      continue;
    const Tensorflow__AttrValue *v =
        eddy_tf_attr_find(e->value->attr, e->value->n_attr, "_output_shapes");
    if (v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST &&
        v->list->n_shape == 1)
      return v->list->shape[0];
    return NULL;
  }
  return NULL;
}

/// The type of argument i: the signature's dtype, the shape TensorFlow
/// recorded for it, else what the caller passes (lists always come from
/// the caller: the signature only says "variant").
static eddy_status_t arg_type(tf_body_t *bd, size_t i,
                              const eddy_type_t *caller,
                              const eddy_type_t **out) {
  const Tensorflow__FunctionDef *f = bd->fn->fdef;
  const Tensorflow__OpDef__ArgDef *a = f->signature->input_arg[i];
  if (a->type_attr[0] || a->number_attr[0] || a->type_list_attr[0])
    return tf_error(bd, NULL, EDDY_ERR_UNSUPPORTED,
                    "argument '%s' has a polymorphic type; only functions "
                    "with concrete signatures are supported",
                    a->name);
  int base = eddy_tf_dtype_base(a->type);
  if (base == TENSORFLOW__DATA_TYPE__DT_VARIANT ||
      base == TENSORFLOW__DATA_TYPE__DT_RESOURCE) {
    // An Optional's readers say what it holds where its callers disagree
    // (an Optional whose type depends on the branch of the If that made
    // it: each branch of the gradient If reads its own).
    const eddy_type_t *expect = base == TENSORFLOW__DATA_TYPE__DT_VARIANT
                                    ? tf_variant_arg_expected(bd, i)
                                    : NULL;
    if (expect && (!caller || caller->kind != EDDY_TYPE_LIST ||
                   !eddy_ir_type_is_compatible(caller, expect))) {
      *out = expect;
      return NULL;
    }
    if (caller && caller->kind == EDDY_TYPE_LIST) {
      *out = caller;
      return NULL;
    }
    return tf_error(bd, NULL, EDDY_ERR_UNSUPPORTED,
                    "argument '%s' has dtype %s and no caller says what it "
                    "holds",
                    a->name, eddy_tf_dtype_name(a->type));
  }
  eddy_dtype_t dt;
  if (!eddy_tf_dtype_to_eddy(a->type, &dt))
    return tf_error(bd, NULL, EDDY_ERR_UNSUPPORTED,
                    "argument '%s' has dtype %s, which eddy does not support",
                    a->name, eddy_tf_dtype_name(a->type));
  if (caller && (caller->kind != EDDY_TYPE_TENSOR || caller->dtype != dt)) {
    eddy_buf_t t;
    eddy_buf_init(&t);
    eddy_ir_type_print(caller, &t);
    eddy_status_t st = tf_error(bd, NULL, EDDY_ERR_INVALID_ARGUMENT,
                                "argument '%s' is %s but a caller passes %s",
                                a->name, eddy_dtype_name(dt), t.data);
    eddy_buf_destroy(&t);
    return st;
  }
  const Tensorflow__TensorShapeProto *shape = arg_shape(f, i);
  if (shape) {
    eddy_status_t st = eddy_tf_shape_type(bd->im->ctx, shape, dt, out);
    if (st)
      return tf_error_wrap(bd, NULL, "shape of an argument: ", st);
    return NULL;
  }
  *out = caller ? caller
                : eddy_ir_tensor_type_get(bd->im->ctx, dt, EDDY_RANK_UNKNOWN,
                                          NULL);
  return NULL;
}

/// The value a function returns for output arg `name` (ret[name]).
static const char *ret_ref(const Tensorflow__FunctionDef *f, const char *name) {
  for (size_t k = f->n_ret; k-- > 0;)
    if (strcmp(f->ret[k]->key, name) == 0)
      return f->ret[k]->value;
  return NULL;
}

static eddy_status_t build_return(tf_body_t *bd, eddy_value_t **vals,
                                  size_t n) {
  // No results; a non-NULL result list says "none" instead of "infer".
  const eddy_type_t *none[1] = {NULL};
  eddy_op_state_t st = {
      .name = "func.return",
      .operands = vals,
      .num_operands = n,
      .result_types = none,
      .num_results = 0,
      .loc = bd->func->loc,
  };
  eddy_op_t *ret;
  EDDY_RETURN_IF_ERROR(eddy_ir_build(&bd->b, &st, &ret));
  const eddy_type_t **outs = malloc((n ? n : 1) * sizeof *outs);
  if (!outs)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (size_t i = 0; i < n; i++)
    outs[i] = vals[i]->type;
  const eddy_type_t *ft = eddy_ir_func_type(bd->func);
  eddy_ir_func_set_type(bd->func,
                        eddy_ir_func_type_get(bd->im->ctx, ft->inputs,
                                              ft->num_inputs, outs, n));
  free(outs);
  return NULL;
}

static eddy_status_t import_function_body(tf_body_t *bd,
                                          const eddy_type_t *const *callers,
                                          size_t num_callers) {
  tf_importer_t *im = bd->im;
  const Tensorflow__FunctionDef *f = bd->fn->fdef;
  const Tensorflow__OpDef *sig = f->signature;
  size_t n = sig->n_input_arg;
  const eddy_type_t **types = malloc((n ? n : 1) * sizeof *types);
  if (!types)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  eddy_status_t st = NULL;
  for (size_t i = 0; i < n && !st; i++)
    st = arg_type(bd, i, i < num_callers ? callers[i] : NULL, &types[i]);
  if (!st && eddy_ir_module_lookup_func(im->module, bd->fn->name))
    st = tf_error(bd, NULL, EDDY_ERR_INVALID_ARGUMENT,
                  "a function of this name exists already (the graph's "
                  "function? choose another name for it)");
  if (!st)
    st = eddy_ir_func_create(im->module, bd->fn->name, types, n, NULL, 0,
                             eddy_ir_loc_name(im->ctx, bd->fn->name),
                             &bd->func);
  free(types);
  EDDY_RETURN_IF_ERROR(st);
  eddy_block_t *entry = eddy_ir_func_entry(bd->func);
  bd->args = entry->args;
  bd->num_args = n;
  for (size_t i = 0; i < n; i++) {
    const char *an = sig->input_arg[i]->name;
    const eddy_ident_t *id = eddy_ir_ident_cstr(im->ctx, an);
    if (eddy_ptrmap_has(&bd->arg_by_name, id))
      return tf_error(bd, NULL, EDDY_ERR_INVALID_ARGUMENT,
                      "two arguments are called '%s'", an);
    eddy_ptrmap_put(&bd->arg_by_name, id, (void *)(uintptr_t)(i + 1));
  }
  EDDY_RETURN_IF_ERROR(tf_body_index(bd));
  EDDY_RETURN_IF_ERROR(tf_body_resolve(bd));
  EDDY_RETURN_IF_ERROR(tf_body_build(bd));
  size_t nout = sig->n_output_arg;
  eddy_value_t **vals = malloc((nout ? nout : 1) * sizeof *vals);
  if (!vals)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (size_t j = 0; j < nout && !st; j++) {
    const char *name = sig->output_arg[j]->name;
    const char *ref = ret_ref(f, name);
    if (!ref) {
      st = tf_error(bd, NULL, EDDY_ERR_INVALID_ARGUMENT,
                    "output '%s' has no entry in the function's ret map",
                    name);
      break;
    }
    char what[256];
    snprintf(what, sizeof what, "output '%s'", name);
    st = tf_body_lookup_value(bd, ref, what, &vals[j]);
  }
  if (!st)
    st = build_return(bd, vals, nout);
  free(vals);
  return st;
}

eddy_status_t tf_import_function(tf_importer_t *im, tf_func_t *fn,
                                 const eddy_type_t *const *arg_types,
                                 size_t num_args, eddy_op_t **out) {
  *out = fn->func;
  if (fn->func)
    return NULL;
  if (fn->importing || im->depth >= EDDY_TF_MAX_CALL_DEPTH)
    return file_error(im, EDDY_ERR_UNSUPPORTED,
                      "function '%s' is called recursively", fn->name);
  fn->importing = true;
  im->depth++;
  tf_body_t bd;
  tf_body_init(&bd, im, fn, fn->fdef->node_def, fn->fdef->n_node_def);
  eddy_status_t st = import_function_body(&bd, arg_types, num_args);
  tf_body_destroy(&bd);
  im->depth--;
  fn->importing = false;
  if (st)
    return st;
  fn->func = bd.func;
  *out = fn->func;
  return NULL;
}

/// ---- The graph's function ----

static eddy_status_t placeholder_type(tf_body_t *bd, const tf_node_t *nd,
                                      const eddy_type_t **out) {
  const Tensorflow__AttrValue *dt =
      eddy_tf_attr_find(nd->def->attr, nd->def->n_attr, "dtype");
  if (!dt || dt->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TYPE)
    return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                    "%s needs the type attribute 'dtype'", nd->def->op);
  eddy_dtype_t edt;
  if (!eddy_tf_dtype_to_eddy(dt->type, &edt))
    return tf_error(bd, nd, EDDY_ERR_UNSUPPORTED,
                    "feeds of dtype %s are not supported",
                    eddy_tf_dtype_name(dt->type));
  const Tensorflow__AttrValue *sh =
      eddy_tf_attr_find(nd->def->attr, nd->def->n_attr, "shape");
  eddy_status_t st = eddy_tf_shape_type(
      bd->im->ctx,
      sh && sh->value_case == TENSORFLOW__ATTR_VALUE__VALUE_SHAPE ? sh->shape
                                                                  : NULL,
      edt, out);
  return st ? tf_error_wrap(bd, nd, "attribute 'shape': ", st) : NULL;
}

static bool is_placeholder(const tf_node_t *nd) {
  return strcmp(nd->def->op, "Placeholder") == 0 ||
         strcmp(nd->def->op, "PlaceholderWithDefault") == 0;
}

/// Marks the feeds; returns their nodes in argument order.
static eddy_status_t choose_feeds(tf_body_t *bd, tf_node_t ***out,
                                  size_t *out_n) {
  const eddy_tf_import_opts_t *o = bd->im->opts;
  size_t cap = o->num_feeds ? o->num_feeds : bd->num_nodes;
  tf_node_t **feeds =
      eddy_arena_alloc(bd->im->arena, (cap ? cap : 1) * sizeof *feeds);
  size_t n = 0;
  if (o->num_feeds) {
    for (size_t i = 0; i < o->num_feeds; i++) {
      const char *name = o->feeds[i];
      tf_node_t *nd = tf_body_find(bd, name, strlen(name));
      if (!nd)
        return file_error(bd->im, EDDY_ERR_NOT_FOUND,
                          "feed '%s' names no node of the graph", name);
      if (!is_placeholder(nd))
        return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                        "feed '%s' is a %s node; only Placeholders can be "
                        "fed",
                        name, nd->def->op);
      if (nd->feed >= 0)
        return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                        "'%s' is fed twice", name);
      nd->feed = (int32_t)n;
      feeds[n++] = nd;
    }
  } else {
    for (size_t i = 0; i < bd->num_nodes; i++) {
      tf_node_t *nd = &bd->nodes[i];
      if (!nd->keep || strcmp(nd->def->op, "Placeholder") != 0)
        continue;
      nd->feed = (int32_t)n;
      feeds[n++] = nd;
    }
  }
  *out = feeds;
  *out_n = n;
  return NULL;
}

typedef struct fetch {
  tf_node_t *node;
  uint32_t out;
} fetch_t;

static eddy_status_t choose_fetches(tf_body_t *bd, fetch_t **out,
                                    size_t *out_n) {
  const eddy_tf_import_opts_t *o = bd->im->opts;
  eddy_arena_t *a = bd->im->arena;
  if (o->num_fetches) {
    fetch_t *f = eddy_arena_alloc(a, o->num_fetches * sizeof *f);
    for (size_t i = 0; i < o->num_fetches; i++) {
      const char *ref = o->fetches[i];
      const char *colon = strrchr(ref, ':');
      size_t len = colon ? (size_t)(colon - ref) : strlen(ref);
      uint32_t idx = 0;
      if (colon) {
        const char *d = colon + 1;
        char *end;
        errno = 0;
        unsigned long v = strtoul(d, &end, 10);
        if (!*d || *end || errno || v > 0x7fffffff)
          return file_error(bd->im, EDDY_ERR_INVALID_ARGUMENT,
                            "fetch '%s' has a malformed output index", ref);
        idx = (uint32_t)v;
      }
      tf_node_t *nd = tf_body_find(bd, ref, len);
      if (!nd)
        return file_error(bd->im, EDDY_ERR_NOT_FOUND,
                          "fetch '%s' names no node of the graph", ref);
      if (idx >= nd->num_outs)
        return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                        "fetch '%s': the node (%s) has %u output%s", ref,
                        nd->def->op, nd->num_outs,
                        nd->num_outs == 1 ? "" : "s");
      f[i] = (fetch_t){nd, idx};
    }
    *out = f;
    *out_n = o->num_fetches;
    return NULL;
  }
  // Default: every output of every sink, a node whose outputs no node reads.
  bool *read = eddy_arena_alloc(a, (bd->num_nodes + 1) * sizeof(bool));
  size_t total = 0;
  for (size_t i = 0; i < bd->num_nodes; i++) {
    const tf_node_t *nd = &bd->nodes[i];
    for (uint32_t k = 0; k < nd->num_data; k++)
      if (nd->edges[k].src >= 0)
        read[nd->edges[k].src] = true;
  }
  for (size_t i = 0; i < bd->num_nodes; i++)
    if (!read[i] && bd->nodes[i].feed < 0)
      total += bd->nodes[i].num_outs;
  fetch_t *f = eddy_arena_alloc(a, (total ? total : 1) * sizeof *f);
  size_t n = 0;
  for (size_t i = 0; i < bd->num_nodes; i++)
    if (!read[i] && bd->nodes[i].feed < 0)
      for (uint32_t j = 0; j < bd->nodes[i].num_outs; j++)
        f[n++] = (fetch_t){&bd->nodes[i], j};
  *out = f;
  *out_n = n;
  return NULL;
}

/// The node a tensor or control reference ("^node", "node:i") names.
static tf_node_t *ref_node(tf_body_t *bd, const char *ref) {
  if (ref[0] == '^')
    ref++;
  const char *colon = strchr(ref, ':');
  return tf_body_find(bd, ref, colon ? (size_t)(colon - ref) : strlen(ref));
}

/// Keeps only the nodes the fetches depend on, through data, control and
/// back edges. Runs on names, before the nodes are resolved, so that nodes
/// left out need not be importable at all.
static eddy_status_t prune(tf_body_t *bd) {
  const eddy_tf_import_opts_t *o = bd->im->opts;
  if (!o->num_fetches)
    return NULL; // every node reaches some sink
  for (size_t i = 0; i < bd->num_nodes; i++)
    bd->nodes[i].keep = false;
  uint32_t *stack =
      eddy_arena_alloc(bd->im->arena, (bd->num_nodes + 1) * sizeof(uint32_t));
  size_t sp = 0;
  for (size_t i = 0; i < o->num_fetches; i++) {
    tf_node_t *nd = ref_node(bd, o->fetches[i]);
    if (!nd)
      return tf_error(bd, NULL, EDDY_ERR_NOT_FOUND,
                      "fetch '%s' names no node of the graph",
                      o->fetches[i]);
    if (!nd->keep) {
      nd->keep = true;
      stack[sp++] = (uint32_t)(nd - bd->nodes);
    }
  }
  while (sp) {
    const tf_node_t *nd = &bd->nodes[stack[--sp]];
    for (size_t k = 0; k < nd->def->n_input; k++) {
      tf_node_t *src = ref_node(bd, nd->def->input[k]);
      if (src && !src->keep) {
        src->keep = true;
        stack[sp++] = (uint32_t)(src - bd->nodes);
      }
    }
  }
  return NULL;
}

static eddy_status_t import_graph(tf_importer_t *im, tf_body_t *bd) {
  const char *name =
      im->opts->func_name && im->opts->func_name[0] ? im->opts->func_name
                                                    : "main";
  if (tf_importer_find_func(im, name))
    return file_error(im, EDDY_ERR_INVALID_ARGUMENT,
                      "the library has a function called '%s', the name of "
                      "the graph's function; choose another name for it",
                      name);
  EDDY_RETURN_IF_ERROR(tf_body_resolve(bd));
  tf_node_t **feeds = NULL;
  size_t nfeeds = 0;
  EDDY_RETURN_IF_ERROR(choose_feeds(bd, &feeds, &nfeeds));
  fetch_t *fetches = NULL;
  size_t nfetches = 0;
  EDDY_RETURN_IF_ERROR(choose_fetches(bd, &fetches, &nfetches));

  const eddy_type_t **types =
      eddy_arena_alloc(im->arena, (nfeeds ? nfeeds : 1) * sizeof *types);
  for (size_t i = 0; i < nfeeds; i++)
    EDDY_RETURN_IF_ERROR(placeholder_type(bd, feeds[i], &types[i]));
  EDDY_RETURN_IF_ERROR(eddy_ir_func_create(im->module, name, types, nfeeds,
                                           NULL, 0,
                                           eddy_ir_loc_name(im->ctx, name),
                                           &bd->func));
  bd->args = eddy_ir_func_entry(bd->func)->args;
  bd->num_args = nfeeds;
  EDDY_RETURN_IF_ERROR(tf_body_build(bd));

  eddy_value_t **vals =
      eddy_arena_alloc(im->arena, (nfetches ? nfetches : 1) * sizeof *vals);
  for (size_t i = 0; i < nfetches; i++)
    vals[i] = fetches[i].node->outs[fetches[i].out];
  bd->b.loc = bd->func->loc;
  EDDY_RETURN_IF_ERROR(build_return(bd, vals, nfetches));
  // The Placeholders' names and the fetches ("node:i") name the arguments
  // and results in messages and generated headers.
  const char **names = eddy_arena_alloc(
      im->arena, ((nfeeds > nfetches ? nfeeds : nfetches) + 1) * sizeof *names);
  for (size_t i = 0; i < nfeeds; i++)
    names[i] = feeds[i]->def->name;
  if (nfeeds)
    eddy_ir_func_set_names(bd->func, "arg_names", names, nfeeds);
  for (size_t i = 0; i < nfetches; i++) {
    const char *node = fetches[i].node->def->name;
    size_t len = strlen(node) + 16;
    char *ref = eddy_arena_alloc(im->arena, len);
    snprintf(ref, len, "%s:%u", node, (unsigned)fetches[i].out);
    names[i] = ref;
  }
  if (nfetches)
    eddy_ir_func_set_names(bd->func, "result_names", names, nfetches);
  return NULL;
}

/// ---- Entry points ----

eddy_status_t eddy_tf_import_graphdef_bytes(eddy_ctx_t *ctx, const char *name,
                                            const void *data, size_t len,
                                            const eddy_tf_import_opts_t *opts,
                                            eddy_module_t **out_module) {
  *out_module = NULL;
  eddy_tf_dialect_register(ctx);
  eddy_tf_import_opts_t dflt = {0};
  tf_importer_t im = {
      .ctx = ctx,
      .file = name ? name : "<graphdef>",
      .opts = opts ? opts : &dflt,
  };
  Tensorflow__GraphDef *gd = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tf_graphdef_unpack(im.file, data, len, &gd));
  im.gd = gd;
  im.arena = eddy_arena_create();
  if (!im.arena) {
    eddy_tf_graphdef_free(gd);
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  eddy_ptrmap_init(&im.func_by_name);
  eddy_ptrmap_init(&im.variant_types);
  tf_body_t bd;
  tf_body_init(&bd, &im, NULL, gd->node, gd->n_node);
  eddy_status_t st = NULL;
  if (gd->n_node == 0)
    st = file_error(&im, EDDY_ERR_INVALID_ARGUMENT,
                    "the GraphDef has no nodes (empty file, or not a "
                    "GraphDef?)");
  if (!st)
    st = index_library(&im);
  if (!st)
    st = tf_body_index(&bd);
  if (!st && im.opts->prune)
    st = prune(&bd);
  if (!st)
    st = prepass(&im, &bd);
  if (!st) {
    im.module = eddy_ir_module_create(ctx, eddy_ir_loc_name(ctx, im.file));
    if (!im.module)
      st = eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  if (!st)
    st = import_graph(&im, &bd);
  // The importer's own checks should leave nothing for the verifier; it
  // still runs, so that no broken IR leaves the importer.
  if (!st)
    st = eddy_ir_verify_module(im.module);
  tf_body_destroy(&bd);
  eddy_ptrmap_destroy(&im.func_by_name);
  eddy_ptrmap_destroy(&im.variant_types);
  eddy_arena_destroy(im.arena);
  eddy_tf_graphdef_free(gd);
  if (st) {
    if (im.module)
      eddy_ir_module_destroy(im.module);
    return st;
  }
  *out_module = im.module;
  return NULL;
}

eddy_status_t eddy_tf_import_graphdef(eddy_ctx_t *ctx, const char *path,
                                      const eddy_tf_import_opts_t *opts,
                                      eddy_module_t **out_module) {
  *out_module = NULL;
  FILE *f = fopen(path, "rb");
  if (!f)
    return eddy_status_create_at(EDDY_ERR_IO, path, "cannot open: %s",
                                 strerror(errno));
  eddy_buf_t data;
  eddy_buf_init(&data);
  char chunk[65536];
  size_t n;
  eddy_status_t st = NULL;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
    // protobuf messages are limited to 2 GiB.
    if (data.len + n > ((size_t)2 << 30)) {
      st = eddy_status_create_at(EDDY_ERR_RESOURCE, path,
                                 "the file is larger than 2 GiB, the limit "
                                 "of a protobuf message");
      break;
    }
    eddy_buf_append(&data, chunk, n);
  }
  if (!st && ferror(f))
    st = eddy_status_create_at(EDDY_ERR_IO, path, "cannot read: %s",
                               strerror(errno));
  fclose(f);
  if (!st)
    st = eddy_tf_import_graphdef_bytes(ctx, path, data.data ? data.data : "",
                                       data.len, opts, out_module);
  eddy_buf_destroy(&data);
  return st;
}

eddy_status_t eddy_tf_graphdef_devices(const char *path,
                                       void (*fn)(void *user,
                                                  const char *node,
                                                  const char *device),
                                       void *user) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return eddy_status_create_at(EDDY_ERR_IO, path, "cannot open: %s",
                                 strerror(errno));
  eddy_buf_t data;
  eddy_buf_init(&data);
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
    eddy_buf_append(&data, chunk, n);
  fclose(f);
  Tensorflow__GraphDef *gd = NULL;
  eddy_status_t st = eddy_tf_graphdef_unpack(path, data.data ? data.data : "",
                                             data.len, &gd);
  eddy_buf_destroy(&data);
  EDDY_RETURN_IF_ERROR(st);
  for (size_t i = 0; i < gd->n_node; i++)
    if (gd->node[i]->device && *gd->node[i]->device)
      fn(user, gd->node[i]->name, gd->node[i]->device);
  const Tensorflow__FunctionDefLibrary *lib = gd->library;
  for (size_t k = 0; lib && k < lib->n_function; k++) {
    const Tensorflow__FunctionDef *fd = lib->function[k];
    for (size_t i = 0; i < fd->n_node_def; i++)
      if (fd->node_def[i]->device && *fd->node_def[i]->device)
        fn(user, fd->node_def[i]->name, fd->node_def[i]->device);
  }
  eddy_tf_graphdef_free(gd);
  return NULL;
}
