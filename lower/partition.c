/// The placement of a df function's ops over ranks and the partition pass
/// (lower/partition.h). The rules, after the "Implementation of Control Flow
/// in TensorFlow" note's "distributed conditional" and "distributed while
/// loop" sections:
///
/// - Every value used on another rank than the one computing it is sent
///   there (df.send after its producer, df.recv before its first consumer).
///   A send runs for dead values too, so an untaken branch on another rank
///   is known dead there; a recv is a source that may run early.
/// - A recv inside a loop frame needs the frame and iteration it runs in:
///   every rank that holds ops of a loop frame gets a control-loop state
///   machine for it (an enter of a scalar, a merge, a switch on the loop
///   predicate, a next_iteration), and its recvs hang off the machine's
///   merge by a control edge. The predicate's rank sends it to every other
///   rank of the loop. A nested loop's machine enters from its parent's
///   machine; a rank with only outer-loop ops gets no inner machine.
/// - Ops with no operands (constants) and df.enter ops are copied to each
///   rank that uses them, so that an enter's value never crosses ranks
///   (it is delivered to iteration 0 only, or to every iteration when
///   constant, which a per-iteration recv could not match); their inputs
///   cross instead, in the parent frame. So is such a value released by a
///   token in each iteration (df.after(v, token)): the token crosses, not
///   the value.
/// - A df.next_iteration stays with its df.merge: the back edge never
///   crosses ranks.
/// - A loop held by one rank only gets no machine (nothing of it crosses).
#define _POSIX_C_SOURCE 200809L
#include "lower/partition.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static eddy_status_t oom(void) {
  return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
}

/// ---- Placements ---------------------------------------------------------------------

void eddy_placement_init(eddy_placement_t *p, int32_t num_ranks) {
  p->num_ranks = num_ranks;
  eddy_ptrmap_init(&p->rank);
  eddy_ptrmap_init(&p->given);
}

void eddy_placement_destroy(eddy_placement_t *p) {
  eddy_ptrmap_destroy(&p->rank);
  eddy_ptrmap_destroy(&p->given);
}

void eddy_placement_set(eddy_placement_t *p, const eddy_op_t *op,
                        int32_t rank, bool given) {
  eddy_ptrmap_put(&p->rank, op, (void *)(uintptr_t)(rank + 1));
  if (given)
    eddy_ptrmap_put(&p->given, op, (void *)(uintptr_t)1);
}

int32_t eddy_placement_get(const eddy_placement_t *p, const eddy_op_t *op) {
  return (int32_t)(uintptr_t)eddy_ptrmap_get(&p->rank, op) - 1;
}

static bool placement_given(const eddy_placement_t *p, const eddy_op_t *op) {
  return eddy_ptrmap_has(&p->given, op);
}

void eddy_placement_rules_free(eddy_placement_rule_t *rules, size_t n) {
  for (size_t i = 0; i < n && rules; i++)
    free(rules[i].pattern);
  free(rules);
}

eddy_status_t eddy_placement_rules_read(const char *path,
                                        eddy_placement_rule_t **out_rules,
                                        size_t *out_n) {
  *out_rules = NULL;
  *out_n = 0;
  FILE *f = fopen(path, "r");
  if (!f)
    return eddy_status_create(EDDY_ERR_NOT_FOUND, "--placement %s: %s", path,
                              strerror(errno));
  eddy_placement_rule_t *rules = NULL;
  size_t n = 0, cap = 0;
  char line[4096];
  eddy_status_t st = NULL;
  for (int lineno = 1; !st && fgets(line, sizeof line, f); lineno++) {
    char *hash = strchr(line, '#');
    if (hash)
      *hash = 0;
    char pat[4096], extra[8];
    long long rank = 0;
    int k = sscanf(line, "%4095s %lld %7s", pat, &rank, extra);
    if (k <= 0)
      continue; // blank or comment
    if (k != 2 || rank < 0 || rank >= EDDY_PARTITION_MAX_RANKS) {
      st = eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "%s:%d: expected 'PATTERN RANK' with a rank in "
                              "[0, %d)",
                              path, lineno, EDDY_PARTITION_MAX_RANKS);
      break;
    }
    if (n == cap) {
      size_t nc = cap ? cap * 2 : 8;
      eddy_placement_rule_t *nr = realloc(rules, nc * sizeof(*nr));
      if (!nr) {
        st = oom();
        break;
      }
      rules = nr;
      cap = nc;
    }
    rules[n].pattern = strdup(pat);
    rules[n].rank = (int32_t)rank;
    if (!rules[n++].pattern)
      st = oom();
  }
  fclose(f);
  if (st) {
    eddy_placement_rules_free(rules, n);
    return st;
  }
  *out_rules = rules;
  *out_n = n;
  return NULL;
}

int32_t eddy_placement_device_rank(const char *device) {
  const char *t = device ? strstr(device, "/task:") : NULL;
  if (!t || !isdigit((unsigned char)t[6]))
    return -1;
  long v = strtol(t + 6, NULL, 10);
  return v < 0 || v >= EDDY_PARTITION_MAX_RANKS ? -1 : (int32_t)v;
}

/// Glob match with `*` only.
static bool glob_match(const char *pat, const char *s) {
  if (!*pat)
    return !*s;
  if (*pat == '*') {
    for (const char *t = s;; t++) {
      if (glob_match(pat + 1, t))
        return true;
      if (!*t)
        return false;
    }
  }
  return *s == *pat && glob_match(pat + 1, s + 1);
}

static const char *loc_name(const eddy_op_t *op) {
  return op->loc && op->loc->line == 0 && op->loc->file ? op->loc->file->str
                                                        : NULL;
}

/// ---- Frames ---------------------------------------------------------------------

/// The loop frames of a df body and the frame of every value, as the
/// interpreter finds them (runtime/interp/interp_graph.c).
#define PF_FREE (-2)

typedef struct pframe {
  const char *name;
  int32_t parent;
  int64_t parallel;
  const eddy_op_t *loop_cond;
} pframe_t;

typedef struct fa {
  const eddy_op_t **ops;
  size_t nops;
  eddy_op_t *ret;
  pframe_t *frames;
  int32_t nframes;
  eddy_ptrmap_t vframe;  ///< value -> frame + 3 (root -1 -> 2, free -> 1)
  eddy_ptrmap_t vid;     ///< value -> ordinal + 1
  eddy_ptrmap_t opidx;   ///< op -> index + 1
  int32_t *nframe;       ///< per op: the frame it runs in
} fa_t;

static int32_t vframe_get(const fa_t *a, const eddy_value_t *v) {
  uintptr_t x = (uintptr_t)eddy_ptrmap_get(&a->vframe, v);
  return x ? (int32_t)x - 3 : INT32_MIN;
}

static void fa_destroy(fa_t *a) {
  free(a->ops);
  free(a->frames);
  free(a->nframe);
  eddy_ptrmap_destroy(&a->vframe);
  eddy_ptrmap_destroy(&a->vid);
  eddy_ptrmap_destroy(&a->opidx);
}

static bool is_placeable(const eddy_op_t *op);

/// df.after(v, token) of a v that is copied (a constant, a df.enter, or
/// such a df.after): how to-dataflow releases a constant or a captured
/// value in each iteration of a loop body. Copied like v, so that only the
/// token crosses ranks, not the value (a weight matrix) every iteration.
static bool is_released_copy(const eddy_op_t *op) {
  const eddy_op_t *v = eddy_ir_op_is(op, "df.after") && op->num_operands == 2
                           ? op->operands[0].value->def
                           : NULL;
  return v && !is_placeable(v);
}

static bool is_placeable(const eddy_op_t *op) {
  return op->num_operands > 0 && !eddy_ir_op_is(op, "df.enter") &&
         !is_released_copy(op);
}

static eddy_status_t op_error(const eddy_op_t *op, const char *fmt,
                              const char *arg) {
  eddy_buf_t b;
  eddy_buf_init(&b);
  eddy_buf_printf(&b, "'%s' op at ", op->name->str);
  eddy_ir_loc_format(op->loc, &b);
  eddy_buf_puts(&b, ": ");
  eddy_buf_printf(&b, fmt, arg);
  eddy_status_t st =
      eddy_status_create(EDDY_ERR_INVALID_ARGUMENT, "%s", b.data);
  eddy_buf_destroy(&b);
  return st;
}

static eddy_status_t fa_build(const eddy_op_t *func, fa_t *a) {
  memset(a, 0, sizeof(*a));
  eddy_ptrmap_init(&a->vframe);
  eddy_ptrmap_init(&a->vid);
  eddy_ptrmap_init(&a->opidx);
  eddy_block_t *entry = eddy_ir_func_entry(func);
  a->ret = entry ? eddy_ir_block_terminator(entry) : NULL;
  if (!a->ret || !eddy_ir_op_is(a->ret, "func.return"))
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "@%s has no body ending in func.return",
                              eddy_ir_func_name(func));
  size_t n = 0;
  for (eddy_op_t *op = entry->first; op != a->ret; op = op->next)
    n++;
  a->ops = calloc(n + 1, sizeof(*a->ops));
  a->frames = calloc(n + 1, sizeof(*a->frames));
  a->nframe = calloc(n + 1, sizeof(*a->nframe));
  if (!a->ops || !a->frames || !a->nframe)
    return oom();
  uintptr_t vid = 0;
  for (uint32_t i = 0; i < entry->num_args; i++) {
    eddy_ptrmap_put(&a->vframe, entry->args[i], (void *)(uintptr_t)2);
    eddy_ptrmap_put(&a->vid, entry->args[i], (void *)++vid);
  }
  for (eddy_op_t *op = entry->first; op != a->ret; op = op->next) {
    if (op->num_regions > 0)
      return op_error(op, "%s", "structured control flow must be lowered to "
                                "dataflow before partitioning");
    eddy_ptrmap_put(&a->opidx, op, (void *)(uintptr_t)(a->nops + 1));
    for (uint32_t r = 0; r < op->num_results; r++)
      eddy_ptrmap_put(&a->vid, &op->results[r], (void *)++vid);
    a->ops[a->nops++] = op;
  }
  for (size_t i = 0; i < a->nops; i++) {
    const eddy_op_t *op = a->ops[i];
    int32_t fr = -1;
    for (uint32_t k = 0; k < op->num_operands; k++) {
      int32_t f = vframe_get(a, op->operands[k].value);
      if (f == INT32_MIN || f == PF_FREE)
        continue;
      fr = f;
      break;
    }
    a->nframe[i] = fr;
    int32_t out = fr;
    if (op->num_operands == 0) {
      out = PF_FREE;
    } else if (eddy_ir_op_is(op, "df.enter")) {
      const eddy_attr_t *at = eddy_ir_op_attr(op, "frame_name");
      const char *name = at && at->kind == EDDY_ATTR_STRING ? at->u.str.data
                                                            : "";
      int32_t f = 0;
      while (f < a->nframes && strcmp(a->frames[f].name, name) != 0)
        f++;
      if (f == a->nframes) {
        a->frames[f] = (pframe_t){name, fr,
                                  eddy_ir_op_attr_int(op,
                                                      "parallel_iterations",
                                                      10),
                                  NULL};
        a->nframes++;
      }
      out = f;
    } else if (eddy_ir_op_is(op, "df.exit")) {
      if (fr < 0)
        return op_error(op, "%s", "is not inside a loop frame");
      out = a->frames[fr].parent;
    } else if (eddy_ir_op_is(op, "df.loop_cond")) {
      if (fr < 0)
        return op_error(op, "%s", "is not inside a loop frame");
      if (a->frames[fr].loop_cond)
        return op_error(op, "is a second df.loop_cond of frame '%s'",
                        a->frames[fr].name);
      a->frames[fr].loop_cond = op;
    }
    for (uint32_t r = 0; r < op->num_results; r++)
      eddy_ptrmap_put(&a->vframe, &op->results[r],
                      (void *)(uintptr_t)(out + 3));
  }
  for (int32_t f = 0; f < a->nframes; f++)
    if (!a->frames[f].loop_cond)
      return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                                "loop frame '%s' has no df.loop_cond, so its "
                                "predicate cannot be sent to other ranks",
                                a->frames[f].name);
  return NULL;
}

static size_t op_index(const fa_t *a, const eddy_op_t *op) {
  return (size_t)(uintptr_t)eddy_ptrmap_get(&a->opidx, op) - 1;
}

/// ---- Computing a placement ----------------------------------------------------

/// The first rule or device matching the op's name; -1 when none. *given
/// tells whether one matched.
static int32_t match_rank(const eddy_op_t *op,
                          const eddy_placement_rule_t *rules, size_t nrules,
                          const eddy_placement_rule_t *devices, size_t ndev) {
  const char *name = loc_name(op);
  if (!name)
    return -1;
  for (size_t i = 0; i < nrules; i++)
    if (glob_match(rules[i].pattern, name))
      return rules[i].rank;
  size_t nl = strlen(name);
  for (size_t i = 0; i < ndev; i++) {
    const char *d = devices[i].pattern;
    size_t dl = strlen(d);
    if (strcmp(name, d) == 0 ||
        (nl > dl && name[nl - dl - 1] == '/' && strcmp(name + nl - dl, d) == 0))
      return devices[i].rank;
  }
  return -1;
}

/// The default rank of op at frame f: the innermost enclosing loop's first
/// placed op, else its first enter's input, else the op's first placed
/// operand's producer, else 0.
static int32_t default_rank(const fa_t *a, const int32_t *first_given,
                            const int32_t *first_enter, int32_t f,
                            const eddy_op_t *op, const eddy_placement_t *p) {
  for (int32_t g = f; g >= 0; g = a->frames[g].parent) {
    if (first_given[g] >= 0)
      return first_given[g];
    if (first_enter[g] >= 0)
      return first_enter[g];
  }
  for (uint32_t k = 0; k < op->num_operands; k++) {
    const eddy_op_t *d = op->operands[k].value->def;
    int32_t r = d ? eddy_placement_get(p, d) : -1;
    if (r >= 0)
      return r;
  }
  return 0;
}

eddy_status_t eddy_placement_compute(const eddy_op_t *func,
                                     const eddy_placement_rule_t *rules,
                                     size_t num_rules,
                                     const eddy_placement_rule_t *devices,
                                     size_t num_devices, int32_t num_ranks,
                                     eddy_placement_t *p) {
  for (size_t i = 0; i < num_rules; i++)
    if (rules[i].rank >= num_ranks)
      return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                                "--placement: '%s' goes to rank %d, but the "
                                "run has %d rank%s",
                                rules[i].pattern, rules[i].rank, num_ranks,
                                num_ranks == 1 ? "" : "s");
  fa_t a;
  eddy_status_t st = fa_build(func, &a);
  int32_t *first_given = a.nframes ? malloc(a.nframes * sizeof(int32_t))
                                   : NULL;
  int32_t *first_enter = a.nframes ? malloc(a.nframes * sizeof(int32_t))
                                   : NULL;
  if (!st && a.nframes && (!first_given || !first_enter))
    st = oom();
  for (int32_t f = 0; !st && f < a.nframes; f++)
    first_given[f] = first_enter[f] = -1;
  for (size_t i = 0; !st && i < a.nops; i++) {
    const eddy_op_t *op = a.ops[i];
    if (!is_placeable(op))
      continue;
    int32_t r = match_rank(op, rules, num_rules, devices, num_devices);
    if (r < 0)
      continue;
    if (r >= num_ranks) {
      st = op_error(op, "%s", "is placed by its device field on a task that "
                              "is not a rank of this run (see `mpirun -n`)");
      break;
    }
    eddy_placement_set(p, op, r, true);
    for (int32_t g = a.nframe[i]; g >= 0; g = a.frames[g].parent)
      if (first_given[g] < 0)
        first_given[g] = r;
  }
  for (size_t i = 0; !st && i < a.nops; i++) {
    const eddy_op_t *op = a.ops[i];
    if (eddy_ir_op_is(op, "df.enter")) {
      int32_t tgt = vframe_get(&a, &((eddy_op_t *)op)->results[0]);
      if (tgt >= 0 && first_enter[tgt] < 0)
        first_enter[tgt] = default_rank(&a, first_given, first_enter,
                                        a.nframe[i], op, p);
      continue;
    }
    if (!is_placeable(op) || eddy_placement_get(p, op) >= 0)
      continue;
    eddy_placement_set(p, op,
                       default_rank(&a, first_given, first_enter, a.nframe[i],
                                    op, p),
                       false);
  }
  free(first_given);
  free(first_enter);
  fa_destroy(&a);
  return st;
}

void eddy_placement_random(const eddy_op_t *func, uint64_t seed,
                           eddy_placement_t *p) {
  eddy_block_t *entry = eddy_ir_func_entry(func);
  if (!entry)
    return;
  uint64_t x = seed;
  for (eddy_op_t *op = entry->first; op; op = op->next) {
    if (!is_placeable(op) || eddy_ir_op_is(op, "func.return"))
      continue;
    uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    eddy_placement_set(p, op, (int32_t)(z % (uint64_t)p->num_ranks), false);
  }
}

/// ---- The partition pass -----------------------------------------------------------

typedef struct rpart {
  eddy_op_t *func;
  eddy_builder_t b;
  eddy_ptrmap_t map;    ///< original value -> this rank's value
  eddy_value_t *zero;   ///< the machines' scalar
  eddy_value_t **tok;   ///< per frame: the machine's control token
  eddy_op_t **merge;    ///< per frame: the machine's merge
  eddy_op_t **cloned;   ///< ops cloned here, for the back-edge fix-up
  size_t ncloned;
} rpart_t;

typedef struct part {
  eddy_ctx_t *ctx;
  fa_t a;
  int32_t n;         ///< ranks
  int32_t *rank;     ///< per op: its rank, -1 for copied ops
  uint8_t *need;     ///< [op * n + r]: a copied op is needed on r
  uint8_t *in_frame; ///< [frame * n + r]: r holds part of the frame
  rpart_t *rp;
  eddy_partition_info_t info;
} part_t;

static bool needed(const part_t *P, size_t i, int32_t r) {
  return P->rank[i] >= 0 ? P->rank[i] == r : P->need[i * P->n + r] != 0;
}

/// The rank computing v; -1 for arguments and values of copied ops.
static int32_t value_rank(const part_t *P, const eddy_value_t *v) {
  return v->def && v->def->block && v->def != P->a.ret
             ? P->rank[op_index(&P->a, v->def)]
             : -1;
}

static const eddy_loc_t *machine_loc(part_t *P, int32_t f) {
  char name[512];
  snprintf(name, sizeof name, "%s%s", EDDY_PARTITION_MACHINE_LOC,
           P->a.frames[f].name);
  return eddy_ir_loc_name(P->ctx, name);
}

static eddy_status_t build_op(rpart_t *R, const char *name,
                              eddy_value_t *const *operands, size_t n,
                              const eddy_named_attr_t *attrs, size_t na,
                              const eddy_type_t *result,
                              const eddy_loc_t *loc, eddy_op_t **out) {
  const eddy_type_t *rt[1] = {result};
  eddy_op_state_t s = {.name = name,
                       .operands = operands,
                       .num_operands = n,
                       .attrs = attrs,
                       .num_attrs = na,
                       .result_types = result ? rt : NULL,
                       .num_results = result ? 1 : 0,
                       .loc = loc};
  if (!result && strcmp(name, "df.send") == 0)
    s.result_types = rt; // no results, none inferred
  return eddy_ir_build(&R->b, &s, out);
}

/// The control token of rank r's machine for frame f, built on first use:
/// enter(0 in the parent machine's iteration) -> merge -> control.
static eddy_status_t machine_token(part_t *P, int32_t r, int32_t f,
                                   eddy_value_t **out) {
  rpart_t *R = &P->rp[r];
  if (R->tok[f]) {
    *out = R->tok[f];
    return NULL;
  }
  const eddy_loc_t *loc = machine_loc(P, f);
  if (!R->zero) {
    int32_t zero = 0;
    const eddy_type_t *t = eddy_ir_scalar_type_get(P->ctx, EDDY_DT_I32);
    const eddy_loc_t *saved = R->b.loc;
    R->b.loc = eddy_ir_loc_name(P->ctx, "machine scalar");
    eddy_status_t st = eddy_ir_build_constant(
        &R->b, eddy_ir_dense_splat_attr_get(P->ctx, t, &zero), &R->zero);
    R->b.loc = saved;
    EDDY_RETURN_IF_ERROR(st);
  }
  eddy_value_t *in = R->zero;
  eddy_op_t *op = NULL;
  if (P->a.frames[f].parent >= 0) {
    eddy_value_t *ptok = NULL;
    EDDY_RETURN_IF_ERROR(machine_token(P, r, P->a.frames[f].parent, &ptok));
    eddy_value_t *ops[2] = {R->zero, ptok};
    EDDY_RETURN_IF_ERROR(build_op(R, "df.after", ops, 2, NULL, 0,
                                  R->zero->type, loc, &op));
    in = &op->results[0];
  }
  const char *fname = P->a.frames[f].name;
  eddy_named_attr_t ea[3] = {
      eddy_ir_named_attr(P->ctx, "frame_name",
                         eddy_ir_string_attr_get(P->ctx, fname,
                                                 strlen(fname))),
      eddy_ir_named_attr(P->ctx, "is_constant",
                         eddy_ir_bool_attr_get(P->ctx, false)),
      eddy_ir_named_attr(P->ctx, "parallel_iterations",
                         eddy_ir_int_attr_get(P->ctx, P->a.frames[f].parallel,
                                              EDDY_DT_I64)),
  };
  EDDY_RETURN_IF_ERROR(
      build_op(R, "df.enter", &in, 1, ea, 3, in->type, loc, &op));
  eddy_value_t *enter = &op->results[0];
  eddy_value_t *mops[2] = {enter, enter}; // #1: the back edge, set later
  eddy_op_state_t ms = {.name = "df.merge",
                        .operands = mops,
                        .num_operands = 2,
                        .loc = loc};
  EDDY_RETURN_IF_ERROR(eddy_ir_build(&R->b, &ms, &R->merge[f]));
  eddy_value_t *m0 = &R->merge[f]->results[0];
  EDDY_RETURN_IF_ERROR(build_op(R, "df.control", &m0, 1, NULL, 0,
                                eddy_ir_token_type_get(P->ctx), loc, &op));
  R->tok[f] = &op->results[0];
  P->info.machines++;
  *out = R->tok[f];
  return NULL;
}

static int64_t edge_key(const part_t *P, const eddy_value_t *v, int32_t to) {
  int64_t vid = (int64_t)(uintptr_t)eddy_ptrmap_get(&P->a.vid, v) - 1;
  return vid * P->n + to;
}

/// v as rank r sees it: its own value, or a df.recv of it (in v's frame,
/// hanging off r's machine of that frame). NULL for a value r computes but
/// has not built yet (a back edge, fixed up at the end).
static eddy_status_t local_value(part_t *P, int32_t r, eddy_value_t *v,
                                 eddy_value_t **out) {
  rpart_t *R = &P->rp[r];
  *out = eddy_ptrmap_get(&R->map, v);
  int32_t from = value_rank(P, v);
  if (*out || from < 0 || from == r)
    return NULL;
  int32_t f = vframe_get(&P->a, v);
  eddy_value_t *tok = NULL;
  if (f >= 0)
    EDDY_RETURN_IF_ERROR(machine_token(P, r, f, &tok));
  eddy_named_attr_t ra[2] = {
      eddy_ir_named_attr(P->ctx, "key",
                         eddy_ir_int_attr_get(P->ctx, edge_key(P, v, r),
                                              EDDY_DT_I64)),
      eddy_ir_named_attr(P->ctx, "from",
                         eddy_ir_int_attr_get(P->ctx, from, EDDY_DT_I64)),
  };
  eddy_op_t *op = NULL;
  EDDY_RETURN_IF_ERROR(build_op(R, "df.recv", &tok, tok ? 1 : 0, ra, 2,
                                v->type, v->def->loc, &op));
  P->info.recvs++;
  *out = &op->results[0];
  eddy_ptrmap_put(&R->map, v, *out);
  return NULL;
}

/// Whether rank r reads v (v computed elsewhere): an op of r uses it, or r's
/// machine of the frame whose predicate v is.
static bool reads(const part_t *P, const eddy_value_t *v, int32_t r) {
  for (eddy_use_t *u = v->uses; u; u = u->next) {
    const eddy_op_t *user = u->owner;
    if (user == P->a.ret) {
      if (r == 0)
        return true;
      continue;
    }
    // (a rank's merge cloned before its back edge still uses the
    // original value for a while: not a use of the function)
    if (eddy_ptrmap_has(&P->a.opidx, user) &&
        needed(P, op_index(&P->a, user), r))
      return true;
  }
  if (v->def && eddy_ir_op_is(v->def, "df.loop_cond")) {
    int32_t f = P->a.nframe[op_index(&P->a, v->def)];
    return P->in_frame[(size_t)f * P->n + r] != 0;
  }
  return false;
}

static eddy_status_t emit_sends(part_t *P, int32_t r, eddy_op_t *orig) {
  rpart_t *R = &P->rp[r];
  bool pred = eddy_ir_op_is(orig, "df.loop_cond");
  for (uint32_t k = 0; k < orig->num_results; k++) {
    eddy_value_t *v = &orig->results[k];
    for (int32_t to = 0; to < P->n; to++) {
      if (to == r || !reads(P, v, to))
        continue;
      eddy_value_t *lv = eddy_ptrmap_get(&R->map, v);
      eddy_named_attr_t sa[2] = {
          eddy_ir_named_attr(P->ctx, "key",
                             eddy_ir_int_attr_get(P->ctx, edge_key(P, v, to),
                                                  EDDY_DT_I64)),
          eddy_ir_named_attr(P->ctx, "to",
                             eddy_ir_int_attr_get(P->ctx, to, EDDY_DT_I64)),
      };
      eddy_op_t *op = NULL;
      EDDY_RETURN_IF_ERROR(
          build_op(R, "df.send", &lv, 1, sa, 2, NULL, orig->loc, &op));
      P->info.sends++;
      P->info.predicate_sends += pred;
    }
  }
  return NULL;
}

static eddy_status_t clone_onto(part_t *P, int32_t r, const eddy_op_t *op) {
  rpart_t *R = &P->rp[r];
  for (uint32_t k = 0; k < op->num_operands; k++) {
    eddy_value_t *lv = NULL;
    EDDY_RETURN_IF_ERROR(local_value(P, r, op->operands[k].value, &lv));
  }
  eddy_op_t *c = eddy_ir_op_clone(op, &R->map);
  if (!c)
    return oom();
  if (R->b.before)
    eddy_ir_op_insert_before(c, R->b.before);
  else
    eddy_ir_op_append(c, R->b.block);
  R->cloned[R->ncloned++] = c;
  return NULL;
}

/// Ranks, copies and frame membership, with the back-edge constraint.
static eddy_status_t assign(part_t *P, const eddy_placement_t *pl) {
  fa_t *a = &P->a;
  for (size_t i = 0; i < a->nops; i++) {
    const eddy_op_t *op = a->ops[i];
    P->rank[i] = -1;
    if (!is_placeable(op))
      continue;
    int32_t r = eddy_placement_get(pl, op);
    if (r < 0)
      return op_error(op, "%s", "has no rank in the placement");
    if (r >= P->n) {
      char msg[96];
      snprintf(msg, sizeof msg, "rank %d, but the run has %d", r, P->n);
      return op_error(op, "is placed on a rank out of range: %s", msg);
    }
    P->rank[i] = r;
  }
  // A next_iteration goes with its merge.
  for (size_t i = 0; i < a->nops; i++) {
    const eddy_op_t *op = a->ops[i];
    if (!eddy_ir_op_is(op, "df.next_iteration"))
      continue;
    for (eddy_use_t *u = op->results[0].uses; u; u = u->next) {
      if (!eddy_ir_op_is(u->owner, "df.merge"))
        continue;
      size_t m = op_index(a, u->owner);
      if (P->rank[m] != P->rank[i] && placement_given(pl, op) &&
          placement_given(pl, u->owner)) {
        eddy_buf_t b;
        eddy_buf_init(&b);
        eddy_ir_loc_format(u->owner->loc, &b);
        eddy_status_t st = op_error(
            op, "is placed apart from the df.merge it feeds (at %s): a "
                "loop's back edge cannot cross ranks; place them together",
            b.data);
        eddy_buf_destroy(&b);
        return st;
      }
      P->rank[i] = P->rank[m];
    }
  }
  // Copies: needed where something needed uses them (uses come later).
  for (size_t i = a->nops; i-- > 0;) {
    const eddy_op_t *op = a->ops[i];
    for (int32_t r = 0; r < P->n; r++) {
      if (!needed(P, i, r))
        continue;
      for (uint32_t k = 0; k < op->num_operands; k++) {
        const eddy_op_t *d = op->operands[k].value->def;
        if (d && !is_placeable(d))
          P->need[op_index(a, d) * P->n + r] = 1;
      }
    }
  }
  for (uint32_t k = 0; k < a->ret->num_operands; k++) {
    const eddy_op_t *d = a->ret->operands[k].value->def;
    if (d && !is_placeable(d))
      P->need[op_index(a, d) * P->n] = 1;
  }
  for (size_t i = 0; i < a->nops; i++) {
    const eddy_op_t *op = a->ops[i];
    int32_t f = eddy_ir_op_is(op, "df.enter")
                    ? vframe_get(a, &((eddy_op_t *)op)->results[0])
                    : a->nframe[i];
    if (op->num_operands == 0)
      continue;
    for (int32_t r = 0; r < P->n; r++)
      if (needed(P, i, r))
        for (int32_t g = f; g >= 0; g = a->frames[g].parent)
          P->in_frame[(size_t)g * P->n + r] = 1;
  }
  return NULL;
}

static eddy_status_t build_parts(part_t *P, eddy_module_t *m,
                                 const eddy_op_t *func,
                                 eddy_op_t **out_funcs) {
  fa_t *a = &P->a;
  const eddy_type_t *fty = eddy_ir_func_type(func);
  eddy_block_t *entry = eddy_ir_func_entry(func);
  for (int32_t r = 0; r < P->n; r++) {
    rpart_t *R = &P->rp[r];
    char name[512];
    snprintf(name, sizeof name, "%s.rank%d", eddy_ir_func_name(func), r);
    EDDY_RETURN_IF_ERROR(eddy_ir_func_create(
        m, name, fty->inputs, fty->num_inputs, fty->outputs,
        r == 0 ? fty->num_outputs : 0, func->loc, &R->func));
    out_funcs[r] = R->func;
    const char *names[] = {"arg_names", "result_names"};
    for (int k = 0; k < (r == 0 ? 2 : 1); k++) {
      const eddy_attr_t *at = eddy_ir_op_attr(func, names[k]);
      if (at)
        eddy_ir_op_set_attr(R->func, names[k], at);
    }
    eddy_ir_builder_init(&R->b, P->ctx);
    eddy_block_t *body = eddy_ir_func_entry(R->func);
    eddy_ir_builder_set_end(&R->b, body);
    for (uint32_t i = 0; i < entry->num_args; i++)
      eddy_ptrmap_put(&R->map, entry->args[i], body->args[i]);
  }
  for (size_t i = 0; i < a->nops; i++) {
    const eddy_op_t *op = a->ops[i];
    for (int32_t r = 0; r < P->n; r++) {
      if (!needed(P, i, r))
        continue;
      EDDY_RETURN_IF_ERROR(clone_onto(P, r, op));
      if (P->rank[i] == r)
        EDDY_RETURN_IF_ERROR(emit_sends(P, r, (eddy_op_t *)op));
    }
  }
  for (int32_t r = 0; r < P->n; r++) {
    rpart_t *R = &P->rp[r];
    // Every rank holding part of a loop runs its iterations: a machine even
    // where no recv hangs off it (parents first: frames are numbered in
    // the order their first enter comes).
    // A loop wholly on one rank needs none: nothing crosses into it.
    for (int32_t f = 0; f < a->nframes; f++) {
      int32_t holders = 0;
      for (int32_t k = 0; k < P->n; k++)
        holders += P->in_frame[(size_t)f * P->n + k];
      eddy_value_t *tok = NULL;
      if (holders > 1 && P->in_frame[(size_t)f * P->n + r])
        EDDY_RETURN_IF_ERROR(machine_token(P, r, f, &tok));
    }
    // The machines' tails: switch on the predicate, next_iteration.
    for (int32_t f = 0; f < a->nframes; f++) {
      if (!R->merge[f])
        continue;
      eddy_value_t *pred = NULL;
      EDDY_RETURN_IF_ERROR(local_value(
          P, r, &((eddy_op_t *)a->frames[f].loop_cond)->results[0], &pred));
      if (!pred)
        return eddy_status_create(EDDY_ERR_INTERNAL,
                                  "partition: no predicate for frame '%s'",
                                  a->frames[f].name);
      const eddy_loc_t *loc = machine_loc(P, f);
      eddy_value_t *sops[2] = {&R->merge[f]->results[0], pred};
      eddy_op_t *sw = NULL, *ni = NULL;
      eddy_op_state_t ss = {.name = "df.switch",
                            .operands = sops,
                            .num_operands = 2,
                            .loc = loc};
      EDDY_RETURN_IF_ERROR(eddy_ir_build(&R->b, &ss, &sw));
      eddy_value_t *t = &sw->results[1];
      EDDY_RETURN_IF_ERROR(build_op(R, "df.next_iteration", &t, 1, NULL, 0,
                                    t->type, loc, &ni));
      eddy_ir_op_set_operand(R->merge[f], 1, &ni->results[0]);
    }
    // Back edges: merge operands cloned before their next_iteration.
    for (size_t c = 0; c < R->ncloned; c++) {
      eddy_op_t *op = R->cloned[c];
      for (uint32_t k = 0; k < op->num_operands; k++) {
        eddy_value_t *v = op->operands[k].value;
        if (eddy_ir_value_block(v) == eddy_ir_func_entry(R->func))
          continue;
        eddy_value_t *lv = eddy_ptrmap_get(&R->map, v);
        if (!lv)
          return op_error(op, "%s", "partition: an operand has no value on "
                                    "its rank");
        eddy_ir_op_set_operand(op, k, lv);
      }
    }
    size_t nret = r == 0 ? a->ret->num_operands : 0;
    eddy_value_t **rv = calloc(nret + 1, sizeof(*rv));
    if (!rv)
      return oom();
    eddy_status_t st = NULL;
    for (size_t k = 0; k < nret && !st; k++)
      st = local_value(P, 0, a->ret->operands[k].value, &rv[k]);
    eddy_op_t *ret = NULL;
    eddy_op_state_t rs = {.name = "func.return",
                          .operands = rv,
                          .num_operands = nret,
                          .result_types = (const eddy_type_t *const *)rv,
                          .num_results = 0,
                          .loc = a->ret->loc};
    if (!st)
      st = eddy_ir_build(&R->b, &rs, &ret);
    free(rv);
    EDDY_RETURN_IF_ERROR(st);
  }
  return NULL;
}

eddy_status_t eddy_partition_func(eddy_module_t *m, const eddy_op_t *func,
                                  const eddy_placement_t *p,
                                  eddy_op_t **out_funcs,
                                  eddy_partition_info_t *info) {
  if (info)
    memset(info, 0, sizeof(*info));
  if (p->num_ranks < 1 || p->num_ranks > EDDY_PARTITION_MAX_RANKS)
    return eddy_status_create(EDDY_ERR_INVALID_ARGUMENT,
                              "a partition needs 1 to %d ranks, got %d",
                              EDDY_PARTITION_MAX_RANKS, p->num_ranks);
  part_t P;
  memset(&P, 0, sizeof(P));
  P.ctx = m->ctx;
  P.n = p->num_ranks;
  eddy_status_t st = fa_build(func, &P.a);
  size_t nops = P.a.nops + 1, nfr = (size_t)P.a.nframes + 1;
  if (!st) {
    P.rank = calloc(nops, sizeof(*P.rank));
    P.need = calloc(nops * (size_t)P.n, 1);
    P.in_frame = calloc(nfr * (size_t)P.n, 1);
    P.rp = calloc((size_t)P.n, sizeof(*P.rp));
    if (!P.rank || !P.need || !P.in_frame || !P.rp)
      st = oom();
  }
  for (int32_t r = 0; !st && r < P.n; r++) {
    rpart_t *R = &P.rp[r];
    eddy_ptrmap_init(&R->map);
    R->tok = calloc(nfr, sizeof(*R->tok));
    R->merge = calloc(nfr, sizeof(*R->merge));
    R->cloned = calloc(nops, sizeof(*R->cloned));
    if (!R->tok || !R->merge || !R->cloned)
      st = oom();
  }
  if (!st)
    st = assign(&P, p);
  if (!st)
    st = build_parts(&P, m, func, out_funcs);
  if (!st && info)
    *info = P.info;
  for (int32_t r = 0; P.rp && r < P.n; r++) {
    eddy_ptrmap_destroy(&P.rp[r].map);
    free(P.rp[r].tok);
    free(P.rp[r].merge);
    free(P.rp[r].cloned);
  }
  free(P.rp);
  free(P.rank);
  free(P.need);
  free(P.in_frame);
  fa_destroy(&P.a);
  return st;
}
