/// The interpreter's view of a df function: nodes with operand and consumer
/// indices, and the static frames the df.enter ops name. Built once per run
/// from the IR, read-only afterwards (shared by the worker threads).
#include "runtime/interp/interp_internal.h"

#include <stdlib.h>
#include <string.h>

/// Frame of values produced by IK_FREE nodes during the analysis.
#define FRAME_FREE (-2)

void interp_describe_op(const eddy_op_t *op, eddy_buf_t *out) {
  eddy_buf_printf(out, "'%s' op at ", op->name->str);
  eddy_ir_loc_format(op->loc, out);
}

static eddy_status_t graph_error(const eddy_op_t *op, eddy_status_code_t code,
                                 const char *msg) {
  eddy_buf_t b;
  eddy_buf_init(&b);
  interp_describe_op(op, &b);
  eddy_status_t st = eddy_status_create(code, "%s: %s", b.data, msg);
  eddy_buf_destroy(&b);
  return st;
}

static interp_kind_t kind_of(const eddy_op_t *op) {
  const char *n = op->name->str;
  if (strncmp(n, "df.", 3) == 0) {
    n += 3;
    if (strcmp(n, "switch") == 0)
      return IK_SWITCH;
    if (strcmp(n, "switch_n") == 0)
      return IK_SWITCH_N;
    if (strcmp(n, "merge") == 0)
      return IK_MERGE;
    if (strcmp(n, "enter") == 0)
      return IK_ENTER;
    if (strcmp(n, "exit") == 0)
      return IK_EXIT;
    if (strcmp(n, "next_iteration") == 0)
      return IK_NEXT;
    if (strcmp(n, "loop_cond") == 0 || strcmp(n, "after") == 0)
      return IK_FORWARD;
    if (strcmp(n, "control") == 0)
      return op->num_operands == 0 ? IK_FREE : IK_CONTROL;
    if (strcmp(n, "send") == 0)
      return IK_SEND;
    if (strcmp(n, "recv") == 0)
      return IK_RECV;
  }
  if (strncmp(n, "tf.", 3) == 0 && interp_resource_op_code(n) >= 0)
    return IK_RESOURCE;
  if (strcmp(n, "tf.ControlTrigger") == 0 && op->num_operands > 0)
    return IK_TRIGGER;
  return op->num_operands == 0 ? IK_FREE : IK_NORMAL;
}

static int32_t frame_lookup_or_add(interp_graph_t *g, const char *name,
                                   int32_t parent, int64_t parallel) {
  for (int32_t i = 0; i < g->num_frames; i++)
    if (strcmp(g->frames[i].name, name) == 0)
      return i;
  interp_sframe_t *f = &g->frames[g->num_frames];
  memset(f, 0, sizeof(*f));
  f->name = name;
  f->parent = parent;
  f->parallel = parallel;
  f->depth = parent < 0 ? 1 : g->frames[parent].depth + 1;
  return g->num_frames++;
}

static uint32_t value_index(const interp_graph_t *g, const eddy_value_t *v) {
  uintptr_t i = (uintptr_t)eddy_ptrmap_get(&g->value_index, v);
  return i ? (uint32_t)(i - 1) : UINT32_MAX;
}

static eddy_status_t oom(void) {
  return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
}

/// A tensor of INTERP_EXPENSIVE_ELEMS elements or more, or of unknown size.
static bool large_type(const eddy_type_t *t) {
  if (t->kind != EDDY_TYPE_TENSOR)
    return false;
  if (t->rank == EDDY_RANK_UNKNOWN)
    return true;
  int64_t n = 1;
  for (int32_t i = 0; i < t->rank; i++) {
    if (t->dims[i] == EDDY_DIM_DYNAMIC)
      return true;
    if (t->dims[i] == 0)
      return false;
    n = n > INTERP_EXPENSIVE_ELEMS ? n : n * t->dims[i];
  }
  return n >= INTERP_EXPENSIVE_ELEMS;
}

static bool is_expensive(const eddy_op_t *op) {
  for (size_t i = 0; i < op->num_operands; i++)
    if (large_type(op->operands[i].value->type))
      return true;
  for (size_t i = 0; i < op->num_results; i++)
    if (large_type(eddy_ir_op_result((eddy_op_t *)op, i)->type))
      return true;
  return false;
}

/// Classifies one op and checks that the executor can run it.
static eddy_status_t node_init(interp_graph_t *g, interp_node_t *nd,
                               const eddy_op_t *op, int32_t *vframe) {
  nd->op = op;
  nd->kind = kind_of(op);
  nd->num_in = op->num_operands;
  nd->num_out = op->num_results;
  nd->frame = -1;
  nd->target_frame = -1;
  if (eddy_ir_op_is(op, "ctl.while") || eddy_ir_op_is(op, "ctl.if"))
    return graph_error(op, EDDY_ERR_UNSUPPORTED,
                       "structured control flow must be lowered to dataflow "
                       "first (eddy opt --passes=to-dataflow)");
  if (op->num_regions > 0)
    return graph_error(op, EDDY_ERR_UNSUPPORTED,
                       "the dataflow interpreter runs ops without regions");
  if (nd->kind == IK_NORMAL ||
      (nd->kind == IK_FREE && !eddy_ir_op_is(op, "df.control") &&
       !eddy_ir_op_is(op, "tf.ControlTrigger"))) {
    nd->has_kernel = eddy_eval_op_is_supported(op);
    if (!nd->has_kernel)
      return graph_error(op, EDDY_ERR_UNSUPPORTED,
                         "the interpreter has no kernel for this op");
  }
  nd->expensive = nd->kind == IK_NORMAL && is_expensive(op);
  if (nd->kind == IK_SEND || nd->kind == IK_RECV) {
    nd->key = eddy_ir_op_attr_int(op, "key", -1);
    nd->peer = (int32_t)eddy_ir_op_attr_int(
        op, nd->kind == IK_SEND ? "to" : "from", -1);
  }
  if (nd->kind == IK_RESOURCE) {
    nd->res_op = interp_resource_op_code(op->name->str);
    uint32_t need = interp_resource_op_num_data(nd->res_op);
    bool ok = nd->num_in >= need;
    for (uint32_t i = 0; ok && i < nd->num_in; i++)
      ok = (i < need) ==
           (op->operands[i].value->type->kind != EDDY_TYPE_TOKEN);
    uint32_t need_out = interp_resource_op_num_results(nd->res_op);
    if (!ok || op->num_results != need_out) {
      eddy_buf_t m;
      eddy_buf_init(&m);
      if (!ok)
        eddy_buf_printf(&m, "expects %u data operands, then only control "
                            "tokens", need);
      else
        eddy_buf_printf(&m, "expects %u result%s, has %u", need_out,
                        need_out == 1 ? "" : "s", op->num_results);
      eddy_status_t st = graph_error(op, EDDY_ERR_VERIFY, m.data);
      eddy_buf_destroy(&m);
      return st;
    }
  }
  nd->in = calloc(nd->num_in ? nd->num_in : 1, sizeof(*nd->in));
  if (!nd->in)
    return oom();
  // The node's frame: that of its operands produced in a frame (back
  // edges are not known yet and agree with the forward input anyway).
  bool have = false;
  for (uint32_t i = 0; i < nd->num_in; i++) {
    uint32_t vi = value_index(g, op->operands[i].value);
    if (vi == UINT32_MAX)
      return graph_error(op, EDDY_ERR_VERIFY,
                         "operand is not defined in the function's body");
    nd->in[i] = vi;
    if (!g->value_free[vi])
      nd->num_tagged++;
    if (vframe[vi] == FRAME_FREE || vframe[vi] == INT32_MIN)
      continue;
    if (!have) {
      nd->frame = vframe[vi];
      have = true;
    } else if (vframe[vi] != nd->frame && nd->kind != IK_MERGE) {
      return graph_error(op, EDDY_ERR_INVALID_ARGUMENT,
                         "has operands from different frames (a value used "
                         "inside a loop must come in through df.enter)");
    }
  }
  int32_t out_frame = nd->frame;
  switch (nd->kind) {
  case IK_FREE:
    out_frame = FRAME_FREE;
    break;
  case IK_ENTER: {
    const eddy_attr_t *a = eddy_ir_op_attr(op, "frame_name");
    if (!a || a->kind != EDDY_ATTR_STRING || a->u.str.len == 0)
      return graph_error(op, EDDY_ERR_VERIFY, "needs a frame_name");
    int64_t par = eddy_ir_op_attr_int(op, "parallel_iterations", 10);
    int32_t fid = frame_lookup_or_add(g, a->u.str.data, nd->frame, par);
    if (!g->frames[fid].enter)
      g->frames[fid].enter = op;
    if (g->frames[fid].parent != nd->frame)
      return graph_error(op, EDDY_ERR_INVALID_ARGUMENT,
                         "enters its frame from another parent frame than "
                         "the frame's other df.enter ops (frame names must be "
                         "unique per loop)");
    if (g->frames[fid].depth > INTERP_MAX_FRAME_DEPTH) {
      eddy_buf_t b;
      eddy_buf_init(&b);
      eddy_buf_printf(&b, "opens loop frame '%s', nested more than %d frames "
                          "deep",
                      a->u.str.data, INTERP_MAX_FRAME_DEPTH);
      eddy_status_t st = graph_error(op, EDDY_ERR_UNSUPPORTED, b.data);
      eddy_buf_destroy(&b);
      return st;
    }
    g->frames[fid].num_enters++;
    nd->target_frame = fid;
    nd->is_constant = eddy_ir_op_attr_bool(op, "is_constant", false);
    out_frame = fid;
    break;
  }
  case IK_EXIT:
    if (nd->frame < 0)
      return graph_error(op, EDDY_ERR_INVALID_ARGUMENT,
                         "is not inside a loop frame (no df.enter leads to "
                         "it)");
    nd->target_frame = nd->frame;
    nd->exit_index = g->frames[nd->frame].num_exits++;
    out_frame = g->frames[nd->frame].parent;
    break;
  case IK_NEXT:
    if (nd->frame < 0)
      return graph_error(op, EDDY_ERR_INVALID_ARGUMENT,
                         "is not inside a loop frame (no df.enter leads to "
                         "it)");
    break;
  case IK_MERGE: {
    uint32_t back = 0, fwd = 0;
    for (uint32_t i = 0; i < nd->num_in; i++) {
      const eddy_value_t *v = op->operands[i].value;
      if (g->value_free[nd->in[i]])
        return graph_error(op, EDDY_ERR_UNSUPPORTED,
                           "has an input from an op with no operands; give "
                           "it a frame with df.after");
      if (v->def && eddy_ir_op_is(v->def, "df.next_iteration"))
        back++;
      else
        fwd++;
    }
    nd->merge_need0 = back ? fwd : nd->num_in;
    nd->merge_need_n = back ? back : nd->num_in;
    break;
  }
  default:
    break;
  }
  for (uint32_t r = 0; r < nd->num_out; r++) {
    uint32_t vi = value_index(g, &((eddy_op_t *)op)->results[r]);
    vframe[vi] = out_frame;
    g->value_free[vi] = nd->kind == IK_FREE;
  }
  return NULL;
}

/// Whether node nd reads the value of operand k (else it looks only at
/// whether the value is dead, or waits for it).
static bool reads_operand(const interp_node_t *nd, uint32_t k) {
  switch (nd->kind) {
  case IK_CONTROL:
  case IK_TRIGGER:
  case IK_RECV:
    return false;
  case IK_FORWARD: // df.after(x, tokens...): only x is forwarded
    return k == 0;
  case IK_RESOURCE:
    return k < interp_resource_op_num_data(nd->res_op);
  default:
    return true;
  }
}

/// The operands each node reads (interp_node_t.reads), the readers of each
/// value, and the operands a node may take (interp_node_t.take): values
/// of nodes with no operands (read from every frame) and the function's
/// results (read after the run) always stay in their slots, and so do the
/// operands of sends and resource ops, which read them in place.
static eddy_status_t find_takes(interp_graph_t *g) {
  g->readers = calloc(g->num_values ? g->num_values : 1, sizeof(*g->readers));
  bool *result = calloc(g->num_values ? g->num_values : 1, sizeof(*result));
  if (!g->readers || !result) {
    free(result);
    return oom();
  }
  for (uint32_t i = 0; i < g->num_ret; i++)
    result[g->ret[i]] = true;
  for (uint32_t n = 0; n < g->num_nodes; n++) {
    interp_node_t *nd = &g->nodes[n];
    for (uint32_t k = 0; k < nd->num_in; k++) {
      if (!reads_operand(nd, k))
        continue;
      uint32_t vi = nd->in[k];
      g->readers[vi]++;
      if (k >= 64)
        continue;
      nd->reads |= (uint64_t)1 << k;
      if (!g->value_free[vi] && !result[vi] && nd->kind != IK_SEND &&
          nd->kind != IK_RESOURCE)
        nd->take |= (uint64_t)1 << k;
    }
  }
  free(result);
  return NULL;
}

eddy_status_t interp_graph_build(const eddy_op_t *func, interp_graph_t *g) {
  memset(g, 0, sizeof(*g));
  g->func = func;
  eddy_ptrmap_init(&g->value_index);
  eddy_block_t *entry = eddy_ir_func_entry(func);
  if (!entry)
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "@%s has no body", eddy_ir_func_name(func));
  eddy_op_t *ret = eddy_ir_block_terminator(entry);
  if (!ret || !eddy_ir_op_is(ret, "func.return"))
    return eddy_status_create(EDDY_ERR_VERIFY,
                              "@%s does not end in func.return",
                              eddy_ir_func_name(func));
  uint32_t nops = 0, nvals = entry->num_args;
  for (eddy_op_t *op = entry->first; op != ret; op = op->next) {
    nops++;
    nvals += op->num_results;
  }
  g->num_nodes = nops;
  g->num_values = nvals;
  g->nodes = calloc(nops ? nops : 1, sizeof(*g->nodes));
  g->value_free = calloc(nvals ? nvals : 1, sizeof(*g->value_free));
  g->values = calloc(nvals ? nvals : 1, sizeof(*g->values));
  g->frames = calloc(nops ? nops : 1, sizeof(*g->frames));
  g->use_start = calloc(nvals + 1, sizeof(*g->use_start));
  int32_t *vframe = malloc((nvals ? nvals : 1) * sizeof(*vframe));
  if (!g->nodes || !g->value_free || !g->values || !g->frames ||
      !g->use_start || !vframe) {
    free(vframe);
    return oom();
  }
  uint32_t vi = 0;
  for (uint32_t i = 0; i < entry->num_args; i++) {
    g->values[vi] = entry->args[i];
    vframe[vi] = -1;
    eddy_ptrmap_put(&g->value_index, entry->args[i], (void *)(uintptr_t)++vi);
  }
  for (eddy_op_t *op = entry->first; op != ret; op = op->next) {
    for (uint32_t r = 0; r < op->num_results; r++) {
      g->values[vi] = &op->results[r];
      vframe[vi] = INT32_MIN; // not yet analyzed (back edges)
      eddy_ptrmap_put(&g->value_index, &op->results[r],
                      (void *)(uintptr_t)++vi);
    }
  }
  eddy_status_t st = NULL;
  uint32_t ni = 0;
  for (eddy_op_t *op = entry->first; op != ret && !st; op = op->next, ni++) {
    if (op->num_results)
      g->nodes[ni].out = value_index(g, &op->results[0]);
    st = node_init(g, &g->nodes[ni], op, vframe);
  }
  free(vframe);
  EDDY_RETURN_IF_ERROR(st);
  // Consumers of each value, as a CSR array.
  size_t nuses = 0;
  for (uint32_t n = 0; n < nops; n++) {
    for (uint32_t i = 0; i < g->nodes[n].num_in; i++)
      g->use_start[g->nodes[n].in[i] + 1]++;
    nuses += g->nodes[n].num_in;
  }
  for (uint32_t v = 0; v < nvals; v++)
    g->use_start[v + 1] += g->use_start[v];
  g->uses = calloc(nuses ? nuses : 1, sizeof(*g->uses));
  uint32_t *fill = calloc(nvals ? nvals : 1, sizeof(*fill));
  g->num_ret = ret->num_operands;
  g->ret = calloc(g->num_ret ? g->num_ret : 1, sizeof(*g->ret));
  if (!g->uses || !fill || !g->ret) {
    free(fill);
    return oom();
  }
  for (uint32_t n = 0; n < nops; n++) {
    for (uint32_t i = 0; i < g->nodes[n].num_in; i++) {
      uint32_t v = g->nodes[n].in[i];
      g->uses[g->use_start[v] + fill[v]++] = (interp_use_t){n, i};
    }
  }
  free(fill);
  for (uint32_t i = 0; i < g->num_ret; i++) {
    g->ret[i] = value_index(g, ret->operands[i].value);
    if (g->ret[i] == UINT32_MAX)
      return graph_error(ret, EDDY_ERR_VERIFY,
                         "returns a value not defined in the body");
  }
  return find_takes(g);
}

void interp_graph_destroy(interp_graph_t *g) {
  for (uint32_t n = 0; n < g->num_nodes && g->nodes; n++)
    free(g->nodes[n].in);
  free(g->nodes);
  free(g->value_free);
  free(g->values);
  free(g->frames);
  free(g->use_start);
  free(g->uses);
  free(g->readers);
  free(g->ret);
  eddy_ptrmap_destroy(&g->value_index);
  memset(g, 0, sizeof(*g));
}
