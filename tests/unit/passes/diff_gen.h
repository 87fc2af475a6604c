/// The random program generator of test_pass_differential.c: builds
/// random well-typed functions through the builder API (see that file).
/// Everything is static: this header is included by that one test only.
#ifndef EDDY_TESTS_UNIT_PASSES_DIFF_GEN_H
#define EDDY_TESTS_UNIT_PASSES_DIFF_GEN_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ir/ir.h"

/// ---- Random numbers ---------------------------------------------------------

typedef struct rng {
  uint64_t s;
} rng_t;

static uint64_t rng_next(rng_t *r) {
  // splitmix64: tiny, deterministic everywhere.
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Uniform in [0, n).
static int rng_below(rng_t *r, int n) {
  return (int)(rng_next(r) % (uint64_t)n);
}

static bool rng_chance(rng_t *r, int percent) {
  return rng_below(r, 100) < percent;
}

/// ---- Generator state --------------------------------------------------------

enum { MAX_RANK = 3, MAX_POOL = 4096 };

/// A static tensor type being asked for.
typedef struct ty {
  eddy_dtype_t dt;
  int32_t rank;
  int64_t dims[MAX_RANK];
} ty_t;

typedef struct gen {
  rng_t rng;
  eddy_ctx_t *ctx;
  eddy_builder_t b;
  /// Values visible at the insertion point; regions push and pop.
  eddy_value_t *pool[MAX_POOL];
  size_t len;
  int region_depth;
  int loop_depth;
  int budget; ///< ops still allowed in this program
  /// Percent of leaves that reuse a visible value (the rest are new
  /// constants): low values give constant-heavy programs for the folders.
  int reuse;
  int rare; ///< percent of f16/bf16/i8/i64 among dtypes (EDDY_DIFF_RARE)
} gen_t;

static const eddy_type_t *ty_get(gen_t *g, const ty_t *t) {
  return eddy_ir_tensor_type_get(g->ctx, t->dt, t->rank, t->dims);
}

static int64_t ty_count(const ty_t *t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->rank; i++)
    n *= t->dims[i];
  return n;
}

static bool ty_is_float(const ty_t *t) { return eddy_dtype_is_float(t->dt); }

static void pool_push(gen_t *g, eddy_value_t *v) {
  if (g->len < MAX_POOL)
    g->pool[g->len++] = v;
}

static eddy_dtype_t random_dtype(gen_t *g) {
  static const eddy_dtype_t dts[] = {EDDY_DT_F32, EDDY_DT_F32, EDDY_DT_F64,
                                     EDDY_DT_I32, EDDY_DT_I32, EDDY_DT_I1};
  static const eddy_dtype_t rare[] = {EDDY_DT_F16, EDDY_DT_BF16, EDDY_DT_I8,
                                      EDDY_DT_I64};
  if (rng_chance(&g->rng, g->rare))
    return rare[rng_below(&g->rng, 4)];
  return dts[rng_below(&g->rng, 6)];
}

static ty_t random_type(gen_t *g) {
  ty_t t = {.dt = random_dtype(g), .rank = rng_below(&g->rng, 3)};
  for (int32_t i = 0; i < t.rank; i++) // empty dims now and then
    t.dims[i] = rng_chance(&g->rng, 4) ? 0 : 1 + rng_below(&g->rng, 3);
  return t;
}

static void check_ok(eddy_status_t st, const char *what) {
  if (st) {
    fprintf(stderr, "generator: %s: %s\n", what, eddy_status_message(st));
    eddy_status_destroy(st);
    fail_msg("generator built an invalid op (%s)", what);
  }
}

/// Builds a one-result op with inferred types and checks the result is `want`.
static eddy_value_t *build(gen_t *g, const char *name, eddy_value_t **ops,
                           size_t n, const eddy_named_attr_t *attrs,
                           size_t num_attrs, const ty_t *want) {
  eddy_value_t *v = NULL;
  check_ok(eddy_ir_build_simple(&g->b, name, ops, n, attrs, num_attrs, &v),
           name);
  if (want && v->type != ty_get(g, want)) {
    eddy_buf_t b;
    eddy_buf_init(&b);
    eddy_ir_type_print(v->type, &b);
    eddy_buf_puts(&b, ", wanted ");
    eddy_ir_type_print(ty_get(g, want), &b);
    for (size_t i = 0; i < n; i++) {
      eddy_buf_puts(&b, i ? ", " : "; operands ");
      eddy_ir_type_print(ops[i]->type, &b);
    }
    fail_msg("generator: %s gave %s", name, b.data);
  }
  g->budget--;
  pool_push(g, v);
  return v;
}

static eddy_named_attr_t nattr(gen_t *g, const char *name,
                               const eddy_attr_t *a) {
  return eddy_ir_named_attr(g->ctx, name, a);
}

static eddy_named_attr_t nints(gen_t *g, const char *name, const int64_t *v,
                               size_t n) {
  return nattr(g, name, eddy_ir_i64_array_attr_get(g->ctx, v, n));
}

static eddy_named_attr_t nint(gen_t *g, const char *name, int64_t v) {
  return nattr(g, name, eddy_ir_int_attr_get(g->ctx, v, EDDY_DT_I64));
}

/// ---- Constants and inputs ---------------------------------------------------

static double special_float(rng_t *r) {
  // Rounding edges too: f32/f16/bf16 ties, overflow and subnormal limits.
  static const double sp[] = {0.0,
                              -0.0,
                              1.0,
                              -1.0,
                              0.5,
                              2.0,
                              3.25,
                              -7.0,
                              1e30,
                              -1e-30,
                              NAN,
                              INFINITY,
                              -INFINITY,
                              65504.0,
                              1e300,
                              1.0 + 0x1p-24,
                              1.0 + 0x1p-11 + 0x1p-30,
                              65520.0,
                              3.4028235677973366e38,
                              0x1p-149,
                              0x1p-25,
                              2147483648.0,
                              -2147483904.0,
                              1.0 + 0x1p-8,
                              9.2233720368547758e18};
  if (rng_chance(r, 50))
    return sp[rng_below(r, (int)(sizeof sp / sizeof sp[0]))];
  return (double)(rng_below(r, 17) - 8) / 4.0;
}

static int64_t special_int(rng_t *r) {
  static const int64_t sp[] = {0,         1,         -1,     2,
                               3,         -7,        100,    INT32_MAX,
                               INT32_MIN, 65536,     -65536, 46341,
                               INT64_MAX, INT64_MIN, (1ll << 53) + 1,
                               (1 << 24) + 1, 65519, 127, -128, 255};
  if (rng_chance(r, 40))
    return sp[rng_below(r, (int)(sizeof sp / sizeof sp[0]))];
  return rng_below(r, 21) - 10;
}

static const eddy_attr_t *random_dense(gen_t *g, const ty_t *t) {
  int64_t n = ty_count(t);
  bool splat = rng_chance(&g->rng, 30);
  size_t m = splat || n == 0 ? 1 : (size_t)n;
  const eddy_type_t *type = ty_get(g, t);
  const eddy_attr_t *a;
  if (ty_is_float(t)) {
    double *v = malloc(m * sizeof *v);
    assert_non_null(v);
    for (size_t i = 0; i < m; i++)
      v[i] = special_float(&g->rng);
    a = eddy_ir_dense_attr_from_f64(g->ctx, type, v, m);
    free(v);
    return a;
  }
  int64_t *v = malloc(m * sizeof *v);
  assert_non_null(v);
  for (size_t i = 0; i < m; i++)
    v[i] = t->dt == EDDY_DT_I1 ? rng_below(&g->rng, 2) : special_int(&g->rng);
  a = eddy_ir_dense_attr_from_i64(g->ctx, type, v, m);
  free(v);
  return a;
}

static eddy_value_t *gen_const(gen_t *g, const ty_t *t) {
  eddy_value_t *v = NULL;
  check_ok(eddy_ir_build_constant(&g->b, random_dense(g, t), &v), "constant");
  g->budget--;
  pool_push(g, v);
  return v;
}

static eddy_value_t *const_i32(gen_t *g, int64_t x) {
  ty_t t = {.dt = EDDY_DT_I32};
  eddy_value_t *v = NULL;
  check_ok(eddy_ir_build_constant(
               &g->b, eddy_ir_dense_attr_from_i64(g->ctx, ty_get(g, &t), &x, 1),
               &v),
           "constant");
  return v;
}

/// ---- Value generation -------------------------------------------------------

static eddy_value_t *gen_value(gen_t *g, const ty_t *t, int depth);

static eddy_value_t *find_existing(gen_t *g, const ty_t *t) {
  const eddy_type_t *type = ty_get(g, t);
  size_t hits = 0;
  for (size_t i = 0; i < g->len; i++)
    hits += g->pool[i]->type == type;
  if (hits == 0)
    return NULL;
  size_t k = (size_t)rng_below(&g->rng, (int)hits);
  for (size_t i = 0; i < g->len; i++)
    if (g->pool[i]->type == type && k-- == 0)
      return g->pool[i];
  return NULL;
}

/// A copy of a pure region-free op whose result is visible here: its
/// operands dominate it, hence dominate the insertion point too. Gives cse
/// duplicates to merge, across regions as well.
static eddy_value_t *gen_duplicate(gen_t *g, const ty_t *t) {
  eddy_value_t *v = find_existing(g, t);
  if (!v || !v->def || v->def->num_regions || v->def->num_results != 1 ||
      !eddy_ir_op_has_trait(v->def, EDDY_TRAIT_PURE))
    return NULL;
  eddy_ptrmap_t map;
  eddy_ptrmap_init(&map);
  eddy_op_t *c = eddy_ir_op_clone(v->def, &map);
  eddy_ptrmap_destroy(&map);
  if (g->b.before)
    eddy_ir_op_insert_before(c, g->b.before);
  else
    eddy_ir_op_append(c, g->b.block);
  g->budget--;
  pool_push(g, &c->results[0]);
  return &c->results[0];
}

static eddy_value_t *leaf(gen_t *g, const ty_t *t) {
  eddy_value_t *v = NULL;
  if (rng_chance(&g->rng, g->reuse))
    v = find_existing(g, t);
  return v ? v : gen_const(g, t);
}

/// Operand type that broadcasts to t: some dims become 1, leading unit dims
/// may be dropped. `full` forces a dim to stay.
static ty_t bcast_operand(gen_t *g, const ty_t *t, const bool *full,
                          eddy_dtype_t dt) {
  ty_t o = *t;
  o.dt = dt;
  for (int32_t i = 0; i < t->rank; i++)
    if (!full[i] && rng_chance(&g->rng, 50))
      o.dims[i] = 1;
  int32_t drop = 0;
  while (drop < o.rank && o.dims[drop] == 1 && !full[drop] &&
         rng_chance(&g->rng, 60))
    drop++;
  if (drop) {
    for (int32_t i = drop; i < o.rank; i++)
      o.dims[i - drop] = o.dims[i];
    o.rank -= drop;
  }
  return o;
}

/// Two operand types of dtype dt whose broadcast is exactly t's shape.
static void bcast_pair(gen_t *g, const ty_t *t, eddy_dtype_t dt, ty_t *a,
                       ty_t *b) {
  bool fa[MAX_RANK], fb[MAX_RANK];
  for (int32_t i = 0; i < t->rank; i++) {
    int who = rng_below(&g->rng, 4); // 0,1: a full; 2: b full; 3: both
    fa[i] = who != 2;
    fb[i] = who >= 2;
  }
  *a = bcast_operand(g, t, fa, dt);
  *b = bcast_operand(g, t, fb, dt);
  // A dropped leading dim is only fine when the other operand keeps it.
  if (a->rank < t->rank && b->rank < t->rank) {
    bool keep[MAX_RANK] = {true, true, true};
    *b = bcast_operand(g, t, keep, dt);
  }
}

static eddy_value_t *gen_unary(gen_t *g, const ty_t *t, int depth) {
  static const char *fl[] = {"core.neg",  "core.abs",     "core.exp",
                             "core.log",  "core.log1p",   "core.tanh",
                             "core.sigmoid", "core.relu", "core.sqrt",
                             "core.rsqrt", "core.square", "core.floor",
                             "core.sign"};
  static const char *in[] = {"core.neg", "core.abs", "core.relu",
                             "core.square", "core.sign"};
  const char *name;
  if (t->dt == EDDY_DT_I1)
    name = "core.not";
  else if (ty_is_float(t))
    name = fl[rng_below(&g->rng, 13)];
  else
    name = in[rng_below(&g->rng, 5)];
  eddy_value_t *x = gen_value(g, t, depth + 1);
  return build(g, name, &x, 1, NULL, 0, t);
}

static eddy_value_t *gen_binary(gen_t *g, const ty_t *t, int depth) {
  static const char *fl[] = {"core.add", "core.sub", "core.mul", "core.div",
                             "core.pow", "core.maximum", "core.minimum"};
  static const char *cmp[] = {"core.eq", "core.ne", "core.lt",
                              "core.le", "core.gt", "core.ge"};
  const char *name;
  eddy_dtype_t odt = t->dt;
  if (t->dt == EDDY_DT_I1) {
    if (rng_chance(&g->rng, 65)) {
      name = cmp[rng_below(&g->rng, 6)];
      do
        odt = random_dtype(g);
      while (odt == EDDY_DT_I1);
    } else {
      name = rng_chance(&g->rng, 50) ? "core.and" : "core.or";
    }
  } else {
    name = fl[rng_below(&g->rng, ty_is_float(t) ? 7 : 6)];
    if (!ty_is_float(t) && rng_chance(&g->rng, 15))
      name = "core.maximum";
    if (!ty_is_float(t) && strcmp(name, "core.pow") == 0)
      name = "core.minimum";
  }
  ty_t ta, tb;
  bcast_pair(g, t, odt, &ta, &tb);
  eddy_value_t *ops[2];
  if (rng_chance(&g->rng, 25) && odt != EDDY_DT_I1) {
    // One operand a splat of a value with algebraic meaning: identities,
    // absorbing elements, signed zeros, NaN, inf.
    static const double fv[] = {0.0, -0.0, 1.0, -1.0, NAN, INFINITY, 2.0};
    static const int64_t iv[] = {0, 1, -1, 2, INT32_MIN};
    ty_t *ct = rng_chance(&g->rng, 50) ? &ta : &tb;
    const eddy_type_t *type = ty_get(g, ct);
    const eddy_attr_t *a =
        eddy_dtype_is_float(odt)
            ? eddy_ir_dense_attr_from_f64(g->ctx, type,
                                          &fv[rng_below(&g->rng, 7)], 1)
            : eddy_ir_dense_attr_from_i64(g->ctx, type,
                                          &iv[rng_below(&g->rng, 5)], 1);
    eddy_value_t *c = NULL;
    check_ok(eddy_ir_build_constant(&g->b, a, &c), "constant");
    eddy_value_t *x = gen_value(g, ct == &ta ? &tb : &ta, depth + 1);
    ops[0] = ct == &ta ? c : x;
    ops[1] = ct == &ta ? x : c;
    return build(g, name, ops, 2, NULL, 0, t);
  }
  ops[0] = gen_value(g, &ta, depth + 1);
  // x op x: folders must not assume anything about it.
  ops[1] = (memcmp(&ta, &tb, sizeof ta) == 0 && rng_chance(&g->rng, 10))
               ? ops[0]
               : gen_value(g, &tb, depth + 1);
  return build(g, name, ops, 2, NULL, 0, t);
}

static eddy_value_t *gen_select(gen_t *g, const ty_t *t, int depth) {
  ty_t tc, ta, tb, tmp;
  // One of a and b keeps the full shape; the predicate and the other one
  // may broadcast freely.
  bcast_pair(g, t, EDDY_DT_I1, &tc, &tmp);
  bcast_pair(g, t, t->dt, &tmp, &tb);
  ta = *t;
  if (rng_chance(&g->rng, 50)) { // or b keeps it
    tmp = ta;
    ta = tb;
    tb = tmp;
  }
  eddy_value_t *ops[3];
  ops[0] = gen_value(g, &tc, depth + 1);
  ops[1] = gen_value(g, &ta, depth + 1);
  ops[2] = gen_value(g, &tb, depth + 1);
  return build(g, "core.select", ops, 3, NULL, 0, t);
}

static eddy_value_t *gen_cast(gen_t *g, const ty_t *t, int depth) {
  ty_t s = *t;
  s.dt = random_dtype(g);
  eddy_value_t *x = gen_value(g, &s, depth + 1);
  const char *dn = eddy_dtype_name(t->dt);
  eddy_named_attr_t a =
      nattr(g, "dtype", eddy_ir_string_attr_get(g->ctx, dn, strlen(dn)));
  return build(g, "core.cast", &x, 1, &a, 1, t);
}

/// Reduction to t from a source with one or two more (or kept) dims.
static eddy_value_t *gen_reduce(gen_t *g, const ty_t *t, int depth) {
  static const char *names[] = {"core.reduce_sum", "core.reduce_max",
                                "core.reduce_min", "core.reduce_prod",
                                "core.reduce_mean"};
  if (t->dt == EDDY_DT_I1)
    return NULL;
  const char *name = names[rng_below(&g->rng, ty_is_float(t) ? 5 : 4)];
  if (rng_chance(&g->rng, 10)) { // no axes: the identity
    eddy_value_t *x = gen_value(g, t, depth + 1);
    eddy_named_attr_t a = nints(g, "axes", NULL, 0);
    return build(g, name, &x, 1, &a, 1, t);
  }
  bool keep = t->rank > 0 && rng_chance(&g->rng, 30);
  ty_t s = *t;
  int64_t axes[MAX_RANK];
  size_t na = 0;
  if (keep) {
    // Reduce the dims of t that are 1 (at least one must be).
    for (int32_t i = 0; i < t->rank; i++)
      if (t->dims[i] == 1 && rng_chance(&g->rng, 70)) {
        s.dims[i] = 1 + rng_below(&g->rng, 3);
        axes[na++] = rng_chance(&g->rng, 30) ? i - t->rank : i;
      }
    if (na == 0)
      return NULL;
  } else {
    if (t->rank >= MAX_RANK)
      return NULL;
    // Insert one new dim at position p.
    int32_t p = rng_below(&g->rng, t->rank + 1);
    s.rank = t->rank + 1;
    for (int32_t i = t->rank; i > p; i--)
      s.dims[i] = t->dims[i - 1];
    s.dims[p] = 1 + rng_below(&g->rng, 3);
    axes[na++] = rng_chance(&g->rng, 30) ? p - s.rank : p;
  }
  eddy_value_t *x = gen_value(g, &s, depth + 1);
  eddy_named_attr_t at[2] = {nints(g, "axes", axes, na),
                             nattr(g, "keepdims",
                                   eddy_ir_bool_attr_get(g->ctx, keep))};
  return build(g, name, &x, 1, at, keep || rng_chance(&g->rng, 50) ? 2 : 1,
               t);
}

static eddy_value_t *gen_reshape(gen_t *g, const ty_t *t, int depth) {
  int64_t n = ty_count(t);
  ty_t s = {.dt = t->dt};
  // A source shape with the same count: [n], [1, n], [n, 1] or [].
  int k = rng_below(&g->rng, 4);
  if (n == 1 && k == 0) {
    s.rank = 0;
  } else if (k <= 1) {
    s.rank = 1, s.dims[0] = n;
  } else {
    s.rank = 2;
    s.dims[0] = k == 2 ? 1 : n;
    s.dims[1] = k == 2 ? n : 1;
  }
  eddy_value_t *x = gen_value(g, &s, depth + 1);
  int64_t shape[MAX_RANK];
  for (int32_t i = 0; i < t->rank; i++)
    shape[i] = t->dims[i];
  if (t->rank > 0 && n > 0 && rng_chance(&g->rng, 30))
    shape[rng_below(&g->rng, t->rank)] = -1;
  eddy_named_attr_t a = nints(g, "shape", shape, (size_t)t->rank);
  return build(g, "core.reshape", &x, 1, &a, 1, t);
}

static eddy_value_t *gen_transpose(gen_t *g, const ty_t *t, int depth) {
  int64_t perm[MAX_RANK];
  ty_t s = *t;
  bool rev = rng_chance(&g->rng, 70);
  for (int32_t i = 0; i < t->rank; i++)
    perm[i] = rev ? t->rank - 1 - i : i;
  for (int32_t i = 0; i < t->rank; i++)
    s.dims[perm[i]] = t->dims[i];
  eddy_value_t *x = gen_value(g, &s, depth + 1);
  eddy_named_attr_t a = nints(g, "perm", perm, (size_t)t->rank);
  return build(g, "core.transpose", &x, 1, &a, 1, t);
}

static eddy_value_t *gen_concat(gen_t *g, const ty_t *t, int depth) {
  if (t->rank == 0)
    return NULL;
  int32_t ax = rng_below(&g->rng, t->rank);
  int64_t total = t->dims[ax];
  eddy_value_t *ops[4];
  size_t n = 0;
  do { // an empty dim gets one empty part
    int64_t part = n == 2 || total == 0 ? total
                                        : 1 + rng_below(&g->rng, (int)total);
    ty_t s = *t;
    s.dims[ax] = part;
    ops[n++] = gen_value(g, &s, depth + 1);
    total -= part;
  } while (total > 0 && n < 3);
  if (total > 0)
    return NULL; // cannot happen: the third part takes the rest
  eddy_named_attr_t a =
      nint(g, "axis", rng_chance(&g->rng, 30) ? ax - t->rank : ax);
  return build(g, "core.concat", ops, n, &a, 1, t);
}

static eddy_value_t *gen_slice(gen_t *g, const ty_t *t, int depth) {
  if (t->rank == 0)
    return NULL;
  ty_t s = *t;
  int64_t start[MAX_RANK], limit[MAX_RANK], strides[MAX_RANK];
  bool use_strides = rng_chance(&g->rng, 40);
  for (int32_t i = 0; i < t->rank; i++) {
    int64_t st = use_strides ? 1 + rng_below(&g->rng, 2) : 1;
    int64_t lo = rng_below(&g->rng, 2);
    int64_t span = t->dims[i] ? (t->dims[i] - 1) * st + 1 : 0;
    s.dims[i] = lo + span + rng_below(&g->rng, 2);
    start[i] = lo;
    limit[i] = lo + span;
    strides[i] = st;
  }
  eddy_value_t *x = gen_value(g, &s, depth + 1);
  eddy_named_attr_t at[3] = {nints(g, "start", start, (size_t)t->rank),
                             nints(g, "limit", limit, (size_t)t->rank),
                             nints(g, "strides", strides, (size_t)t->rank)};
  return build(g, "core.slice", &x, 1, at, use_strides ? 3 : 2, t);
}

static eddy_value_t *gen_pad(gen_t *g, const ty_t *t, int depth) {
  if (t->rank == 0)
    return NULL;
  ty_t s = *t;
  int64_t low[MAX_RANK], high[MAX_RANK];
  for (int32_t i = 0; i < t->rank; i++) {
    low[i] = rng_below(&g->rng, (int)t->dims[i] + 1);
    high[i] = rng_below(&g->rng, (int)(t->dims[i] - low[i]) + 1);
    s.dims[i] = t->dims[i] - low[i] - high[i];
  }
  ty_t sc = {.dt = t->dt};
  eddy_value_t *ops[2] = {gen_value(g, &s, depth + 1),
                          gen_value(g, &sc, depth + 1)};
  eddy_named_attr_t at[2] = {nints(g, "low", low, (size_t)t->rank),
                             nints(g, "high", high, (size_t)t->rank)};
  return build(g, "core.pad", ops, 2, at, 2, t);
}

static eddy_value_t *gen_matmul(gen_t *g, const ty_t *t, int depth) {
  if (t->rank < 2 || t->dt == EDDY_DT_I1)
    return NULL;
  int64_t m = t->dims[t->rank - 2], n = t->dims[t->rank - 1];
  int64_t k = 1 + rng_below(&g->rng, 3);
  bool ta = rng_chance(&g->rng, 30), tb = rng_chance(&g->rng, 30);
  ty_t a = *t, b = *t;
  a.dims[t->rank - 2] = ta ? k : m;
  a.dims[t->rank - 1] = ta ? m : k;
  b.dims[t->rank - 2] = tb ? n : k;
  b.dims[t->rank - 1] = tb ? k : n;
  eddy_value_t *ops[2] = {gen_value(g, &a, depth + 1),
                          gen_value(g, &b, depth + 1)};
  eddy_named_attr_t at[2];
  size_t na = 0;
  if (ta || rng_chance(&g->rng, 20))
    at[na++] = nattr(g, "transpose_a", eddy_ir_bool_attr_get(g->ctx, ta));
  if (tb || rng_chance(&g->rng, 20))
    at[na++] = nattr(g, "transpose_b", eddy_ir_bool_attr_get(g->ctx, tb));
  return build(g, "core.matmul", ops, 2, at, na, t);
}

static eddy_value_t *gen_broadcast_to(gen_t *g, const ty_t *t, int depth) {
  bool full[MAX_RANK] = {false, false, false};
  ty_t s = bcast_operand(g, t, full, t->dt);
  eddy_value_t *x = gen_value(g, &s, depth + 1);
  eddy_named_attr_t a = nints(g, "shape", t->dims, (size_t)t->rank);
  return build(g, "core.broadcast_to", &x, 1, &a, 1, t);
}

static eddy_value_t *gen_iota(gen_t *g, const ty_t *t) {
  if (t->rank == 0 || t->dt == EDDY_DT_I1)
    return NULL;
  const eddy_type_t *rt = ty_get(g, t);
  eddy_named_attr_t a = nint(g, "dimension", rng_below(&g->rng, t->rank));
  eddy_op_state_t st = {.name = "core.iota",
                        .attrs = &a,
                        .num_attrs = 1,
                        .result_types = &rt,
                        .num_results = 1};
  eddy_op_t *op = NULL;
  check_ok(eddy_ir_build(&g->b, &st, &op), "core.iota");
  g->budget--;
  pool_push(g, &op->results[0]);
  return &op->results[0];
}

/// gather(params, constant in-range indices) along axis 0 of a rank-1 t.
static eddy_value_t *gen_gather(gen_t *g, const ty_t *t, int depth) {
  if (t->rank != 1)
    return NULL;
  int64_t len = 1 + rng_below(&g->rng, 4);
  ty_t p = {.dt = t->dt, .rank = 1, .dims = {len}};
  ty_t it = {.dt = EDDY_DT_I32, .rank = 1, .dims = {t->dims[0]}};
  int64_t idx[64];
  if (t->dims[0] > 64)
    return NULL;
  // Now and then an index out of range: a run-time error, which must stay
  // where it is (e.g. in a loop that never runs).
  bool bad = rng_chance(&g->rng, 10);
  for (int64_t i = 0; i < t->dims[0]; i++)
    idx[i] = bad && rng_chance(&g->rng, 50) ? (rng_chance(&g->rng, 50) ? -1 : len)
                                            : rng_below(&g->rng, (int)len);
  eddy_value_t *ops[2] = {gen_value(g, &p, depth + 1), NULL};
  check_ok(eddy_ir_build_constant(
               &g->b,
               eddy_ir_dense_attr_from_i64(g->ctx, ty_get(g, &it), idx,
                                           (size_t)t->dims[0]),
               &ops[1]),
           "constant");
  eddy_named_attr_t a = nint(g, "axis", 0);
  return build(g, "core.gather", ops, 2, &a, 1, t);
}

/// One result of split: t is piece `which` of a source twice as long.
static eddy_value_t *gen_split(gen_t *g, const ty_t *t, int depth) {
  if (t->rank == 0)
    return NULL;
  int32_t ax = rng_below(&g->rng, t->rank);
  int64_t parts = 2 + rng_below(&g->rng, 2);
  ty_t s = *t;
  s.dims[ax] *= parts;
  eddy_value_t *x = gen_value(g, &s, depth + 1);
  eddy_named_attr_t at[2] = {nint(g, "axis", ax),
                             nint(g, "num_splits", parts)};
  const eddy_type_t *rt[4];
  for (int64_t i = 0; i < parts; i++)
    rt[i] = ty_get(g, t);
  eddy_op_state_t st = {.name = "core.split",
                        .operands = &x,
                        .num_operands = 1,
                        .attrs = at,
                        .num_attrs = 2,
                        .result_types = rt,
                        .num_results = (size_t)parts};
  eddy_op_t *op = NULL;
  check_ok(eddy_ir_build(&g->b, &st, &op), "core.split");
  g->budget--;
  for (int64_t i = 0; i < parts; i++)
    pool_push(g, &op->results[i]);
  return &op->results[rng_below(&g->rng, (int)parts)];
}

/// cast(dim(x)) or a cast of an element of shape(x): shape folders.
static eddy_value_t *gen_dim(gen_t *g, const ty_t *t, int depth) {
  if (t->rank != 0 || t->dt == EDDY_DT_I1)
    return NULL;
  ty_t s = random_type(g);
  if (s.rank == 0)
    return NULL;
  eddy_value_t *x = gen_value(g, &s, depth + 1);
  eddy_named_attr_t a = nint(g, "index", rng_below(&g->rng, s.rank));
  eddy_value_t *d = build(g, "core.dim", &x, 1, &a, 1, NULL);
  const char *dn = eddy_dtype_name(t->dt);
  eddy_named_attr_t c =
      nattr(g, "dtype", eddy_ir_string_attr_get(g->ctx, dn, strlen(dn)));
  return build(g, "core.cast", &d, 1, &c, 1, t);
}

/// ---- Control flow -----------------------------------------------------------

typedef struct saved_point {
  eddy_block_t *block;
  eddy_op_t *before;
  size_t len;
} saved_point_t;

static saved_point_t enter_block(gen_t *g, eddy_block_t *b) {
  saved_point_t s = {g->b.block, g->b.before, g->len};
  eddy_ir_builder_set_end(&g->b, b);
  g->region_depth++;
  return s;
}

static void leave_block(gen_t *g, saved_point_t s) {
  g->b.block = s.block;
  g->b.before = s.before;
  g->len = s.len;
  g->region_depth--;
}

static void build_terminator(gen_t *g, const char *name, eddy_value_t **ops,
                             size_t n) {
  eddy_op_state_t st = {.name = name, .operands = ops, .num_operands = n};
  eddy_op_t *op = NULL;
  check_ok(eddy_ir_build(&g->b, &st, &op), name);
}

static eddy_value_t *gen_if(gen_t *g, const ty_t *t, int depth) {
  if (g->region_depth >= 3)
    return NULL;
  ty_t pt = {.dt = EDDY_DT_I1};
  eddy_value_t *pred = gen_value(g, &pt, depth + 1);
  size_t nres = 1 + rng_below(&g->rng, 3);
  ty_t types[3] = {*t};
  const eddy_type_t *rt[3] = {ty_get(g, t)};
  for (size_t i = 1; i < nres; i++) {
    types[i] = random_type(g);
    rt[i] = ty_get(g, &types[i]);
  }
  eddy_op_state_t st = {.name = "ctl.if",
                        .operands = &pred,
                        .num_operands = 1,
                        .result_types = rt,
                        .num_results = nres,
                        .num_regions = 2};
  eddy_op_t *op = NULL;
  check_ok(eddy_ir_build(&g->b, &st, &op), "ctl.if");
  for (int r = 0; r < 2; r++) {
    eddy_block_t *blk = eddy_ir_region_add_block(&op->regions[r]);
    saved_point_t sp = enter_block(g, blk);
    eddy_value_t *ys[3];
    for (size_t i = 0; i < nres; i++)
      ys[i] = gen_value(g, &types[i], depth + 2);
    build_terminator(g, "ctl.yield", ys, nres);
    leave_block(g, sp);
  }
  g->budget--;
  for (size_t i = 0; i < nres; i++)
    pool_push(g, &op->results[i]);
  return &op->results[0];
}

/// A recurrent read that a loop body multiplies by a matrix,
/// matmul(xs[t], W), planned before the loop is built (gemm-hoist's
/// pattern), with the variations the pass must refuse: W computed in the
/// body, xs carried as a loop value that the body changes, an index that
/// is not the counter.
typedef struct gen_rec {
  int value;        ///< the loop value it feeds, or -1 for none
  int xs_arg;       ///< the loop value carrying xs (else captured), or -1
  eddy_value_t *xs, *list, *w;
  bool w_inside, transpose_b, reshape_index, const_index, modify_xs;
  ty_t xt, wt;
} gen_rec_t;

/// Plans rec for loop value `value` of type t (rank 2, not i1): xs of
/// type [rows, M, K] and W [K, N] (or [N, K], transposed) built here,
/// before the loop; xs as a new pass-through loop value when there is room
/// (*n < 4), or as a list made from it.
static void plan_recurrent(gen_t *g, gen_rec_t *rec, int value, ty_t *types,
                           size_t *n, eddy_value_t **inits,
                           const eddy_type_t **rt, int64_t rows, int depth) {
  const ty_t *t = &types[value];
  int64_t k = 1 + rng_below(&g->rng, 3);
  rec->value = value;
  rec->xt = (ty_t){.dt = t->dt, .rank = 2, .dims = {t->dims[0], k}};
  rec->transpose_b = rng_chance(&g->rng, 30);
  rec->wt = (ty_t){.dt = t->dt, .rank = 2};
  rec->wt.dims[0] = rec->transpose_b ? t->dims[1] : k;
  rec->wt.dims[1] = rec->transpose_b ? k : t->dims[1];
  rec->w_inside = rng_chance(&g->rng, 10);
  rec->const_index = rng_chance(&g->rng, 10);
  rec->reshape_index = rng_chance(&g->rng, 30);
  ty_t xs = {.dt = t->dt, .rank = 3, .dims = {rows, t->dims[0], k}};
  rec->xs = gen_value(g, &xs, depth + 1);
  if (!rec->w_inside)
    rec->w = gen_value(g, &rec->wt, depth + 1);
  int how = rng_below(&g->rng, 3);
  if (how == 1 && *n < 4) {
    rec->xs_arg = (int)*n;
    rec->modify_xs = rng_chance(&g->rng, 15);
    types[*n] = xs;
    rt[*n] = ty_get(g, &xs);
    inits[*n] = rec->xs;
    (*n)++;
  } else if (how == 2) {
    check_ok(eddy_ir_build_simple(&g->b, "tl.from_tensor", &rec->xs, 1, NULL,
                                  0, &rec->list),
             "tl.from_tensor");
  }
}

/// The loop value rec feeds, in the body whose block arguments are args.
static eddy_value_t *gen_recurrent(gen_t *g, const gen_rec_t *rec,
                                   eddy_value_t **args, const ty_t *t,
                                   int depth) {
  eddy_value_t *idx = rec->const_index ? const_i32(g, 0) : args[0];
  if (rec->reshape_index && !rec->const_index) {
    int64_t one = 1;
    eddy_named_attr_t a1 = nints(g, "shape", &one, 1);
    idx = build(g, "core.reshape", &idx, 1, &a1, 1, NULL);
    eddy_named_attr_t a0 = nints(g, "shape", NULL, 0);
    idx = build(g, "core.reshape", &idx, 1, &a0, 1, NULL);
  }
  eddy_value_t *x;
  if (rec->list) {
    eddy_value_t *ops[2] = {rec->list, idx};
    x = build(g, "tl.get_item", ops, 2, NULL, 0, &rec->xt);
  } else {
    eddy_value_t *ops[2] = {rec->xs_arg >= 0 ? args[rec->xs_arg] : rec->xs,
                            idx};
    eddy_named_attr_t a = nint(g, "axis", 0);
    x = build(g, "core.gather", ops, 2, &a, 1, &rec->xt);
  }
  eddy_value_t *ops[2] = {
      x, rec->w_inside ? gen_value(g, &rec->wt, depth + 2) : rec->w};
  eddy_named_attr_t tb =
      nattr(g, "transpose_b", eddy_ir_bool_attr_get(g->ctx, true));
  eddy_value_t *y = build(g, "core.matmul", ops, 2, &tb,
                          rec->transpose_b ? 1 : 0, t);
  if (rng_chance(&g->rng, 50))
    return y;
  eddy_value_t *sum[2] = {y, gen_value(g, t, depth + 2)};
  return build(g, "core.add", sum, 2, NULL, 0, t);
}

/// while (counter < bound [&& extra]) { counter += 1; values = f(values) }
/// with 0..4 trips, the wanted type as a loop value and other loop values
/// that may be unused; now and then one of them a recurrent read
/// (gen_rec_t).
static eddy_value_t *gen_while(gen_t *g, const ty_t *t, int depth) {
  if (g->loop_depth >= 2 || g->region_depth >= 3)
    return NULL;
  size_t n = 2 + rng_below(&g->rng, 3);
  ty_t types[4] = {{.dt = EDDY_DT_I32}, *t};
  for (size_t i = 2; i < n; i++)
    types[i] = random_type(g);
  const eddy_type_t *rt[4];
  eddy_value_t *inits[4];
  int64_t start = rng_below(&g->rng, 3);
  int64_t bound = rng_below(&g->rng, 5);
  inits[0] = const_i32(g, start);
  rt[0] = ty_get(g, &types[0]);
  for (size_t i = 1; i < n; i++) {
    inits[i] = gen_value(g, &types[i], depth + 1);
    rt[i] = ty_get(g, &types[i]);
  }
  gen_rec_t rec = {.value = -1, .xs_arg = -1};
  for (size_t i = 1; i < n; i++)
    if (types[i].rank == 2 && types[i].dt != EDDY_DT_I1 &&
        rng_chance(&g->rng, 30)) {
      // Rows enough for every trip, or one short now and then.
      plan_recurrent(g, &rec, (int)i, types, &n, inits, rt,
                     bound + rng_below(&g->rng, 2), depth);
      break;
    }
  eddy_named_attr_t at[1];
  size_t nat = 0;
  if (rng_chance(&g->rng, 15))
    at[nat++] = nint(g, "maximum_iterations", rng_below(&g->rng, 4));
  eddy_op_state_t st = {.name = "ctl.while",
                        .operands = inits,
                        .num_operands = n,
                        .attrs = at,
                        .num_attrs = nat,
                        .result_types = rt,
                        .num_results = n,
                        .num_regions = 2};
  eddy_op_t *op = NULL;
  check_ok(eddy_ir_build(&g->b, &st, &op), "ctl.while");
  g->loop_depth++;
  // cond
  {
    eddy_block_t *blk = eddy_ir_region_add_block(&op->regions[0]);
    saved_point_t sp = enter_block(g, blk);
    eddy_value_t *args[4];
    for (size_t i = 0; i < n; i++)
      args[i] = eddy_ir_block_add_arg(blk, rt[i]);
    for (size_t i = 1; i < n; i++)
      pool_push(g, args[i]);
    if (rng_chance(&g->rng, 30)) { // junk in the condition region
      ty_t jt = random_type(g);
      gen_value(g, &jt, depth + 2);
    }
    eddy_value_t *cmp[2] = {args[0], const_i32(g, bound)};
    eddy_value_t *pred = build(g, "core.lt", cmp, 2, NULL, 0, NULL);
    if (rng_chance(&g->rng, 10)) { // never entered, whatever the counter
      ty_t pt = {.dt = EDDY_DT_I1};
      int64_t no = 0;
      check_ok(eddy_ir_build_constant(
                   &g->b,
                   eddy_ir_dense_attr_from_i64(g->ctx, ty_get(g, &pt), &no, 1),
                   &pred),
               "constant");
    }
    if (rng_chance(&g->rng, 25)) {
      ty_t pt = {.dt = EDDY_DT_I1};
      eddy_value_t *ex[2] = {pred, gen_value(g, &pt, depth + 2)};
      pred = build(g, "core.and", ex, 2, NULL, 0, NULL);
    }
    build_terminator(g, "ctl.condition", &pred, 1);
    leave_block(g, sp);
  }
  // body
  {
    eddy_block_t *blk = eddy_ir_region_add_block(&op->regions[1]);
    saved_point_t sp = enter_block(g, blk);
    eddy_value_t *args[4], *next[4];
    for (size_t i = 0; i < n; i++)
      args[i] = eddy_ir_block_add_arg(blk, rt[i]);
    if (rng_chance(&g->rng, 50))
      pool_push(g, args[0]);
    for (size_t i = 1; i < n; i++)
      pool_push(g, args[i]);
    eddy_value_t *inc[2] = {args[0], const_i32(g, 1)};
    next[0] = build(g, "core.add", inc, 2, NULL, 0, NULL);
    if (rng_chance(&g->rng, 10)) {
      // An invariant op that fails when it runs (index out of range): fine
      // as long as the loop never runs, so it must not be hoisted.
      ty_t pt = {.dt = random_dtype(g), .rank = 1, .dims = {2}};
      ty_t it = {.dt = EDDY_DT_I32, .rank = 1, .dims = {1}};
      int64_t bad = rng_chance(&g->rng, 50) ? 2 : -1;
      eddy_value_t *ops[2] = {gen_value(g, &pt, depth + 2), NULL};
      check_ok(eddy_ir_build_constant(
                   &g->b,
                   eddy_ir_dense_attr_from_i64(g->ctx, ty_get(g, &it), &bad, 1),
                   &ops[1]),
               "constant");
      eddy_named_attr_t a = nint(g, "axis", 0);
      build(g, "core.gather", ops, 2, &a, 1, NULL);
    }
    for (size_t i = 1; i < n; i++) {
      if ((int)i == rec.value)
        next[i] = gen_recurrent(g, &rec, args, &types[i], depth);
      else if ((int)i == rec.xs_arg && !rec.modify_xs)
        next[i] = args[i];
      else
        next[i] = rng_chance(&g->rng, 10) ? args[i]
                                          : gen_value(g, &types[i], depth + 2);
    }
    build_terminator(g, "ctl.yield", next, n);
    leave_block(g, sp);
  }
  g->loop_depth--;
  g->budget--;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || rng_chance(&g->rng, 70))
      pool_push(g, &op->results[i]);
  return &op->results[1];
}

/// An op of one result with the given result type (not inferred).
static eddy_value_t *build_typed(gen_t *g, const char *name, eddy_value_t **ops,
                                 size_t n, const eddy_type_t *rt) {
  eddy_op_state_t st = {.name = name,
                        .operands = ops,
                        .num_operands = n,
                        .result_types = &rt,
                        .num_results = 1};
  eddy_op_t *op = NULL;
  check_ok(eddy_ir_build(&g->b, &st, &op), name);
  g->budget--;
  return &op->results[0];
}

/// Item j of xs ([T, item...]): tl.get_item of a list made from it (list
/// not NULL) or core.gather on axis 0.
static eddy_value_t *map_read(gen_t *g, eddy_value_t *xs, eddy_value_t *list,
                              eddy_value_t *j, const ty_t *item) {
  if (list) {
    eddy_value_t *ops[2] = {list, j};
    return build_typed(g, "tl.get_item", ops, 2, ty_get(g, item));
  }
  eddy_value_t *ops[2] = {xs, j};
  eddy_named_attr_t a = nint(g, "axis", 0);
  return build(g, "core.gather", ops, 2, &a, 1, item);
}

/// map-batch's pattern, a map_fn: for j < T: out[j] = f(xs[j], ...), out
/// a list reserved for T items and stacked after the loop, f elementwise
/// ops and a matmul of the items read at the counter and of values from
/// outside the loop. With the variations the pass must refuse: a reserve
/// of T + 1 items (the last stacks as zeros), a value carried from one
/// iteration to the next, the counter's value used as a number, a second
/// condition that ends the loop one iteration early.
static eddy_value_t *gen_map(gen_t *g, const ty_t *t, int depth) {
  if (t->rank < 1 || t->dims[0] < 1 || t->dt == EDDY_DT_I1 ||
      g->loop_depth >= 2 || g->region_depth >= 3)
    return NULL;
  int64_t trips = t->dims[0];
  ty_t it = {.dt = t->dt, .rank = t->rank - 1};
  for (int32_t d = 1; d < t->rank; d++)
    it.dims[d - 1] = t->dims[d];
  bool mm = it.rank == 2 && ty_is_float(t) && rng_chance(&g->rng, 50);
  int64_t k = 1 + rng_below(&g->rng, 3);
  ty_t xt = *t, xi = it;
  if (mm) {
    xt = (ty_t){.dt = t->dt, .rank = 3, .dims = {trips, it.dims[0], k}};
    xi = (ty_t){.dt = t->dt, .rank = 2, .dims = {it.dims[0], k}};
  }
  eddy_value_t *xs = gen_value(g, &xt, depth + 1), *xl = NULL;
  if (rng_chance(&g->rng, 50))
    xl = build(g, "tl.from_tensor", &xs, 1, NULL, 0, NULL);
  ty_t wi = {
      .dt = t->dt, .rank = 2, .dims = {k, it.rank == 2 ? it.dims[1] : 1}};
  ty_t ws_t = {.dt = t->dt, .rank = 3, .dims = {trips, wi.dims[0], wi.dims[1]}};
  bool w_read = mm && rng_chance(&g->rng, 40);
  eddy_value_t *w = mm ? gen_value(g, w_read ? &ws_t : &wi, depth + 1) : NULL;
  // An invariant operand: the item's type or a trailing part of it.
  ty_t vt = it;
  int32_t drop = it.rank ? rng_below(&g->rng, it.rank + 1) : 0;
  vt.rank = it.rank - drop;
  for (int32_t d = 0; d < vt.rank; d++)
    vt.dims[d] = it.dims[d + drop];
  eddy_value_t *inv = gen_value(g, &vt, depth + 1);
  int miss = rng_below(&g->rng, 100);
  bool long_reserve = miss < 6, carried = miss >= 6 && miss < 12,
       counter_value = miss >= 12 && miss < 18, early = miss >= 18 && miss < 24;
  const eddy_type_t *lt = eddy_ir_list_type_get(g->ctx, ty_get(g, &it));
  eddy_value_t *size = const_i32(g, trips + (long_reserve ? 1 : 0));
  eddy_value_t *inits[3] = {const_i32(g, 0),
                            build_typed(g, "tl.reserve", &size, 1, lt), inv};
  size_t n = carried ? 3 : 2;
  if (carried && vt.rank != it.rank)
    inits[2] = gen_value(g, &it, depth + 1);
  const eddy_type_t *rt[3] = {ty_get(g, &(ty_t){.dt = EDDY_DT_I32}), lt,
                              ty_get(g, &it)};
  eddy_op_state_t st = {.name = "ctl.while",
                        .operands = inits,
                        .num_operands = n,
                        .result_types = rt,
                        .num_results = n,
                        .num_regions = 2};
  eddy_op_t *op = NULL;
  check_ok(eddy_ir_build(&g->b, &st, &op), "ctl.while");
  g->loop_depth++;
  {
    eddy_block_t *blk = eddy_ir_region_add_block(&op->regions[0]);
    saved_point_t sp = enter_block(g, blk);
    eddy_value_t *args[3];
    for (size_t i = 0; i < n; i++)
      args[i] = eddy_ir_block_add_arg(blk, rt[i]);
    eddy_value_t *cmp[2] = {args[0], const_i32(g, trips)};
    eddy_value_t *pred = build(g, "core.lt", cmp, 2, NULL, 0, NULL);
    if (early) {
      eddy_value_t *cmp2[2] = {args[0], const_i32(g, trips - 1)};
      eddy_value_t *ex[2] = {pred, build(g, "core.lt", cmp2, 2, NULL, 0, NULL)};
      pred = build(g, "core.and", ex, 2, NULL, 0, NULL);
    }
    build_terminator(g, "ctl.condition", &pred, 1);
    leave_block(g, sp);
  }
  {
    eddy_block_t *blk = eddy_ir_region_add_block(&op->regions[1]);
    saved_point_t sp = enter_block(g, blk);
    eddy_value_t *args[3], *next[3];
    for (size_t i = 0; i < n; i++)
      args[i] = eddy_ir_block_add_arg(blk, rt[i]);
    eddy_value_t *j = args[0];
    eddy_value_t *v = map_read(g, xs, xl, j, &xi);
    if (mm) {
      eddy_value_t *ops[2] = {v, w_read ? map_read(g, w, NULL, j, &wi) : w};
      v = build(g, "core.matmul", ops, 2, NULL, 0, &it);
    }
    static const char *const bins[] = {"core.add", "core.mul", "core.sub",
                                       "core.maximum"};
    eddy_value_t *ops[2] = {v, carried ? args[2] : inv};
    if (rng_chance(&g->rng, 50))
      ops[0] = ops[1], ops[1] = v;
    v = build(g, bins[rng_below(&g->rng, 4)], ops, 2, NULL, 0, &it);
    if (ty_is_float(t) && rng_chance(&g->rng, 40))
      v = build(g, rng_chance(&g->rng, 50) ? "core.tanh" : "core.neg", &v, 1,
                NULL, 0, &it);
    if (counter_value) {
      eddy_named_attr_t a =
          nattr(g, "dtype",
                eddy_ir_string_attr_get(g->ctx, eddy_dtype_name(t->dt),
                                        strlen(eddy_dtype_name(t->dt))));
      eddy_value_t *f = build(g, "core.cast", &j, 1, &a, 1, NULL);
      eddy_value_t *ops2[2] = {v, f};
      v = build(g, "core.add", ops2, 2, NULL, 0, &it);
    }
    eddy_value_t *set[3] = {args[1], j, v};
    next[1] = build_typed(g, "tl.set_item", set, 3, lt);
    eddy_value_t *inc[2] = {j, const_i32(g, 1)};
    next[0] = build(g, "core.add", inc, 2, NULL, 0, NULL);
    if (carried)
      next[2] = v;
    build_terminator(g, "ctl.yield", next, n);
    leave_block(g, sp);
  }
  g->loop_depth--;
  g->budget--;
  ty_t stt = *t;
  stt.dims[0] = trips + (long_reserve ? 1 : 0);
  eddy_value_t *res = &op->results[1];
  eddy_value_t *r = build_typed(g, "tl.stack", &res, 1, ty_get(g, &stt));
  if (long_reserve) {
    int64_t start[MAX_RANK] = {0}, limit[MAX_RANK], step[MAX_RANK];
    for (int32_t d = 0; d < t->rank; d++) {
      limit[d] = t->dims[d];
      step[d] = 1;
    }
    eddy_named_attr_t a[3] = {nints(g, "start", start, (size_t)t->rank),
                              nints(g, "limit", limit, (size_t)t->rank),
                              nints(g, "strides", step, (size_t)t->rank)};
    r = build(g, "core.slice", &r, 1, a, 3, t);
  }
  pool_push(g, r);
  return r;
}

/// A scalar t from a rank-1 value of dynamic length: its sum or its length.
static eddy_value_t *consume_dynamic(gen_t *g, eddy_value_t *x, const ty_t *t) {
  if (rng_chance(&g->rng, 50)) {
    int64_t axis = 0;
    eddy_named_attr_t a = nints(g, "axes", &axis, 1);
    return build(g, "core.reduce_sum", &x, 1, &a, 1, t);
  }
  eddy_named_attr_t a = nint(g, "index", 0);
  eddy_value_t *d = build(g, "core.dim", &x, 1, &a, 1, NULL);
  const char *dn = eddy_dtype_name(t->dt);
  eddy_named_attr_t c =
      nattr(g, "dtype", eddy_ir_string_attr_get(g->ctx, dn, strlen(dn)));
  return build(g, "core.cast", &d, 1, &c, 1, t);
}

/// ctl.if whose branches yield different lengths: tensor<?xT>.
static eddy_value_t *gen_if_dynamic(gen_t *g, const ty_t *t, int depth) {
  if (t->rank != 0 || t->dt == EDDY_DT_I1 || g->region_depth >= 3)
    return NULL;
  ty_t pt = {.dt = EDDY_DT_I1};
  eddy_value_t *pred = gen_value(g, &pt, depth + 1);
  int64_t dyn = EDDY_DIM_DYNAMIC;
  const eddy_type_t *rt = eddy_ir_tensor_type_get(g->ctx, t->dt, 1, &dyn);
  eddy_op_state_t st = {.name = "ctl.if",
                        .operands = &pred,
                        .num_operands = 1,
                        .result_types = &rt,
                        .num_results = 1,
                        .num_regions = 2};
  eddy_op_t *op = NULL;
  check_ok(eddy_ir_build(&g->b, &st, &op), "ctl.if");
  for (int r = 0; r < 2; r++) {
    eddy_block_t *blk = eddy_ir_region_add_block(&op->regions[r]);
    saved_point_t sp = enter_block(g, blk);
    ty_t bt = {.dt = t->dt, .rank = 1, .dims = {rng_below(&g->rng, 4)}};
    eddy_value_t *y = gen_value(g, &bt, depth + 2);
    build_terminator(g, "ctl.yield", &y, 1);
    leave_block(g, sp);
  }
  g->budget--;
  return consume_dynamic(g, &op->results[0], t);
}

/// A loop value whose shape changes across iterations: tensor<?xT> grown
/// by concat in the body, read back as a scalar t through reduce_sum or dim
/// (which shape-infer and the folders must not treat as static).
static eddy_value_t *gen_growing(gen_t *g, const ty_t *t, int depth) {
  if (t->rank != 0 || t->dt == EDDY_DT_I1 || g->loop_depth >= 2 ||
      g->region_depth >= 3)
    return NULL;
  ty_t it = {.dt = t->dt, .rank = 1, .dims = {rng_below(&g->rng, 3)}};
  int64_t dyn = EDDY_DIM_DYNAMIC;
  const eddy_type_t *rt[2] = {
      eddy_ir_scalar_type_get(g->ctx, EDDY_DT_I32),
      eddy_ir_tensor_type_get(g->ctx, t->dt, 1, &dyn)};
  eddy_value_t *inits[2] = {const_i32(g, rng_below(&g->rng, 2)),
                            gen_value(g, &it, depth + 1)};
  int64_t bound = rng_below(&g->rng, 4);
  eddy_op_state_t st = {.name = "ctl.while",
                        .operands = inits,
                        .num_operands = 2,
                        .result_types = rt,
                        .num_results = 2,
                        .num_regions = 2};
  eddy_op_t *op = NULL;
  check_ok(eddy_ir_build(&g->b, &st, &op), "ctl.while");
  g->loop_depth++;
  {
    eddy_block_t *blk = eddy_ir_region_add_block(&op->regions[0]);
    saved_point_t sp = enter_block(g, blk);
    eddy_value_t *a0 = eddy_ir_block_add_arg(blk, rt[0]);
    eddy_ir_block_add_arg(blk, rt[1]);
    eddy_value_t *cmp[2] = {a0, const_i32(g, bound)};
    eddy_value_t *pred = build(g, "core.lt", cmp, 2, NULL, 0, NULL);
    build_terminator(g, "ctl.condition", &pred, 1);
    leave_block(g, sp);
  }
  {
    eddy_block_t *blk = eddy_ir_region_add_block(&op->regions[1]);
    saved_point_t sp = enter_block(g, blk);
    eddy_value_t *a0 = eddy_ir_block_add_arg(blk, rt[0]);
    eddy_value_t *a1 = eddy_ir_block_add_arg(blk, rt[1]);
    eddy_value_t *inc[2] = {a0, const_i32(g, 1)};
    eddy_value_t *next[2] = {build(g, "core.add", inc, 2, NULL, 0, NULL),
                             NULL};
    ty_t pt = {.dt = t->dt, .rank = 1, .dims = {1 + rng_below(&g->rng, 2)}};
    eddy_value_t *parts[2] = {a1, gen_value(g, &pt, depth + 2)};
    if (rng_chance(&g->rng, 50)) {
      eddy_value_t *tmp = parts[0];
      parts[0] = parts[1];
      parts[1] = tmp;
    }
    eddy_named_attr_t ax = nint(g, "axis", 0);
    next[1] = build(g, "core.concat", parts, 2, &ax, 1, NULL);
    build_terminator(g, "ctl.yield", next, 2);
    leave_block(g, sp);
  }
  g->loop_depth--;
  g->budget--;
  return consume_dynamic(g, &op->results[1], t);
}

static eddy_value_t *gen_value(gen_t *g, const ty_t *t, int depth) {
  // Big intermediates (split and slice sources grow) end in a leaf.
  if (g->budget <= 0 || depth > 5 || ty_count(t) > 32)
    return leaf(g, t);
  int r = rng_below(&g->rng, 100);
  if (r < 20) {
    eddy_value_t *v = find_existing(g, t);
    if (v)
      return v;
  } else if (r < 25) {
    eddy_value_t *v = gen_duplicate(g, t);
    if (v)
      return v;
  }
  for (int tries = 0; tries < 4; tries++) {
    eddy_value_t *v = NULL;
    switch (rng_below(&g->rng, 22)) {
    case 21:
      v = rng_chance(&g->rng, 50) ? gen_growing(g, t, depth)
                                  : gen_if_dynamic(g, t, depth);
      break;
    case 0:
    case 1:
    case 2:
      v = gen_unary(g, t, depth);
      break;
    case 3:
    case 4:
    case 5:
    case 6:
      v = gen_binary(g, t, depth);
      break;
    case 7:
      v = gen_select(g, t, depth);
      break;
    case 8:
      v = gen_cast(g, t, depth);
      break;
    case 9:
      v = gen_reduce(g, t, depth);
      break;
    case 10:
      v = gen_reshape(g, t, depth);
      break;
    case 11:
      v = gen_transpose(g, t, depth);
      break;
    case 12:
      v = rng_chance(&g->rng, 50) ? gen_concat(g, t, depth)
                                  : gen_split(g, t, depth);
      break;
    case 13:
      v = rng_chance(&g->rng, 50) ? gen_slice(g, t, depth)
                                  : gen_pad(g, t, depth);
      break;
    case 14:
      v = gen_matmul(g, t, depth);
      break;
    case 15:
      v = rng_chance(&g->rng, 50) ? gen_broadcast_to(g, t, depth)
                                  : gen_iota(g, t);
      break;
    case 16:
      v = rng_chance(&g->rng, 50) ? gen_gather(g, t, depth)
                                  : gen_dim(g, t, depth);
      break;
    case 17:
    case 18:
      v = gen_if(g, t, depth);
      break;
    case 19:
      v = gen_while(g, t, depth);
      break;
    case 20:
      v = rng_chance(&g->rng, 50) ? gen_while(g, t, depth)
                                  : gen_map(g, t, depth);
      break;
    }
    if (v)
      return v;
  }
  return leaf(g, t);
}

/// Builds @name into m: 1-3 arguments, 1-3 results, some dead values. When
/// callee is given, the body starts by calling it (once or twice, so cse
/// meets identical calls, which it must leave alone unless pure).
static eddy_op_t *gen_function(gen_t *g, eddy_module_t *m, const char *name,
                               eddy_op_t *callee) {
  size_t nargs = 1 + rng_below(&g->rng, 3);
  size_t nres = 1 + rng_below(&g->rng, 3);
  ty_t at[3], rt[3];
  const eddy_type_t *ain[3], *rout[3];
  for (size_t i = 0; i < nargs; i++) {
    at[i] = random_type(g);
    ain[i] = ty_get(g, &at[i]);
  }
  for (size_t i = 0; i < nres; i++) {
    rt[i] = random_type(g);
    rout[i] = ty_get(g, &rt[i]);
  }
  eddy_op_t *f = NULL;
  check_ok(eddy_ir_func_create(m, name, ain, nargs, rout, nres, NULL, &f),
           "func");
  eddy_block_t *entry = eddy_ir_func_entry(f);
  eddy_ir_builder_set_end(&g->b, entry);
  g->len = 0;
  for (size_t i = 0; i < nargs; i++)
    pool_push(g, entry->args[i]);
  int calls = callee ? 1 + rng_below(&g->rng, 2) : 0;
  for (int c = 0; c < calls; c++) {
    const eddy_type_t *cty = eddy_ir_func_type(callee);
    eddy_value_t *ops[3];
    for (uint32_t i = 0; i < cty->num_inputs; i++) {
      ty_t it = {.dt = cty->inputs[i]->dtype, .rank = cty->inputs[i]->rank};
      for (int32_t d = 0; d < it.rank; d++)
        it.dims[d] = cty->inputs[i]->dims[d];
      ops[i] = gen_value(g, &it, 1);
    }
    const char *cn = eddy_ir_func_name(callee);
    eddy_named_attr_t a =
        nattr(g, "callee", eddy_ir_symbol_attr_get(g->ctx, cn, strlen(cn)));
    eddy_op_state_t st = {.name = "ctl.call",
                          .operands = ops,
                          .num_operands = cty->num_inputs,
                          .attrs = &a,
                          .num_attrs = 1,
                          .result_types = cty->outputs,
                          .num_results = cty->num_outputs};
    eddy_op_t *op = NULL;
    check_ok(eddy_ir_build(&g->b, &st, &op), "ctl.call");
    for (uint32_t i = 0; i < op->num_results; i++)
      pool_push(g, &op->results[i]);
  }
  eddy_value_t *res[3];
  for (size_t i = 0; i < nres; i++) {
    if (rng_chance(&g->rng, 30)) { // a dead value
      ty_t d = random_type(g);
      gen_value(g, &d, 0);
    }
    res[i] = gen_value(g, &rt[i], 0);
  }
  build_terminator(g, "func.return", res, nres);
  return f;
}

/// ---- Forgetting shapes ----------------------------------------------------

/// t with some dims dynamic, or unranked now and then.
static const eddy_type_t *generalize(gen_t *g, const eddy_type_t *t) {
  if (t->kind != EDDY_TYPE_TENSOR || t->rank < 0)
    return t;
  if (rng_chance(&g->rng, 15))
    return eddy_ir_tensor_type_get(g->ctx, t->dtype, EDDY_RANK_UNKNOWN, NULL);
  int64_t dims[MAX_RANK + 4];
  for (int32_t i = 0; i < t->rank && i < MAX_RANK + 4; i++)
    dims[i] = rng_chance(&g->rng, 50) ? EDDY_DIM_DYNAMIC : t->dims[i];
  return eddy_ir_tensor_type_get(g->ctx, t->dtype, t->rank, dims);
}

static eddy_walk_result_t forget_op(eddy_op_t *op, void *user) {
  gen_t *g = user;
  if (eddy_ir_op_has_trait(op, EDDY_TRAIT_CONSTANT) ||
      eddy_ir_op_is(op, "core.iota") || eddy_ir_op_is(op, "func.func"))
    return EDDY_WALK_ADVANCE;
  bool loop = eddy_ir_op_is(op, "ctl.while");
  for (uint32_t i = 0; i < op->num_results; i++) {
    if (!rng_chance(&g->rng, 30))
      continue;
    const eddy_type_t *t = generalize(g, op->results[i].type);
    eddy_ir_value_set_type(&op->results[i], t);
    // Loop values have one type in the results and both regions.
    for (uint32_t r = 0; loop && r < op->num_regions; r++)
      eddy_ir_value_set_type(eddy_ir_region_entry(&op->regions[r])->args[i],
                             t);
  }
  return EDDY_WALK_ADVANCE;
}

/// Makes some result and argument types less static than they could be, so
/// that shape-infer has something to do (and folders see dynamic types).
static void forget_shapes(gen_t *g, eddy_op_t *f) {
  eddy_ir_walk_pre(f, forget_op, g);
  const eddy_type_t *fty = eddy_ir_func_type(f);
  const eddy_type_t *in[8], *out[8];
  eddy_block_t *entry = eddy_ir_func_entry(f);
  for (uint32_t i = 0; i < fty->num_inputs; i++) {
    in[i] = rng_chance(&g->rng, 40) ? generalize(g, fty->inputs[i])
                                    : fty->inputs[i];
    eddy_ir_value_set_type(entry->args[i], in[i]);
  }
  for (uint32_t i = 0; i < fty->num_outputs; i++)
    out[i] = rng_chance(&g->rng, 40) ? generalize(g, fty->outputs[i])
                                     : fty->outputs[i];
  eddy_ir_func_set_type(f, eddy_ir_func_type_get(g->ctx, in, fty->num_inputs,
                                                 out, fty->num_outputs));
}

#endif
