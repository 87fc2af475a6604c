/// `eddy dot FILE --entry F [--dataflow] [-o OUT]`: Graphviz dot of a
/// function. Structured form: one node per op, the regions of ctl.while /
/// ctl.if as nested clusters. --dataflow: the function lowered by
/// to-dataflow, one cluster per loop frame (nested as the frames are),
/// df.next_iteration -> df.merge back edges drawn bold, and the edges that
/// may carry a dead value (downstream of a df.switch) dashed. --ranks N:
/// that lowering placed and partitioned over N ranks (lower/partition.h),
/// one cluster per rank, the ops of its control-loop state machines filled
/// pink, and each df.send joined to its df.recv by a red dotted edge.
#include "ir/ir.h"
#include "lower/lower.h"
#include "tools/eddy/cli.h"
#include "tools/eddy/run_dist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dot_args {
  const char *input, *entry, *out, *placement;
  int32_t ranks; ///< 0: not partitioned
  bool dataflow, help;
} dot_args_t;

static int print_help(void) {
  printf("usage: eddy dot FILE [--entry F] [--dataflow] [--ranks N "
         "[--placement P]]\n"
         "                [-o OUT]\n"
         "\n"
         "Writes Graphviz dot of function F of FILE ('-' for standard input):\n"
         "its ops, with the regions of ctl.while and ctl.if as clusters.\n"
         "\n"
         "options:\n"
         "  --entry F      the function (default: the module's only one)\n"
         "  --dataflow     draw its dataflow lowering (to-dataflow) instead:\n"
         "                 loop frames as clusters, back edges bold, edges\n"
         "                 that may carry dead values dashed\n"
         "  --ranks N      draw that lowering partitioned over N ranks, as\n"
         "                 `eddy run --mode=distributed` runs it: a cluster\n"
         "                 per rank, control-loop state machines pink,\n"
         "                 send -> recv pairs red and dotted\n"
         "  --placement P  with --ranks: a placement FILE or random:SEED\n"
         "                 (docs/distributed.md)\n"
         "  -o OUT         write to OUT instead of standard output\n"
         "  -h, --help     show this help\n"
         "\n"
         "Render with: dot -Tsvg out.dot -o out.svg\n");
  return EDDY_CLI_EXIT_OK;
}

static int parse_args(int argc, char **argv, dot_args_t *a) {
  memset(a, 0, sizeof(*a));
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *val = NULL;
    if (arg[0] != '-' || strcmp(arg, "-") == 0) {
      if (a->input)
        return eddy_cli_usage_error("dot", "more than one input file");
      a->input = arg;
    } else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
      a->help = true;
    } else if (strcmp(arg, "--dataflow") == 0) {
      a->dataflow = true;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--ranks", &val)) {
      char *end = NULL;
      long n = val ? strtol(val, &end, 10) : 0;
      if (!val || !*val || *end || n < 1 || n > EDDY_PARTITION_MAX_RANKS)
        return eddy_cli_usage_error("dot",
                                    "flag '--ranks' needs a count from 1 to "
                                    "%d",
                                    EDDY_PARTITION_MAX_RANKS);
      a->ranks = (int32_t)n;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--placement", &val)) {
      if (!val || !*val)
        return eddy_cli_usage_error("dot", "flag '--placement' needs a value");
      a->placement = val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "--entry", &val)) {
      if (!val || !*val)
        return eddy_cli_usage_error("dot", "flag '--entry' needs a name");
      a->entry = val[0] == '@' ? val + 1 : val;
    } else if (eddy_cli_flag_value(argc, argv, &i, "-o", &val)) {
      if (!val || !*val)
        return eddy_cli_usage_error("dot", "flag '-o' needs a file");
      a->out = val;
    } else {
      return eddy_cli_usage_error("dot", "unknown flag '%s'", arg);
    }
  }
  if (!a->help && !a->input)
    return eddy_cli_usage_error("dot", "missing input file");
  if (a->placement && !a->ranks)
    return eddy_cli_usage_error("dot", "'--placement' needs '--ranks'");
  return -1;
}

/// ---- Naming ---------------------------------------------------------------------

typedef struct dot_state {
  eddy_buf_t *out;
  eddy_ptrmap_t ids;     ///< op or block-arg value -> id + 1
  size_t next_id;
  eddy_ptrmap_t may_dead; ///< values that may be dead -> 1
  int cluster;
} dot_state_t;

static size_t node_id(dot_state_t *s, const void *key) {
  uintptr_t id = (uintptr_t)eddy_ptrmap_get(&s->ids, key);
  if (!id) {
    id = ++s->next_id;
    eddy_ptrmap_put(&s->ids, key, (void *)id);
  }
  return id - 1;
}

static void indent(dot_state_t *s, int depth) {
  for (int i = 0; i < depth; i++)
    eddy_buf_puts(s->out, "  ");
}

/// Short label: "core.add", plus a constant's value or an enter's frame.
static void op_label(const eddy_op_t *op, eddy_buf_t *b) {
  eddy_buf_puts(b, op->name->str);
  bool comm = eddy_ir_op_is(op, "df.send") || eddy_ir_op_is(op, "df.recv");
  const char *attr = eddy_ir_op_is(op, "df.enter")        ? "frame_name"
                     : eddy_ir_op_is(op, "core.constant") ? "value"
                     : comm                               ? "key"
                                                          : NULL;
  const eddy_attr_t *a = attr ? eddy_ir_op_attr(op, attr) : NULL;
  if (!a)
    return;
  eddy_buf_t v;
  eddy_buf_init(&v);
  eddy_ir_attr_print(a, &v);
  eddy_buf_puts(b, "\\n");
  // Quotes and backslashes would end the dot string.
  for (size_t i = 0; i < v.len && i < 40; i++) {
    char c = v.data[i];
    if (c == '"' || c == '\\')
      eddy_buf_putc(b, '\\');
    eddy_buf_putc(b, c);
  }
  if (v.len > 40)
    eddy_buf_puts(b, "...");
  eddy_buf_destroy(&v);
  if (eddy_ir_op_is(op, "df.enter") &&
      eddy_ir_op_attr_bool(op, "is_constant", false))
    eddy_buf_puts(b, " (constant)");
}

static void emit_node(dot_state_t *s, const eddy_op_t *op, int depth) {
  eddy_buf_t label;
  eddy_buf_init(&label);
  op_label(op, &label);
  const char *n = op->name->str;
  size_t ml = strlen(EDDY_PARTITION_MACHINE_LOC);
  bool machine = op->loc && op->loc->line == 0 && op->loc->file &&
                 strncmp(op->loc->file->str, EDDY_PARTITION_MACHINE_LOC,
                         ml) == 0;
  bool comm = eddy_ir_op_is(op, "df.send") || eddy_ir_op_is(op, "df.recv");
  const char *style =
      comm ? "shape=box, style=\"rounded,filled\", fillcolor=mistyrose, "
             "color=red"
      : machine ? "shape=box, style=\"rounded,filled\", fillcolor=pink"
      : strncmp(n, "df.", 3) == 0
          ? "shape=box, style=\"rounded,filled\", fillcolor=lightyellow"
          : "shape=box";
  indent(s, depth);
  eddy_buf_printf(s->out, "n%zu [label=\"%s\", %s];\n", node_id(s, op),
                  label.data, style);
  eddy_buf_destroy(&label);
}

static void emit_edges(dot_state_t *s, const eddy_op_t *op) {
  for (uint32_t i = 0; i < op->num_operands; i++) {
    const eddy_value_t *v = op->operands[i].value;
    const void *src = v->def ? (const void *)v->def : (const void *)v;
    if (!eddy_ptrmap_has(&s->ids, src))
      continue; // a function argument drawn nowhere, or outside
    bool back = eddy_ir_op_is(op, "df.merge") && v->def &&
                eddy_ir_op_is(v->def, "df.next_iteration");
    bool dead = eddy_ptrmap_has(&s->may_dead, v);
    eddy_buf_printf(s->out, "  n%zu -> n%zu [", node_id(s, src),
                    node_id(s, op));
    if (v->def && v->def->num_results > 1)
      eddy_buf_printf(s->out, "taillabel=\"%u\", ", v->index);
    eddy_buf_printf(s->out, "style=%s];\n",
                    back ? "bold, color=blue, constraint=false"
                         : dead ? "dashed, color=gray40"
                                : "solid");
  }
}

/// ---- Structured form -------------------------------------------------------------

static void emit_block(dot_state_t *s, const eddy_block_t *b, int depth);

static void emit_region_op(dot_state_t *s, const eddy_op_t *op, int depth) {
  static const char *const while_names[] = {"cond", "body"};
  static const char *const if_names[] = {"then", "else"};
  bool is_while = eddy_ir_op_is(op, "ctl.while");
  indent(s, depth);
  eddy_buf_printf(s->out, "subgraph cluster_%d {\n", s->cluster++);
  indent(s, depth + 1);
  eddy_buf_printf(s->out, "label=\"%s\"; style=rounded;\n", op->name->str);
  emit_node(s, op, depth + 1);
  for (uint32_t r = 0; r < op->num_regions; r++) {
    indent(s, depth + 1);
    eddy_buf_printf(s->out, "subgraph cluster_%d {\n", s->cluster++);
    indent(s, depth + 2);
    eddy_buf_printf(s->out, "label=\"%s\"; style=dashed;\n",
                    r < 2 ? (is_while ? while_names[r] : if_names[r]) : "region");
    for (const eddy_block_t *b = op->regions[r].first; b; b = b->next)
      emit_block(s, b, depth + 2);
    indent(s, depth + 1);
    eddy_buf_puts(s->out, "}\n");
  }
  indent(s, depth);
  eddy_buf_puts(s->out, "}\n");
}

static void emit_block(dot_state_t *s, const eddy_block_t *b, int depth) {
  for (uint32_t i = 0; i < b->num_args; i++) {
    indent(s, depth);
    eddy_buf_printf(s->out, "n%zu [label=\"arg %u\", shape=ellipse];\n",
                    node_id(s, b->args[i]), i);
  }
  for (const eddy_op_t *op = b->first; op; op = op->next) {
    if (op->num_regions > 0)
      emit_region_op(s, op, depth);
    else
      emit_node(s, op, depth);
  }
}

static eddy_walk_result_t edges_of(eddy_op_t *op, void *user) {
  if (!eddy_ir_op_is(op, "func.func"))
    emit_edges(user, op);
  return EDDY_WALK_ADVANCE;
}

/// ---- Dataflow form ----------------------------------------------------------------

/// Values that may be dead: switch outputs and whatever they reach, except
/// through a merge with an input that is never dead.
static void mark_may_dead(dot_state_t *s, const eddy_block_t *b) {
  bool changed = true;
  while (changed) {
    changed = false;
    for (const eddy_op_t *op = b->first; op; op = op->next) {
      bool dead;
      if (eddy_ir_op_is(op, "df.switch") || eddy_ir_op_is(op, "df.switch_n")) {
        dead = true;
      } else if (eddy_ir_op_is(op, "df.merge")) {
        dead = true;
        for (uint32_t i = 0; i < op->num_operands; i++)
          dead = dead && eddy_ptrmap_has(&s->may_dead, op->operands[i].value);
      } else {
        dead = false;
        for (uint32_t i = 0; i < op->num_operands; i++)
          dead = dead || eddy_ptrmap_has(&s->may_dead, op->operands[i].value);
      }
      for (uint32_t r = 0; r < op->num_results && dead; r++) {
        if (!eddy_ptrmap_has(&s->may_dead, &op->results[r])) {
          eddy_ptrmap_put(&s->may_dead, &op->results[r], (void *)1);
          changed = true;
        }
      }
    }
  }
}

typedef struct dot_frame {
  const char *name;
  int parent; ///< -1: root
} dot_frame_t;

/// Assigns each op its loop frame (the df.enter frame_name it is inside):
/// values carry their frame forward, df.enter moves into the named frame,
/// df.exit back to the parent.
static eddy_status_t emit_dataflow(dot_state_t *s, const eddy_block_t *b) {
  size_t nops = 0;
  for (const eddy_op_t *op = b->first; op; op = op->next)
    nops++;
  dot_frame_t *frames = calloc(nops + 1, sizeof(*frames));
  int *op_frame = calloc(nops + 1, sizeof(*op_frame));
  eddy_ptrmap_t vframe; // value -> frame + 2 (1: root)
  eddy_ptrmap_init(&vframe);
  if (!frames || !op_frame) {
    free(frames);
    free(op_frame);
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  int nframes = 0;
  size_t k = 0;
  for (const eddy_op_t *op = b->first; op; op = op->next, k++) {
    int f = -1;
    for (uint32_t i = 0; i < op->num_operands; i++) {
      uintptr_t vf = (uintptr_t)eddy_ptrmap_get(&vframe, op->operands[i].value);
      if (vf) {
        f = (int)vf - 2;
        break;
      }
    }
    op_frame[k] = f;
    int out = f;
    if (eddy_ir_op_is(op, "df.enter")) {
      const eddy_attr_t *a = eddy_ir_op_attr(op, "frame_name");
      const char *name = a && a->kind == EDDY_ATTR_STRING ? a->u.str.data : "?";
      int found = -1;
      for (int j = 0; j < nframes && found < 0; j++)
        if (strcmp(frames[j].name, name) == 0)
          found = j;
      if (found < 0) {
        found = nframes++;
        frames[found] = (dot_frame_t){name, f};
      }
      out = found;
    } else if (eddy_ir_op_is(op, "df.exit") && f >= 0) {
      out = frames[f].parent;
      op_frame[k] = f;
    }
    // Values of ops with no operands (constants) belong to no frame.
    for (uint32_t r = 0; r < op->num_results && op->num_operands > 0; r++)
      eddy_ptrmap_put(&vframe, &op->results[r], (void *)(uintptr_t)(out + 2));
  }
  // Draw each of those next to its first user.
  k = 0;
  for (const eddy_op_t *op = b->first; op; op = op->next, k++) {
    if (op->num_operands > 0 || op->num_results == 0 || !op->results[0].uses)
      continue;
    const eddy_op_t *user = op->results[0].uses->owner;
    size_t j = 0;
    for (const eddy_op_t *o = b->first; o && o != user; o = o->next)
      j++;
    if (j < nops)
      op_frame[k] = op_frame[j];
  }
  // Clusters: frame j holds its ops and the clusters of its child frames,
  // emitted depth first from the root (-1).
  int *stack = calloc((size_t)nframes + 2, sizeof(*stack));
  int *child_done = calloc((size_t)nframes + 1, sizeof(*child_done));
  if (!stack || !child_done) {
    free(stack);
    free(child_done);
    free(frames);
    free(op_frame);
    eddy_ptrmap_destroy(&vframe);
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  }
  for (uint32_t i = 0; i < b->num_args; i++)
    eddy_buf_printf(s->out, "  n%zu [label=\"arg %u\", shape=ellipse];\n",
                    node_id(s, b->args[i]), i);
  // Iterative depth-first emission of the frame tree.
  int sp = 0;
  stack[sp++] = -1;
  bool first_visit = true;
  while (sp > 0) {
    int f = stack[sp - 1];
    int depth = sp;
    if (first_visit) {
      if (f >= 0) {
        indent(s, depth - 1);
        eddy_buf_printf(s->out,
                        "subgraph cluster_%d {\n", s->cluster++);
        indent(s, depth);
        eddy_buf_printf(s->out,
                        "label=\"frame %s\"; style=\"rounded,filled\"; "
                        "fillcolor=\"#eef4ff\";\n",
                        frames[f].name);
      }
      k = 0;
      for (const eddy_op_t *op = b->first; op; op = op->next, k++)
        if (op_frame[k] == f)
          emit_node(s, op, depth);
    }
    // Next unvisited child frame of f.
    int next = -1;
    int start = f >= 0 ? child_done[f] : child_done[nframes];
    for (int j = start; j < nframes; j++) {
      if (frames[j].parent == f) {
        next = j;
        if (f >= 0)
          child_done[f] = j + 1;
        else
          child_done[nframes] = j + 1;
        break;
      }
    }
    if (next >= 0) {
      stack[sp++] = next;
      first_visit = true;
      continue;
    }
    if (f >= 0) {
      indent(s, depth - 1);
      eddy_buf_puts(s->out, "}\n");
    }
    sp--;
    first_visit = false;
  }
  free(stack);
  free(child_done);
  free(frames);
  free(op_frame);
  eddy_ptrmap_destroy(&vframe);
  return NULL;
}

/// ---- Partitioned form ------------------------------------------------------------

/// One cluster per rank holding its dataflow drawing, then the edges of
/// every rank, then each send joined to the recv of the same key.
static eddy_status_t emit_partitions(dot_state_t *s, eddy_op_t **parts,
                                     int32_t n) {
  for (int32_t r = 0; r < n; r++) {
    eddy_buf_printf(s->out,
                    "  subgraph cluster_%d {\n    label=\"rank %d\"; "
                    "style=bold;\n",
                    s->cluster++, (int)r);
    eddy_block_t *b = eddy_ir_func_entry(parts[r]);
    mark_may_dead(s, b);
    EDDY_RETURN_IF_ERROR(emit_dataflow(s, b));
    eddy_buf_puts(s->out, "  }\n");
  }
  for (int32_t r = 0; r < n; r++)
    eddy_ir_walk_pre(parts[r], edges_of, s);
  for (int32_t r = 0; r < n; r++)
    for (const eddy_op_t *snd = eddy_ir_func_entry(parts[r])->first; snd;
         snd = snd->next) {
      const eddy_attr_t *k = eddy_ir_op_is(snd, "df.send")
                                 ? eddy_ir_op_attr(snd, "key")
                                 : NULL;
      for (int32_t q = 0; k && q < n; q++)
        for (const eddy_op_t *rcv = eddy_ir_func_entry(parts[q])->first; rcv;
             rcv = rcv->next)
          if (eddy_ir_op_is(rcv, "df.recv") &&
              eddy_ir_op_attr(rcv, "key") == k)
            eddy_buf_printf(s->out,
                            "  n%zu -> n%zu [style=dotted, color=red, "
                            "constraint=false];\n",
                            node_id(s, snd), node_id(s, rcv));
    }
  return NULL;
}

/// ---- Driver -------------------------------------------------------------------------

static eddy_status_t run_dot(eddy_ctx_t *ctx, const dot_args_t *a,
                             eddy_buf_t *out) {
  eddy_cli_register_all(ctx);
  eddy_module_t *m = NULL;
  EDDY_RETURN_IF_ERROR(eddy_ir_parse_file(ctx, a->input, &m));
  eddy_status_t st = eddy_ir_verify_module(m);
  eddy_op_t *func = NULL;
  if (!st && a->entry) {
    func = eddy_ir_module_lookup_func(m, a->entry);
    if (!func)
      st = eddy_status_create(EDDY_ERR_NOT_FOUND,
                              "no function @%s in the module", a->entry);
  } else if (!st) {
    for (eddy_op_t *op = eddy_ir_module_body(m)->first; op; op = op->next) {
      if (!eddy_ir_op_is(op, "func.func"))
        continue;
      if (func) {
        st = eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                                "the module has several functions; choose "
                                "one with --entry");
        break;
      }
      func = op;
    }
    if (!st && !func)
      st = eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "the module has no function");
  }
  eddy_op_t **parts = NULL;
  if (!st && a->ranks) {
    parts = calloc((size_t)a->ranks, sizeof *parts);
    st = parts ? eddy_cli_dist_partition(m, func, NULL, a->placement,
                                         a->ranks, parts, NULL)
               : eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  } else if (!st && a->dataflow) {
    st = eddy_lower_to_dataflow_func(func);
    if (!st)
      st = eddy_ir_verify_op(func);
  }
  if (!st) {
    dot_state_t s;
    memset(&s, 0, sizeof(s));
    s.out = out;
    eddy_ptrmap_init(&s.ids);
    eddy_ptrmap_init(&s.may_dead);
    eddy_block_t *b = eddy_ir_func_entry(func);
    eddy_buf_printf(out,
                    "digraph \"%s%s\" {\n"
                    "  rankdir=TB;\n"
                    "  node [fontname=\"monospace\", fontsize=10];\n",
                    eddy_ir_func_name(func),
                    a->ranks ? " (partitioned)"
                    : a->dataflow ? " (dataflow)"
                                  : "");
    if (a->ranks) {
      st = emit_partitions(&s, parts, a->ranks);
    } else if (a->dataflow) {
      mark_may_dead(&s, b);
      st = emit_dataflow(&s, b);
    } else {
      emit_block(&s, b, 1);
    }
    if (!st) {
      if (!a->ranks)
        eddy_ir_walk_pre(func, edges_of, &s);
      eddy_buf_puts(out, "}\n");
    }
    eddy_ptrmap_destroy(&s.ids);
    eddy_ptrmap_destroy(&s.may_dead);
  }
  free(parts);
  eddy_ir_module_destroy(m);
  return st;
}

/// Adapts run_dot to eddy_cli_render_fn_t.
static eddy_status_t render(eddy_ctx_t *ctx, const void *args,
                            eddy_buf_t *out) {
  return run_dot(ctx, (const dot_args_t *)args, out);
}

int eddy_cli_dot_main(int argc, char **argv) {
  dot_args_t a;
  int rc = parse_args(argc, argv, &a);
  if (rc >= 0)
    return rc;
  if (a.help)
    return print_help();
  return eddy_cli_render_and_write(a.out, render, &a);
}
