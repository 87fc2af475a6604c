/// One graph body (the GraphDef's nodes or a FunctionDef's), read: nodes
/// indexed by name, their outputs laid out from the op table, their inputs
/// resolved to edges, and a topological order in which the back edges of v1
/// loops (NextIteration -> Merge) do not count. Any other cycle is an error
/// naming its nodes. tf_build.c turns the nodes into ops.
#include "dialects/tf/tf_import_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// Most outputs one node may have (a Split with num_split = 2^40 is an
/// attack, not a model).
#define MAX_NODE_OUTPUTS 65536

/// ---- Diagnostics ----

static void format_loc(const tf_body_t *bd, const tf_node_t *nd,
                       eddy_buf_t *b) {
  eddy_buf_puts(b, bd->im->file);
  if (bd->fn)
    eddy_buf_printf(b, ": function '%s'", bd->fn->name);
  if (nd)
    eddy_buf_printf(b, ": node '%s'", nd->def->name);
}

eddy_status_t tf_error(const tf_body_t *bd, const tf_node_t *nd,
                       eddy_status_code_t code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  eddy_status_t inner = eddy_status_createv(code, fmt, ap);
  va_end(ap);
  return tf_error_wrap(bd, nd, "", inner);
}

eddy_status_t tf_error_wrap(const tf_body_t *bd, const tf_node_t *nd,
                            const char *prefix, eddy_status_t inner) {
  eddy_buf_t loc;
  eddy_buf_init(&loc);
  format_loc(bd, nd, &loc);
  eddy_status_t st =
      eddy_status_create_at(eddy_status_code(inner), loc.data, "%s%s", prefix,
                            eddy_status_message(inner));
  eddy_status_destroy(inner);
  eddy_buf_destroy(&loc);
  return st;
}

static const char *plural(size_t n) { return n == 1 ? "" : "s"; }

/// ---- Setup and lookup ----

void tf_body_init(tf_body_t *bd, tf_importer_t *im, tf_func_t *fn,
                  Tensorflow__NodeDef **defs, size_t n) {
  memset(bd, 0, sizeof *bd);
  bd->im = im;
  bd->fn = fn;
  bd->defs = defs;
  bd->num_nodes = n;
  bd->nodes = eddy_arena_alloc(im->arena, (n ? n : 1) * sizeof *bd->nodes);
  eddy_ptrmap_init(&bd->node_by_name);
  eddy_ptrmap_init(&bd->arg_by_name);
  eddy_ir_builder_init(&bd->b, im->ctx);
}

void tf_body_destroy(tf_body_t *bd) {
  eddy_ptrmap_destroy(&bd->node_by_name);
  eddy_ptrmap_destroy(&bd->arg_by_name);
}

tf_node_t *tf_body_find(tf_body_t *bd, const char *name, size_t len) {
  const eddy_ident_t *id = eddy_ir_ident_get(bd->im->ctx, name, len);
  uintptr_t i = (uintptr_t)eddy_ptrmap_get(&bd->node_by_name, id);
  return i ? &bd->nodes[i - 1] : NULL;
}

/// Argument index + 1 of a function argument called name, or 0.
static size_t find_arg(tf_body_t *bd, const char *name, size_t len) {
  if (!bd->fn)
    return 0;
  const eddy_ident_t *id = eddy_ir_ident_get(bd->im->ctx, name, len);
  return (size_t)(uintptr_t)eddy_ptrmap_get(&bd->arg_by_name, id);
}

/// ---- Output layout ----

static eddy_status_t out_arg_count(tf_body_t *bd, tf_node_t *nd,
                                   const eddy_tf_out_spec_t *s,
                                   uint32_t *out) {
  *out = 1;
  if (s->kind == EDDY_TF_OUT_TYPES) {
    const Tensorflow__AttrValue *v = tf_node_attr(nd, s->attr);
    if (!v)
      return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                      "%s needs the attribute '%s' (a list of types)",
                      nd->def->op, s->attr);
    if (v->value_case == TENSORFLOW__ATTR_VALUE__VALUE__NOT_SET) {
      *out = 0;
      return NULL;
    }
    if (v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST)
      return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                      "attribute '%s' must be a list of types", s->attr);
    *out = (uint32_t)(v->list->n_type < MAX_NODE_OUTPUTS
                          ? v->list->n_type
                          : MAX_NODE_OUTPUTS + 1);
  } else if (s->number_attr) {
    const Tensorflow__AttrValue *v = tf_node_attr(nd, s->number_attr);
    if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_I)
      return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                      "%s needs the integer attribute '%s'", nd->def->op,
                      s->number_attr);
    if (v->i < 0 || v->i > MAX_NODE_OUTPUTS)
      return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                      "attribute '%s' is %lld (at most %d)", s->number_attr,
                      (long long)v->i, MAX_NODE_OUTPUTS);
    *out = (uint32_t)v->i;
  }
  return NULL;
}

static eddy_status_t layout(tf_body_t *bd, tf_node_t *nd) {
  eddy_arena_t *a = bd->im->arena;
  const char *op = nd->def->op;
  // A library function shadows an op of the same name, as in TensorFlow.
  nd->callee = tf_importer_find_func(bd->im, op);
  if (nd->callee) {
    const Tensorflow__OpDef *sig = nd->callee->fdef->signature;
    nd->num_out_args = (uint32_t)sig->n_output_arg;
  } else {
    nd->info = eddy_tf_op_info(op);
    if (!nd->info)
      return tf_error(bd, nd, EDDY_ERR_UNSUPPORTED,
                      "unsupported TensorFlow op '%s'", op);
    nd->num_out_args = nd->info->num_outs;
  }
  uint32_t k = nd->num_out_args ? nd->num_out_args : 1;
  nd->out_arg_names = eddy_arena_alloc(a, k * sizeof(char *));
  nd->out_arg_start = eddy_arena_alloc(a, k * sizeof(uint32_t));
  nd->out_arg_len = eddy_arena_alloc(a, k * sizeof(uint32_t));
  uint64_t total = 0;
  for (uint32_t i = 0; i < nd->num_out_args; i++) {
    uint32_t n = 1;
    if (nd->callee) {
      const Tensorflow__OpDef__ArgDef *arg =
          nd->callee->fdef->signature->output_arg[i];
      nd->out_arg_names[i] = arg->name;
    } else {
      nd->out_arg_names[i] = nd->info->outs[i].name;
      EDDY_RETURN_IF_ERROR(out_arg_count(bd, nd, &nd->info->outs[i], &n));
    }
    nd->out_arg_start[i] = (uint32_t)total;
    nd->out_arg_len[i] = n;
    total += n;
    if (total > MAX_NODE_OUTPUTS)
      return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                      "the node has more than %d outputs", MAX_NODE_OUTPUTS);
  }
  nd->num_outs = (uint32_t)total;
  nd->outs = eddy_arena_alloc(a, (total ? total : 1) * sizeof(eddy_value_t *));
  return NULL;
}

/// ---- Inputs ----

/// Parses a non-negative output index of at most 9 digits.
static bool parse_index(const char *s, uint32_t *out) {
  size_t n = strlen(s);
  if (n == 0 || n > 9)
    return false;
  uint32_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return false;
    v = v * 10 + (uint32_t)(s[i] - '0');
  }
  *out = v;
  return true;
}

/// Resolves the tensor reference ref into e (src, out). The syntax is
/// "node" / "node:i" in a GraphDef, and "arg" / "arg:i" /
/// "node:out_arg:i" in a FunctionDef.
static eddy_status_t resolve_ref(tf_body_t *bd, const tf_node_t *nd,
                                 const char *ref, tf_edge_t *e) {
  const char *c1 = strchr(ref, ':');
  size_t name_len = c1 ? (size_t)(c1 - ref) : strlen(ref);
  size_t arg = find_arg(bd, ref, name_len);
  tf_node_t *src = tf_body_find(bd, ref, name_len);
  const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
  uint32_t idx = 0;
  if (c2) {
    // node:out_arg:i (functions only)
    if (!bd->fn || !src)
      return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                      "input '%s' names no node", ref);
    if (!parse_index(c2 + 1, &idx))
      return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                      "input '%s' has a malformed output index", ref);
    size_t alen = (size_t)(c2 - c1 - 1);
    for (uint32_t i = 0; i < src->num_out_args; i++) {
      const char *an = src->out_arg_names[i];
      if (strlen(an) != alen || memcmp(an, c1 + 1, alen) != 0)
        continue;
      if (idx >= src->out_arg_len[i])
        return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                        "input '%s': output '%s' of node '%s' has %u "
                        "element%s",
                        ref, an, src->def->name, src->out_arg_len[i],
                        plural(src->out_arg_len[i]));
      e->src = (int32_t)(src - bd->nodes);
      e->out = src->out_arg_start[i] + idx;
      return NULL;
    }
    return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                    "input '%s': node '%s' (%s) has no output named '%.*s'",
                    ref, src->def->name, src->def->op, (int)alen, c1 + 1);
  }
  if (c1 && !parse_index(c1 + 1, &idx))
    return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                    "input '%s' has a malformed output index", ref);
  if (arg) {
    if (idx != 0)
      return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                      "input '%s': argument '%.*s' is a single tensor", ref,
                      (int)name_len, ref);
    e->src = -1 - (int32_t)(arg - 1);
    e->out = 0;
    return NULL;
  }
  if (!src)
    return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                    "input '%s' names no node%s", ref,
                    bd->fn ? " or argument" : "");
  if (idx >= src->num_outs)
    return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                    "input '%s': node '%s' (%s) has %u output%s", ref,
                    src->def->name, src->def->op, src->num_outs,
                    plural(src->num_outs));
  e->src = (int32_t)(src - bd->nodes);
  e->out = idx;
  return NULL;
}

static eddy_status_t resolve_inputs(tf_body_t *bd, tf_node_t *nd) {
  size_t n = nd->def->n_input;
  nd->edges = eddy_arena_alloc(bd->im->arena, (n ? n : 1) * sizeof(tf_edge_t));
  for (size_t i = 0; i < n; i++) {
    const char *in = nd->def->input[i];
    tf_edge_t *e = &nd->edges[nd->num_edges];
    memset(e, 0, sizeof *e);
    if (in[0] == '^') {
      const char *name = in + 1;
      tf_node_t *src = tf_body_find(bd, name, strlen(name));
      size_t arg = find_arg(bd, name, strlen(name));
      if (src) {
        e->src = (int32_t)(src - bd->nodes);
      } else if (arg) {
        e->src = -1 - (int32_t)(arg - 1);
      } else {
        return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                        "control input '%s' names no node", in);
      }
      e->control = true;
    } else {
      // Assert(condition, data...): the data only makes the message (often
      // strings, which eddy has no dtype for), and eddy does not check the
      // condition (legalize-tf drops the node): only the condition is
      // imported (and the Consts that only make the message are not,
      // drop_assert_messages).
      if (nd->num_data > 0 && tf_node_is(nd, "Assert"))
        continue;
      if (nd->num_edges > nd->num_data)
        return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                        "data input '%s' comes after a control input", in);
      EDDY_RETURN_IF_ERROR(resolve_ref(bd, nd, in, e));
      e->back = e->src >= 0 && tf_node_is(&bd->nodes[e->src], "NextIteration") &&
                tf_node_is(nd, "Merge");
      nd->num_data++;
    }
    nd->num_edges++;
  }
  if (nd->info) {
    int64_t lo = nd->info->inputs.min_inputs, hi = nd->info->inputs.max_inputs;
    if ((int64_t)nd->num_data < lo || (hi >= 0 && (int64_t)nd->num_data > hi))
      return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                      "%s takes %s%lld data input%s, the node has %u",
                      nd->def->op, hi < 0 ? "at least " : "", (long long)lo,
                      plural((size_t)lo), nd->num_data);
  }
  return NULL;
}

eddy_status_t tf_body_index(tf_body_t *bd) {
  eddy_ctx_t *ctx = bd->im->ctx;
  for (size_t i = 0; i < bd->num_nodes; i++) {
    tf_node_t *nd = &bd->nodes[i];
    nd->def = bd->defs[i];
    nd->feed = -1;
    nd->keep = true;
    if (!nd->def->name[0])
      return tf_error(bd, NULL, EDDY_ERR_INVALID_ARGUMENT,
                      "node #%zu has no name (is the file a GraphDef?)", i);
    if (!nd->def->op[0])
      return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                      "the node has no op (is the file a GraphDef?)");
    const eddy_ident_t *id = eddy_ir_ident_cstr(ctx, nd->def->name);
    uintptr_t prev = (uintptr_t)eddy_ptrmap_get(&bd->node_by_name, id);
    if (prev)
      return tf_error(bd, nd, EDDY_ERR_INVALID_ARGUMENT,
                      "duplicate node name: nodes #%zu (%s) and #%zu (%s) "
                      "are both called '%s'",
                      (size_t)(prev - 1), bd->nodes[prev - 1].def->op, i,
                      nd->def->op, nd->def->name);
    eddy_ptrmap_put(&bd->node_by_name, id, (void *)(uintptr_t)(i + 1));
  }
  return NULL;
}

static tf_node_t *node_of_ref(tf_body_t *bd, const char *ref) {
  if (ref[0] == '^')
    ref++;
  size_t len = strcspn(ref, ":");
  return tf_body_find(bd, ref, len);
}

/// The Consts that only make Assert messages (an Assert's data inputs after
/// its condition, which are not imported): not imported either, since they
/// are often strings, which eddy has no dtype for. Runs on names, before
/// the nodes are resolved. A Const that a fetch or a function's ret names
/// is kept.
static void drop_assert_messages(tf_body_t *bd) {
  size_t n = bd->num_nodes;
  // used: 1 read as a message only, 2 read otherwise.
  uint8_t *used = eddy_arena_alloc(bd->im->arena, n + 1);
  memset(used, 0, n + 1);
  bool any = false;
  for (size_t i = 0; i < n; i++) {
    const tf_node_t *nd = &bd->nodes[i];
    if (!nd->keep)
      continue;
    bool assert = tf_node_is(nd, "Assert");
    for (size_t k = 0; k < nd->def->n_input; k++) {
      tf_node_t *src = node_of_ref(bd, nd->def->input[k]);
      if (!src)
        continue;
      size_t j = (size_t)(src - bd->nodes);
      if (assert && k > 0 && nd->def->input[k][0] != '^') {
        used[j] = used[j] ? used[j] : 1;
        any = true;
      } else {
        used[j] = 2;
      }
    }
  }
  if (!any)
    return;
  const eddy_tf_import_opts_t *o = bd->im->opts;
  for (size_t k = 0; !bd->fn && k < o->num_fetches; k++) {
    tf_node_t *src = node_of_ref(bd, o->fetches[k]);
    if (src)
      used[src - bd->nodes] = 2;
  }
  const Tensorflow__FunctionDef *f = bd->fn ? bd->fn->fdef : NULL;
  for (size_t k = 0; f && k < f->n_ret; k++) {
    tf_node_t *src = node_of_ref(bd, f->ret[k]->value);
    if (src)
      used[src - bd->nodes] = 2;
  }
  for (size_t i = 0; i < n; i++)
    if (used[i] == 1 && tf_node_is(&bd->nodes[i], "Const"))
      bd->nodes[i].keep = false;
}

eddy_status_t tf_body_resolve(tf_body_t *bd) {
  drop_assert_messages(bd);
  for (size_t i = 0; i < bd->num_nodes; i++)
    if (bd->nodes[i].keep)
      EDDY_RETURN_IF_ERROR(layout(bd, &bd->nodes[i]));
  for (size_t i = 0; i < bd->num_nodes; i++)
    if (bd->nodes[i].keep)
      EDDY_RETURN_IF_ERROR(resolve_inputs(bd, &bd->nodes[i]));
  return NULL;
}

/// ---- Topological order ----

typedef struct heap {
  uint32_t *v;
  size_t n;
} heap_t;

static void heap_push(heap_t *h, uint32_t x) {
  size_t i = h->n++;
  while (i > 0 && h->v[(i - 1) / 2] > x) {
    h->v[i] = h->v[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h->v[i] = x;
}

static uint32_t heap_pop(heap_t *h) {
  uint32_t top = h->v[0], last = h->v[--h->n];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= h->n)
      break;
    if (c + 1 < h->n && h->v[c + 1] < h->v[c])
      c++;
    if (h->v[c] >= last)
      break;
    h->v[i] = h->v[c];
    i = c;
  }
  if (h->n)
    h->v[i] = last;
  return top;
}

/// Names the nodes of a cycle among the nodes left with inputs (indeg > 0).
static eddy_status_t cycle_error(tf_body_t *bd, const uint32_t *indeg) {
  size_t n = bd->num_nodes;
  int64_t *pos = malloc(n * sizeof *pos);
  uint32_t *path = malloc(n * sizeof *path);
  if (!pos || !path) {
    free(pos);
    free(path);
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  for (size_t i = 0; i < n; i++)
    pos[i] = -1;
  uint32_t cur = 0;
  while (cur < n && !(bd->nodes[cur].keep && indeg[cur] > 0))
    cur++;
  // Walk from consumer to producer until a node repeats: every node left
  // has an input from another node left, so the walk cannot stop.
  size_t len = 0;
  while (pos[cur] < 0) {
    pos[cur] = (int64_t)len;
    path[len++] = cur;
    const tf_node_t *nd = &bd->nodes[cur];
    for (uint32_t k = 0; k < nd->num_edges; k++) {
      const tf_edge_t *e = &nd->edges[k];
      if (e->back || e->src < 0 || indeg[e->src] == 0)
        continue;
      cur = (uint32_t)e->src;
      break;
    }
  }
  // The cycle is path[pos[cur]..len), consumer before producer. Print it
  // the way data flows, from its first node in the GraphDef.
  size_t first = (size_t)pos[cur], m = len - first, start = 0;
  for (size_t i = 1; i < m; i++)
    if (path[first + i] < path[first + start])
      start = i;
  eddy_buf_t msg;
  eddy_buf_init(&msg);
  for (size_t k = 0; k <= m; k++) {
    // Walking the stored path backwards is walking along the data.
    size_t i = (start + m - k % m) % m;
    eddy_buf_printf(&msg, "%s'%s'", k ? " -> " : "",
                    bd->nodes[path[first + i]].def->name);
  }
  eddy_status_t st = tf_error(
      bd, &bd->nodes[path[first + start]], EDDY_ERR_INVALID_ARGUMENT,
      "the graph has a cycle that does not pass through a NextIteration -> "
      "Merge back edge: %s",
      msg.data);
  eddy_buf_destroy(&msg);
  free(pos);
  free(path);
  return st;
}

eddy_status_t tf_body_topo_order(tf_body_t *bd, uint32_t **out_order,
                                 size_t *out_n) {
  size_t n = bd->num_nodes;
  eddy_arena_t *a = bd->im->arena;
  uint32_t *indeg = eddy_arena_alloc(a, (n + 1) * sizeof(uint32_t));
  uint32_t *start = eddy_arena_alloc(a, (n + 1) * sizeof(uint32_t));
  size_t num_edges = 0, kept = 0;
  for (size_t i = 0; i < n; i++) {
    const tf_node_t *nd = &bd->nodes[i];
    if (!nd->keep)
      continue;
    kept++;
    for (uint32_t k = 0; k < nd->num_edges; k++) {
      const tf_edge_t *e = &nd->edges[k];
      if (e->back || e->src < 0)
        continue;
      indeg[i]++;
      start[e->src + 1]++;
      num_edges++;
    }
  }
  for (size_t i = 0; i < n; i++)
    start[i + 1] += start[i];
  uint32_t *users = eddy_arena_alloc(a, (num_edges + 1) * sizeof(uint32_t));
  uint32_t *fill = eddy_arena_alloc(a, (n + 1) * sizeof(uint32_t));
  for (size_t i = 0; i < n; i++) {
    const tf_node_t *nd = &bd->nodes[i];
    if (!nd->keep)
      continue;
    for (uint32_t k = 0; k < nd->num_edges; k++) {
      const tf_edge_t *e = &nd->edges[k];
      if (e->back || e->src < 0)
        continue;
      users[start[e->src] + fill[e->src]++] = (uint32_t)i;
    }
  }
  heap_t h = {eddy_arena_alloc(a, (n + 1) * sizeof(uint32_t)), 0};
  uint32_t *order = eddy_arena_alloc(a, (n + 1) * sizeof(uint32_t));
  size_t len = 0;
  for (size_t i = 0; i < n; i++)
    if (bd->nodes[i].keep && indeg[i] == 0)
      heap_push(&h, (uint32_t)i);
  while (h.n) {
    uint32_t i = heap_pop(&h);
    order[len++] = i;
    for (uint32_t u = start[i]; u < start[i + 1]; u++)
      if (--indeg[users[u]] == 0)
        heap_push(&h, users[u]);
  }
  if (len < kept)
    return cycle_error(bd, indeg);
  *out_order = order;
  *out_n = len;
  return NULL;
}

eddy_status_t tf_body_lookup_value(tf_body_t *bd, const char *ref,
                                   const char *what, eddy_value_t **out) {
  tf_edge_t e = {0};
  eddy_status_t st = resolve_ref(bd, NULL, ref, &e);
  if (st) {
    eddy_buf_t prefix;
    eddy_buf_init(&prefix);
    eddy_buf_printf(&prefix, "%s: ", what);
    // resolve_ref located it already; keep its message, add the context.
    eddy_status_t s2 = eddy_status_create_at(
        eddy_status_code(st), eddy_status_location(st), "%s%s", prefix.data,
        eddy_status_message(st));
    eddy_status_destroy(st);
    eddy_buf_destroy(&prefix);
    return s2;
  }
  if (e.src >= 0 && !bd->nodes[e.src].keep)
    return tf_error(bd, NULL, EDDY_ERR_INTERNAL,
                    "%s: node '%s' was pruned", what,
                    bd->nodes[e.src].def->name);
  if (e.src >= 0 && bd->nodes[e.src].num_outs == 0)
    return tf_error(bd, NULL, EDDY_ERR_INVALID_ARGUMENT,
                    "%s: node '%s' has no outputs", what,
                    bd->nodes[e.src].def->name);
  *out = tf_edge_value(bd, &e);
  return NULL;
}
