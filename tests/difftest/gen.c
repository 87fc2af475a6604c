/// The program generator of the differential test (see gen.h).
///
/// Values are built top-down: gen_float(t) returns a value of the wanted
/// type t, made by some op whose operands are again wanted values, down to
/// leaves (a visible value of type t, a constant, or x reshaped by a
/// reduction or a product). Dims are static or D, the run-time row count of
/// x: values of dims D can only come from x, and every D is the same at run
/// time, so elementwise ops may mix them freely. Lengths that are not D (a
/// stacked list, a branch-dependent length) are consumed at once by a
/// reduction and never enter the pool.
#include "tests/difftest/gen.h"

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXR = 2, MAX_POOL = 512, MAX_INTS = 16, DYN = -1 };

typedef struct ty {
  eddy_dtype_t dt;
  int rank;
  int64_t d[MAXR]; ///< DYN: the program's D
} ty_t;

typedef struct entry {
  eddy_value_t *v;
  ty_t t;
} entry_t;

typedef struct gen {
  uint64_t rng;
  eddy_ctx_t *ctx;
  eddy_builder_t b;
  bool smooth;
  eddy_dtype_t f; ///< the program's float dtype
  int64_t k;      ///< x's column count
  eddy_value_t *x, *s, *n, *p;
  entry_t pool[MAX_POOL];
  size_t len;
  eddy_value_t *ints[MAX_INTS]; ///< visible i32 scalars in 0..3 (n, counters)
  size_t num_ints;
  int region_depth, loop_depth;
  int budget;
  eddy_status_t err; ///< the first build error
  jmp_buf fail;
} gen_t;

uint64_t dt_rng_next(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static int below(gen_t *g, int n) {
  return (int)(dt_rng_next(&g->rng) % (uint64_t)n);
}

static bool chance(gen_t *g, int percent) { return below(g, 100) < percent; }

static const eddy_type_t *type_of(gen_t *g, const ty_t *t) {
  int64_t dims[MAXR] = {0};
  for (int i = 0; i < t->rank; i++)
    dims[i] = t->d[i] == DYN ? EDDY_DIM_DYNAMIC : t->d[i];
  return eddy_ir_tensor_type_get(g->ctx, t->dt, t->rank, dims);
}

static bool is_static(const ty_t *t) {
  for (int i = 0; i < t->rank; i++)
    if (t->d[i] == DYN)
      return false;
  return true;
}

static bool same_ty(const ty_t *a, const ty_t *b) {
  if (a->dt != b->dt || a->rank != b->rank)
    return false;
  for (int i = 0; i < a->rank; i++)
    if (a->d[i] != b->d[i])
      return false;
  return true;
}

static ty_t scalar(eddy_dtype_t dt) { return (ty_t){.dt = dt}; }

static ty_t vec(eddy_dtype_t dt, int64_t n) {
  return (ty_t){.dt = dt, .rank = 1, .d = {n}};
}

static ty_t mat(eddy_dtype_t dt, int64_t r, int64_t c) {
  return (ty_t){.dt = dt, .rank = 2, .d = {r, c}};
}

static void check(gen_t *g, eddy_status_t st) {
  if (st) {
    g->err = st;
    longjmp(g->fail, 1);
  }
}

static void push(gen_t *g, eddy_value_t *v, const ty_t *t) {
  if (g->len < MAX_POOL)
    g->pool[g->len++] = (entry_t){v, *t};
}

static void push_int(gen_t *g, eddy_value_t *v) {
  if (g->num_ints < MAX_INTS)
    g->ints[g->num_ints++] = v;
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

static eddy_named_attr_t nbool(gen_t *g, const char *name, bool v) {
  return nattr(g, name, eddy_ir_bool_attr_get(g->ctx, v));
}

static eddy_named_attr_t ndtype(gen_t *g, eddy_dtype_t dt) {
  const char *s = eddy_dtype_name(dt);
  return nattr(g, "dtype", eddy_ir_string_attr_get(g->ctx, s, strlen(s)));
}

/// An op with inferred result types; its result 0.
static eddy_value_t *op(gen_t *g, const char *name, eddy_value_t **ops,
                        size_t n, const eddy_named_attr_t *attrs,
                        size_t num_attrs) {
  eddy_value_t *v = NULL;
  check(g, eddy_ir_build_simple(&g->b, name, ops, n, attrs, num_attrs, &v));
  g->budget--;
  return v;
}

static eddy_value_t *op1(gen_t *g, const char *name, eddy_value_t *a) {
  // A smooth program keeps tanh and sigmoid out of saturation (through
  // atan: |atan x| < pi/2). There their f32 gradients, 1 - y^2 and
  // y (1 - y), are off by about their own size (tanh(9): 0 or 1.2e-7 for
  // 6.1e-8), which the gradient check cannot tell from a wrong rule
  // (docs/reliability.md, "Run of 2026-11-29").
  if (g->smooth &&
      (strcmp(name, "core.tanh") == 0 || strcmp(name, "core.sigmoid") == 0))
    a = op(g, "core.atan", &a, 1, NULL, 0);
  return op(g, name, &a, 1, NULL, 0);
}

static eddy_value_t *op2(gen_t *g, const char *name, eddy_value_t *a,
                         eddy_value_t *b) {
  eddy_value_t *ops[2] = {a, b};
  return op(g, name, ops, 2, NULL, 0);
}

static eddy_op_t *op_full(gen_t *g, const char *name, eddy_value_t **ops,
                          size_t n, const eddy_named_attr_t *attrs,
                          size_t num_attrs, const eddy_type_t *const *rt,
                          size_t nres, size_t nregions) {
  eddy_op_state_t st = {.name = name,
                        .operands = ops,
                        .num_operands = n,
                        .attrs = attrs,
                        .num_attrs = num_attrs,
                        .result_types = rt,
                        .num_results = nres,
                        .num_regions = nregions};
  eddy_op_t *o = NULL;
  check(g, eddy_ir_build(&g->b, &st, &o));
  g->budget--;
  return o;
}

static void terminator(gen_t *g, const char *name, eddy_value_t **ops,
                       size_t n) {
  op_full(g, name, ops, n, NULL, 0, NULL, 0, 0);
}

static eddy_value_t *cast(gen_t *g, eddy_value_t *v, eddy_dtype_t dt) {
  eddy_named_attr_t a = ndtype(g, dt);
  return op(g, "core.cast", &v, 1, &a, 1);
}

/// A constant of static t: multiples of 1/8 in [-1.5, 1.5] (exact in every
/// float dtype), or integers in 0..3.
static eddy_value_t *constant(gen_t *g, const ty_t *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++)
    n *= t->d[i];
  double fv[16];
  int64_t iv[16];
  bool splat = n > 16 || chance(g, 20);
  size_t m = splat ? 1 : (size_t)n;
  for (size_t i = 0; i < m; i++) {
    fv[i] = (below(g, 25) - 12) / 8.0;
    iv[i] = below(g, 4);
  }
  const eddy_type_t *type = type_of(g, t);
  const eddy_attr_t *a = eddy_dtype_is_float(t->dt)
                             ? eddy_ir_dense_attr_from_f64(g->ctx, type, fv, m)
                             : eddy_ir_dense_attr_from_i64(g->ctx, type, iv, m);
  eddy_value_t *v = NULL;
  check(g, eddy_ir_build_constant(&g->b, a, &v));
  g->budget--;
  return v;
}

static eddy_value_t *const_f(gen_t *g, double x) {
  ty_t t = scalar(g->f);
  const eddy_attr_t *a =
      eddy_ir_dense_attr_from_f64(g->ctx, type_of(g, &t), &x, 1);
  eddy_value_t *v = NULL;
  check(g, eddy_ir_build_constant(&g->b, a, &v));
  return v;
}

static eddy_value_t *const_i(gen_t *g, int64_t x) {
  ty_t t = scalar(EDDY_DT_I32);
  const eddy_attr_t *a =
      eddy_ir_dense_attr_from_i64(g->ctx, type_of(g, &t), &x, 1);
  eddy_value_t *v = NULL;
  check(g, eddy_ir_build_constant(&g->b, a, &v));
  return v;
}

/// ---- Integers and predicates ------------------------------------------------

/// A visible i32 scalar in 0..3: n or a loop counter.
static eddy_value_t *some_int(gen_t *g) {
  return g->ints[below(g, (int)g->num_ints)];
}

/// A trip count in 0..4 computed from the data: n, D, counters.
static eddy_value_t *trip_count(gen_t *g) {
  switch (below(g, 7)) {
  case 0:
    return some_int(g);
  case 1: { // min(i + c, 3)
    eddy_value_t *a = op2(g, "core.add", some_int(g), const_i(g, below(g, 3)));
    return op2(g, "core.minimum", a, const_i(g, 3));
  }
  case 2: // (i * c + c2) rem 4
    return op2(g, "core.rem",
               op2(g, "core.add",
                   op2(g, "core.mul", some_int(g), const_i(g, 1 + below(g, 3))),
                   const_i(g, below(g, 4))),
               const_i(g, 4));
  case 3: { // D, the rows of x
    eddy_named_attr_t a = nint(g, "index", 0);
    eddy_value_t *x = g->x;
    return cast(g, op(g, "core.dim", &x, 1, &a, 1), EDDY_DT_I32);
  }
  case 4: // 3 - i
    return op2(g, "core.sub", const_i(g, 3), some_int(g));
  case 5: // zero trips now and then, whatever the data
    return const_i(g, below(g, 2));
  default: // max(i - c, 0)
    return op2(g, "core.maximum",
               op2(g, "core.sub", some_int(g), const_i(g, 1 + below(g, 2))),
               const_i(g, 0));
  }
}

/// A scalar predicate from p or the integers only.
static eddy_value_t *predicate(gen_t *g) {
  static const char *cmp[] = {"core.lt", "core.le", "core.gt", "core.ge"};
  const char *c = cmp[below(g, 4)];
  switch (below(g, 4)) {
  case 0:
  case 1: // p against a threshold that p's values never equal
    return op2(g, c, g->p, const_f(g, (below(g, 9) - 4) / 4.0 + 0.0625));
  case 2:
    return op2(g, c, some_int(g), const_i(g, below(g, 4)));
  default:
    return op2(g, "core.eq",
               op2(g, "core.rem", some_int(g), const_i(g, 2)), const_i(g, 0));
  }
}

/// ---- Floats ------------------------------------------------------------------

static eddy_value_t *gen_float(gen_t *g, const ty_t *t, int depth);

static eddy_value_t *find(gen_t *g, const ty_t *t) {
  size_t hits = 0;
  for (size_t i = 0; i < g->len; i++)
    hits += same_ty(&g->pool[i].t, t);
  if (!hits)
    return NULL;
  size_t k = (size_t)below(g, (int)hits);
  for (size_t i = 0; i < g->len; i++)
    if (same_ty(&g->pool[i].t, t) && k-- == 0)
      return g->pool[i].v;
  return NULL;
}

/// x turned into t: the only source of D.
static eddy_value_t *from_x(gen_t *g, const ty_t *t) {
  eddy_value_t *x = g->x;
  if (t->rank == 0 || (t->rank == 1 && t->d[0] != DYN)) {
    // sum over rows (and columns): D enters a static value.
    int64_t axes[2] = {0, 1};
    eddy_named_attr_t a = nints(g, "axes", axes, t->rank == 0 ? 2 : 1);
    eddy_value_t *r = op(g, chance(g, 50) ? "core.reduce_mean"
                                          : "core.reduce_sum",
                         &x, 1, &a, 1);
    if (t->rank == 1 && t->d[0] != g->k) { // [k] -> [n] by a product
      eddy_value_t *r2 = NULL;
      int64_t shape[2] = {1, g->k};
      eddy_named_attr_t sa = nints(g, "shape", shape, 2);
      r2 = op(g, "core.reshape", &r, 1, &sa, 1);
      ty_t wt = mat(g->f, g->k, t->d[0]);
      eddy_value_t *pr = op2(g, "core.matmul", r2, constant(g, &wt));
      int64_t s1[1] = {t->d[0]};
      eddy_named_attr_t sb = nints(g, "shape", s1, 1);
      return op(g, "core.reshape", &pr, 1, &sb, 1);
    }
    return r;
  }
  if (t->rank == 1) { // [D]
    int64_t ax = 1;
    eddy_named_attr_t a = nints(g, "axes", &ax, 1);
    return op(g, chance(g, 50) || g->smooth ? "core.reduce_sum"
                                             : "core.reduce_max",
              &x, 1, &a, 1);
  }
  if (t->d[0] == DYN && t->d[1] == DYN) // x x^T
    return op(g, "core.matmul", (eddy_value_t *[]){x, x}, 2,
              (eddy_named_attr_t[]){nbool(g, "transpose_b", true)}, 1);
  if (t->d[0] == DYN) {
    if (t->d[1] == g->k && chance(g, 50))
      return x;
    ty_t wt = mat(g->f, g->k, t->d[1]);
    return op2(g, "core.matmul", x, constant(g, &wt));
  }
  if (t->d[1] == DYN) { // [k, D]: transpose of [D, k]
    ty_t s = mat(g->f, DYN, t->d[0]);
    eddy_value_t *v = from_x(g, &s);
    int64_t perm[2] = {1, 0};
    eddy_named_attr_t a = nints(g, "perm", perm, 2);
    return op(g, "core.transpose", &v, 1, &a, 1);
  }
  // static [a, b]: x^T w, w of [D, b], then [a, k] times that
  ty_t wt = mat(g->f, DYN, t->d[1]);
  eddy_value_t *w = from_x(g, &wt);
  eddy_named_attr_t ta = nbool(g, "transpose_a", true);
  eddy_value_t *xw = op(g, "core.matmul", (eddy_value_t *[]){x, w}, 2, &ta, 1);
  if (t->d[0] == g->k)
    return xw;
  ty_t ct = mat(g->f, t->d[0], g->k);
  return op2(g, "core.matmul", constant(g, &ct), xw);
}

static eddy_value_t *leaf(gen_t *g, const ty_t *t) {
  eddy_value_t *v = chance(g, 70) ? find(g, t) : NULL;
  if (v)
    return v;
  if (is_static(t) && chance(g, 75))
    return constant(g, t);
  return from_x(g, t);
}

/// |v| + 1 or v^2 + 1: >= 1, for log, sqrt, rsqrt, division and pow.
static eddy_value_t *positive(gen_t *g, eddy_value_t *v) {
  eddy_value_t *a = op1(g, g->smooth || chance(g, 50) ? "core.square"
                                                      : "core.abs", v);
  return op2(g, "core.add", a, const_f(g, 1.0));
}

static eddy_value_t *gen_unary(gen_t *g, const ty_t *t, int depth) {
  static const char *safe[] = {"core.neg", "core.tanh", "core.sigmoid",
                               "core.sin", "core.cos",  "core.atan",
                               "core.erf", "core.square"};
  static const char *kinks[] = {"core.abs", "core.relu"};
  eddy_value_t *x = gen_float(g, t, depth + 1);
  int k = below(g, 16);
  if (k < 8)
    return op1(g, safe[k], x);
  if (k < 10 && !g->smooth)
    return op1(g, kinks[k - 8], x);
  switch (k) {
  case 10:
    return op1(g, chance(g, 50) ? "core.exp" : "core.expm1",
               op1(g, "core.tanh", x));
  case 11:
    return op1(g, "core.log", positive(g, x));
  case 12:
    return op1(g, "core.sqrt", positive(g, x));
  case 13:
    return op1(g, "core.rsqrt", positive(g, x));
  case 14:
    return op1(g, "core.log1p", op1(g, "core.square", x));
  default:
    return op1(g, "core.tanh", x);
  }
}

/// The other operand of a binary op with t: t itself, a scalar, or (rank 2)
/// a row that broadcasts.
static ty_t partner(gen_t *g, const ty_t *t) {
  int k = below(g, 10);
  if (k < 6 || t->rank == 0)
    return *t;
  if (k < 8)
    return scalar(t->dt);
  return t->rank == 2 ? vec(t->dt, t->d[1]) : *t;
}

static eddy_value_t *gen_binary(gen_t *g, const ty_t *t, int depth) {
  ty_t pt = partner(g, t);
  eddy_value_t *a = gen_float(g, t, depth + 1);
  eddy_value_t *b = gen_float(g, &pt, depth + 1);
  if (chance(g, 50)) { // the full operand second
    eddy_value_t *tmp = a;
    if (!same_ty(&pt, t) && chance(g, 50)) {
      a = b;
      b = tmp;
    }
  }
  int k = below(g, 10);
  switch (k) {
  case 0:
  case 1:
    return op2(g, "core.add", a, b);
  case 2:
    return op2(g, "core.sub", a, b);
  case 3:
  case 4:
    return op2(g, "core.mul", a, b);
  case 5:
    return op2(g, "core.div", a, positive(g, b));
  case 6: // base >= 1, exponent in [-1, 1]
    return op2(g, "core.pow", positive(g, a), op1(g, "core.tanh", b));
  case 7:
    return op2(g, "core.atan2", a, positive(g, b));
  default:
    if (g->smooth)
      return op2(g, "core.add", a, b);
    return op2(g, k == 8 ? "core.maximum" : "core.minimum", a, b);
  }
}

static eddy_value_t *gen_select(gen_t *g, const ty_t *t, int depth) {
  eddy_value_t *ops[3] = {predicate(g), gen_float(g, t, depth + 1),
                          gen_float(g, t, depth + 1)};
  return op(g, "core.select", ops, 3, NULL, 0);
}

/// t with one more dim, of size d, at pos.
static ty_t with_dim(const ty_t *t, int pos, int64_t d) {
  ty_t s = *t;
  s.rank = t->rank + 1;
  for (int i = t->rank; i > pos; i--)
    s.d[i] = t->d[i - 1];
  s.d[pos] = d;
  return s;
}

/// t from a source with one more dim, reduced away.
static eddy_value_t *gen_reduce(gen_t *g, const ty_t *t, int depth) {
  static const char *names[] = {"core.reduce_sum", "core.reduce_mean",
                                "core.reduce_max", "core.reduce_min",
                                "core.reduce_prod"};
  if (t->rank >= MAXR)
    return NULL;
  int64_t extra = chance(g, 40) ? DYN : 1 + below(g, 3);
  int pos = below(g, t->rank + 1);
  ty_t s = with_dim(t, pos, extra);
  eddy_value_t *x = gen_float(g, &s, depth + 1);
  int64_t ax = chance(g, 30) ? pos - s.rank : pos;
  eddy_named_attr_t a = nints(g, "axes", &ax, 1);
  const char *name = names[below(g, g->smooth ? 2 : 5)];
  if (strcmp(name, "core.reduce_prod") == 0) // bounded factors
    x = op1(g, "core.tanh", x);
  return op(g, name, &x, 1, &a, 1);
}

static eddy_value_t *gen_matmul(gen_t *g, const ty_t *t, int depth) {
  if (t->rank != 2)
    return NULL;
  int64_t k = chance(g, 30) ? DYN : 1 + below(g, 3);
  bool ta = chance(g, 30), tb = chance(g, 30);
  ty_t a = ta ? mat(t->dt, k, t->d[0]) : mat(t->dt, t->d[0], k);
  ty_t b = tb ? mat(t->dt, t->d[1], k) : mat(t->dt, k, t->d[1]);
  eddy_value_t *ops[2] = {gen_float(g, &a, depth + 1),
                          gen_float(g, &b, depth + 1)};
  eddy_named_attr_t at[2] = {nbool(g, "transpose_a", ta),
                             nbool(g, "transpose_b", tb)};
  return op(g, "core.matmul", ops, 2, at, 2);
}

static eddy_value_t *gen_transpose(gen_t *g, const ty_t *t, int depth) {
  if (t->rank != 2)
    return NULL;
  ty_t s = mat(t->dt, t->d[1], t->d[0]);
  eddy_value_t *x = gen_float(g, &s, depth + 1);
  int64_t perm[2] = {1, 0};
  eddy_named_attr_t a = nints(g, "perm", perm, 2);
  return op(g, "core.transpose", &x, 1, &a, 1);
}

/// Movement ops on static dims: concat, slice, reshape, broadcast_to.
static eddy_value_t *gen_movement(gen_t *g, const ty_t *t, int depth) {
  if (t->rank == 0)
    return NULL;
  int ax = t->rank - 1;
  if (t->d[ax] == DYN)
    return NULL;
  int k = below(g, 4);
  if (k == 0 && t->d[ax] >= 2) { // concat along the last axis
    ty_t a = *t, b = *t;
    a.d[ax] = 1 + below(g, (int)t->d[ax] - 1);
    b.d[ax] = t->d[ax] - a.d[ax];
    eddy_value_t *ops[2] = {gen_float(g, &a, depth + 1),
                            gen_float(g, &b, depth + 1)};
    eddy_named_attr_t at = nint(g, "axis", ax);
    return op(g, "core.concat", ops, 2, &at, 1);
  }
  if (k == 1 && is_static(t)) { // a slice of something bigger
    ty_t s = *t;
    int64_t start[MAXR], limit[MAXR];
    for (int i = 0; i < t->rank; i++) {
      start[i] = below(g, 2);
      s.d[i] = t->d[i] + start[i] + below(g, 2);
      limit[i] = start[i] + t->d[i];
    }
    eddy_value_t *x = gen_float(g, &s, depth + 1);
    eddy_named_attr_t at[2] = {nints(g, "start", start, (size_t)t->rank),
                               nints(g, "limit", limit, (size_t)t->rank)};
    return op(g, "core.slice", &x, 1, at, 2);
  }
  if (k == 2 && is_static(t)) { // reshape from the flat vector
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++)
      n *= t->d[i];
    ty_t s = vec(t->dt, n);
    eddy_value_t *x = gen_float(g, &s, depth + 1);
    eddy_named_attr_t at = nints(g, "shape", t->d, (size_t)t->rank);
    return op(g, "core.reshape", &x, 1, &at, 1);
  }
  if (k == 3 && is_static(t)) { // broadcast_to from a row or a scalar
    ty_t s = t->rank == 2 && chance(g, 50) ? vec(t->dt, t->d[1])
                                           : scalar(t->dt);
    eddy_value_t *x = gen_float(g, &s, depth + 1);
    eddy_named_attr_t at = nints(g, "shape", t->d, (size_t)t->rank);
    return op(g, "core.broadcast_to", &x, 1, &at, 1);
  }
  return NULL;
}

/// A float scalar from the integers (a count or a length).
static eddy_value_t *gen_from_int(gen_t *g, const ty_t *t) {
  if (t->rank != 0)
    return NULL;
  return op2(g, "core.mul", cast(g, some_int(g), t->dt),
             const_f(g, (below(g, 5) + 1) / 4.0));
}

/// ---- Control flow ------------------------------------------------------------

typedef struct saved {
  eddy_block_t *block;
  eddy_op_t *before;
  size_t len, num_ints;
} saved_t;

static saved_t enter(gen_t *g, eddy_block_t *b) {
  saved_t s = {g->b.block, g->b.before, g->len, g->num_ints};
  eddy_ir_builder_set_end(&g->b, b);
  g->region_depth++;
  return s;
}

static void leave(gen_t *g, saved_t s) {
  g->b.block = s.block;
  g->b.before = s.before;
  g->len = s.len;
  g->num_ints = s.num_ints;
  g->region_depth--;
}

/// ctl.if on a data predicate with one or two results (the first of type
/// t); now and then a second result whose length depends on the branch,
/// consumed by a sum.
static eddy_value_t *gen_if(gen_t *g, const ty_t *t, int depth) {
  if (g->region_depth >= 4)
    return NULL;
  eddy_value_t *pred = predicate(g);
  bool ragged = chance(g, 30);
  int64_t dyn = EDDY_DIM_DYNAMIC;
  const eddy_type_t *rt[2] = {
      type_of(g, t), eddy_ir_tensor_type_get(g->ctx, g->f, 1, &dyn)};
  eddy_op_t *o = op_full(g, "ctl.if", &pred, 1, NULL, 0, rt, ragged ? 2 : 1,
                         2);
  for (int r = 0; r < 2; r++) {
    saved_t sv = enter(g, eddy_ir_region_add_block(&o->regions[r]));
    eddy_value_t *ys[2] = {gen_float(g, t, depth + 2), NULL};
    if (ragged) {
      ty_t lt = vec(g->f, below(g, 4));
      ys[1] = gen_float(g, &lt, depth + 2);
    }
    terminator(g, "ctl.yield", ys, ragged ? 2 : 1);
    leave(g, sv);
  }
  eddy_value_t *res = &o->results[0];
  push(g, res, t);
  if (ragged && t->rank == 0) {
    int64_t ax = 0;
    eddy_named_attr_t a = nints(g, "axes", &ax, 1);
    eddy_value_t *r1 = &o->results[1];
    eddy_value_t *sum = op(g, "core.reduce_sum", &r1, 1, &a, 1);
    return op2(g, "core.add", res, sum);
  }
  return res;
}

/// What a loop does with a TensorList.
typedef enum list_kind {
  L_NONE,
  L_PUSH,     ///< tl.empty, push per iteration, stack after
  L_SET,      ///< tl.reserve(trips), set_item at the counter, stack after
  L_POP,      ///< push, then pop guarded by a ctl.if on the length
  L_NESTED,   ///< a list of lists: an inner loop's list pushed per iteration
  L_COUNT_
} list_kind_t;

/// A [k] element for a list, k static.
static eddy_value_t *list_elem(gen_t *g, const ty_t *et, int depth) {
  return op1(g, "core.tanh", gen_float(g, et, depth + 2));
}

/// Sums a stacked list [?, k] over its rows into a pool value [k].
static eddy_value_t *consume_stack(gen_t *g, eddy_value_t *list,
                                   const ty_t *et) {
  eddy_value_t *st = op1(g, "tl.stack", list);
  int64_t ax = 0;
  eddy_named_attr_t a = nints(g, "axes", &ax, 1);
  eddy_value_t *s = op(g, "core.reduce_sum", &st, 1, &a, 1);
  push(g, s, et);
  return s;
}

static eddy_value_t *gen_while(gen_t *g, const ty_t *t, int depth);

/// The cond region of loop w over n values of types rt, value 0 the
/// counter: `counter < trip`, and with `second` a data predicate too.
static void counter_cond(gen_t *g, eddy_op_t *w, const eddy_type_t *const *rt,
                         size_t n, eddy_value_t *trip, bool second) {
  eddy_block_t *b = eddy_ir_region_add_block(&w->regions[0]);
  saved_t sv = enter(g, b);
  eddy_value_t *i = eddy_ir_block_add_arg(b, rt[0]);
  for (size_t k = 1; k < n; k++)
    eddy_ir_block_add_arg(b, rt[k]);
  eddy_value_t *c = op2(g, "core.lt", i, trip);
  if (second)
    c = op2(g, "core.and", c, predicate(g));
  terminator(g, "ctl.condition", &c, 1);
  leave(g, sv);
}

/// Enters the body region of loop w; its n arguments go to args.
static saved_t enter_body(gen_t *g, eddy_op_t *w, const eddy_type_t *const *rt,
                          size_t n, eddy_value_t **args) {
  saved_t sv = enter(g, eddy_ir_region_add_block(&w->regions[1]));
  for (size_t k = 0; k < n; k++)
    args[k] = eddy_ir_block_add_arg(g->b.block, rt[k]);
  return sv;
}

/// Inner loop of L_NESTED: a fresh list with one push per inner trip
/// (bounded by the outer counter).
static eddy_value_t *inner_list(gen_t *g, const ty_t *et, eddy_value_t *outer_i,
                                int depth) {
  const eddy_type_t *lt = eddy_ir_list_type_get(g->ctx, type_of(g, et));
  eddy_value_t *l0 = &op_full(g, "tl.empty", NULL, 0, NULL, 0, &lt, 1, 0)
                          ->results[0];
  eddy_value_t *trip = op2(g, "core.minimum",
                           op2(g, "core.add", outer_i, const_i(g, below(g, 2))),
                           const_i(g, 3));
  const eddy_type_t *rt[2] = {eddy_ir_scalar_type_get(g->ctx, EDDY_DT_I32),
                              lt};
  eddy_value_t *inits[2] = {const_i(g, 0), l0};
  eddy_op_t *w = op_full(g, "ctl.while", inits, 2, NULL, 0, rt, 2, 2);
  g->loop_depth++;
  counter_cond(g, w, rt, 2, trip, false);
  {
    eddy_value_t *args[2];
    saved_t sv = enter_body(g, w, rt, 2, args);
    eddy_value_t *i = args[0], *l = args[1];
    push_int(g, i);
    eddy_value_t *e = list_elem(g, et, depth);
    eddy_value_t *next[2] = {op2(g, "core.add", i, const_i(g, 1)),
                             op2(g, "tl.push_back", l, e)};
    terminator(g, "ctl.yield", next, 2);
    leave(g, sv);
  }
  g->loop_depth--;
  return &w->results[1];
}

/// A bounded ctl.while: a counter, a value of type t (each new value is
/// squashed by tanh, so that values stay bounded whatever the trip count),
/// and maybe a TensorList; the trip count comes from the data, zero
/// included.
static eddy_value_t *gen_while(gen_t *g, const ty_t *t, int depth) {
  if (g->loop_depth >= 2 || g->region_depth >= 4)
    return NULL;
  list_kind_t lk = (list_kind_t)below(g, L_COUNT_);
  if (lk == L_NESTED && g->loop_depth > 0) // lists of lists at the top
    lk = L_PUSH;
  ty_t et = vec(g->f, 1 + below(g, 3));
  eddy_value_t *trip = trip_count(g);
  eddy_value_t *init = gen_float(g, t, depth + 1);
  const eddy_type_t *et_type = type_of(g, &et);
  const eddy_type_t *lt = eddy_ir_list_type_get(
      g->ctx, lk == L_NESTED ? eddy_ir_list_type_get(g->ctx, et_type)
                             : et_type);
  eddy_value_t *l0 = NULL;
  if (lk == L_SET) {
    l0 = &op_full(g, "tl.reserve", &trip, 1, NULL, 0, &lt, 1, 0)->results[0];
  } else if (lk != L_NONE) {
    eddy_named_attr_t a = nint(g, "max_elements", 8);
    l0 = &op_full(g, "tl.empty", NULL, 0, &a, chance(g, 30) ? 1 : 0, &lt, 1,
                  0)
              ->results[0];
    if (lk == L_NESTED) { // one inner list before the loop: never empty
      const eddy_type_t *it = eddy_ir_list_type_get(g->ctx, et_type);
      eddy_value_t *i0 =
          &op_full(g, "tl.empty", NULL, 0, NULL, 0, &it, 1, 0)->results[0];
      if (chance(g, 50))
        i0 = op2(g, "tl.push_back", i0, list_elem(g, &et, depth));
      l0 = op2(g, "tl.push_back", l0, i0);
    }
  }
  size_t n = lk == L_NONE ? 2 : 3;
  const eddy_type_t *rt[3] = {eddy_ir_scalar_type_get(g->ctx, EDDY_DT_I32),
                              type_of(g, t), lt};
  eddy_value_t *inits[3] = {const_i(g, 0), init, l0};
  eddy_named_attr_t at[1];
  size_t nat = 0;
  if (chance(g, 15))
    at[nat++] = nint(g, "maximum_iterations", below(g, 3));
  eddy_op_t *w = op_full(g, "ctl.while", inits, n, at, nat, rt, n, 2);
  g->loop_depth++;
  counter_cond(g, w, rt, n, trip, chance(g, 15)); // 15%: a data predicate too
  {
    eddy_value_t *args[3];
    saved_t sv = enter_body(g, w, rt, n, args);
    push_int(g, args[0]);
    push(g, args[1], t);
    eddy_value_t *next[3] = {op2(g, "core.add", args[0], const_i(g, 1)), NULL,
                             NULL};
    eddy_value_t *v = gen_float(g, t, depth + 2);
    if (chance(g, 50)) // v/2 + tanh(..)/2: the old value kept in part
      v = op2(g, "core.add", op2(g, "core.mul", args[1], const_f(g, 0.5)),
              op2(g, "core.mul", op1(g, "core.tanh", v), const_f(g, 0.5)));
    else
      v = op1(g, "core.tanh", v);
    next[1] = v;
    switch (lk) {
    case L_PUSH:
      next[2] = op2(g, "tl.push_back", args[2], list_elem(g, &et, depth));
      break;
    case L_SET: {
      eddy_value_t *ops[3] = {args[2], args[0], list_elem(g, &et, depth)};
      next[2] = op(g, "tl.set_item", ops, 3, NULL, 0);
      break;
    }
    case L_POP: {
      // push one, then pop one when the list is long enough: the list
      // grows every other iteration.
      eddy_value_t *l = op2(g, "tl.push_back", args[2],
                            list_elem(g, &et, depth));
      eddy_value_t *len = op1(g, "tl.length", l);
      eddy_value_t *pred = op2(
          g, "core.gt", len,
          cast(g, op2(g, "core.rem", args[0], const_i(g, 2)), EDDY_DT_I64));
      const eddy_type_t *irt[2] = {lt, et_type};
      eddy_op_t *iff = op_full(g, "ctl.if", &pred, 1, NULL, 0, irt, 2, 2);
      for (int r = 0; r < 2; r++) {
        saved_t s2 = enter(g, eddy_ir_region_add_block(&iff->regions[r]));
        eddy_value_t *ys[2];
        if (r == 0) {
          eddy_op_t *pop = op_full(g, "tl.pop_back", &l, 1, NULL, 0, NULL, 0,
                                   0);
          ys[0] = &pop->results[0];
          ys[1] = &pop->results[1];
        } else {
          ys[0] = l;
          ys[1] = constant(g, &et);
        }
        terminator(g, "ctl.yield", ys, 2);
        leave(g, s2);
      }
      next[2] = &iff->results[0];
      push(g, &iff->results[1], &et);
      break;
    }
    case L_NESTED:
      next[2] = op2(g, "tl.push_back", args[2],
                    inner_list(g, &et, args[0], depth));
      break;
    default:
      break;
    }
    terminator(g, "ctl.yield", next, n);
    leave(g, sv);
  }
  g->loop_depth--;
  eddy_value_t *res = &w->results[1];
  push(g, res, t);
  if (lk == L_NONE)
    return res;
  eddy_value_t *l = &w->results[2];
  if (lk == L_NESTED) {
    // the last inner list, stacked and summed; and the outer length.
    eddy_value_t *last = op2(g, "core.sub", op1(g, "tl.length", l),
                             cast(g, const_i(g, 1), EDDY_DT_I64));
    eddy_value_t *inner = op2(g, "tl.get_item", l, last);
    consume_stack(g, inner, &et);
    return res;
  }
  if (chance(g, 70))
    consume_stack(g, l, &et);
  else
    push(g, cast(g, op1(g, "tl.length", l), g->f), &(ty_t){.dt = g->f});
  return res;
}

/// An i32 vector constant of n indices in [0, bound).
static eddy_value_t *index_vector(gen_t *g, int64_t n, int64_t bound) {
  int64_t v[8];
  for (int64_t i = 0; i < n; i++)
    v[i] = below(g, (int)bound);
  const eddy_type_t *type = eddy_ir_tensor_type_get(g->ctx, EDDY_DT_I32, 1, &n);
  eddy_value_t *c = NULL;
  check(g, eddy_ir_build_constant(
               &g->b, eddy_ir_dense_attr_from_i64(g->ctx, type, v, (size_t)n),
               &c));
  return c;
}

/// Indexing and data movement: a gather at a data index, a scatter of
/// constant indices (repeated ones sum), cumsum and cumprod, reverse, pad
/// and split.
static eddy_value_t *gen_indexed(gen_t *g, const ty_t *t, int depth) {
  if (t->rank == 0)
    return NULL;
  int ax = below(g, t->rank);
  int64_t a[1] = {ax};
  switch (below(g, 6)) {
  case 0: { // gather: one more dim of R rows at ax, read at n or a counter
    if (t->rank >= MAXR)
      return NULL;
    int64_t rows = 1 + below(g, 4);
    int pos = below(g, t->rank + 1);
    ty_t s = with_dim(t, pos, rows);
    eddy_value_t *ops[2] = {gen_float(g, &s, depth + 1),
                            op2(g, "core.rem", some_int(g), const_i(g, rows))};
    eddy_named_attr_t at = nint(g, "axis", pos);
    return op(g, "core.gather", ops, 2, &at, 1);
  }
  case 1: { // scatter along axis 0 into a static size
    if (t->d[0] == DYN || t->d[0] == 0)
      return NULL;
    int64_t m = 1 + below(g, 4);
    ty_t u = *t;
    u.d[0] = m;
    eddy_value_t *ops[2] = {index_vector(g, m, t->d[0]),
                            gen_float(g, &u, depth + 1)};
    eddy_named_attr_t at[2] = {nint(g, "axis", 0), nint(g, "size", t->d[0])};
    return op(g, "core.scatter", ops, 2, at, 2);
  }
  case 2: { // cumsum, or cumprod of bounded factors
    bool prod = chance(g, 40);
    eddy_value_t *x = gen_float(g, t, depth + 1);
    if (prod)
      x = op1(g, "core.tanh", x);
    eddy_named_attr_t at[3] = {nint(g, "axis", ax),
                               nbool(g, "exclusive", chance(g, 30)),
                               nbool(g, "reverse", chance(g, 30))};
    return op(g, prod ? "core.cumprod" : "core.cumsum", &x, 1, at, 3);
  }
  case 3: { // reverse
    eddy_value_t *x = gen_float(g, t, depth + 1);
    eddy_named_attr_t at = nints(g, "axes", a, 1);
    return op(g, "core.reverse", &x, 1, &at, 1);
  }
  case 4: { // pad a smaller static operand
    if (!is_static(t))
      return NULL;
    ty_t s = *t;
    int64_t lo[MAXR], hi[MAXR];
    for (int i = 0; i < t->rank; i++) {
      lo[i] = below(g, (int)t->d[i] + 1);
      hi[i] = below(g, (int)(t->d[i] - lo[i]) + 1);
      s.d[i] = t->d[i] - lo[i] - hi[i];
    }
    ty_t st = scalar(t->dt);
    eddy_value_t *ops[2] = {gen_float(g, &s, depth + 1),
                            gen_float(g, &st, depth + 1)};
    eddy_named_attr_t at[2] = {nints(g, "low", lo, (size_t)t->rank),
                               nints(g, "high", hi, (size_t)t->rank)};
    return op(g, "core.pad", ops, 2, at, 2);
  }
  default: { // one part of a split
    if (t->d[ax] == DYN)
      return NULL;
    int64_t k = 1 + below(g, 3);
    ty_t s = *t;
    s.d[ax] = t->d[ax] * k;
    eddy_value_t *x = gen_float(g, &s, depth + 1);
    const eddy_type_t *rt[3];
    for (int64_t i = 0; i < k; i++)
      rt[i] = type_of(g, t);
    eddy_named_attr_t at[2] = {nint(g, "axis", ax), nint(g, "num_splits", k)};
    eddy_op_t *sp = op_full(g, "core.split", &x, 1, at, 2, rt, (size_t)k, 0);
    return &sp->results[below(g, (int)k)];
  }
  }
}

/// [B, N] (static, B > t's rows) brought to t: rows sliced, or summed.
static eddy_value_t *rows_to(gen_t *g, eddy_value_t *v, int64_t rows,
                             const ty_t *t) {
  if (t->rank == 2) {
    int64_t start[2] = {below(g, (int)(rows - t->d[0] + 1)), 0};
    int64_t limit[2] = {start[0] + t->d[0], t->d[1]};
    eddy_named_attr_t at[2] = {nints(g, "start", start, 2),
                               nints(g, "limit", limit, 2)};
    return op(g, "core.slice", &v, 1, at, 2);
  }
  int64_t axes[2] = {0, 1};
  eddy_named_attr_t a = nints(g, "axes", axes, t->rank == 0 ? 2 : 1);
  return op(g, chance(g, 50) ? "core.reduce_sum" : "core.reduce_mean", &v, 1,
            &a, 1);
}

/// A loop over the row blocks of a static [T, B, K] tensor, read at the
/// counter (core.gather on axis 0, or tl.get_item of tl.from_tensor), each
/// multiplied by a loop-invariant weight: the patterns of the passes of
/// `eddy compile` (ir/passes/passes.h), so that the compiled executions
/// after them have work. Iterations independent, their results set in a
/// tl.reserve'd list at the counter (map-batch, with a constant trip
/// count), or a carried [B, N] state (an RNN: gemm-hoist; row-split at the
/// top level, B >= 16 rows); near misses: trip counts from the data,
/// batches of 1 to 3 rows, nested loops.
static eddy_value_t *gen_scan(gen_t *g, const ty_t *t, int depth) {
  if (!is_static(t) || g->loop_depth >= 2 || g->region_depth >= 4)
    return NULL;
  static const int64_t k_rows[] = {1, 3, 16, 17, 24, 32};
  int64_t b = k_rows[below(g, 6)];
  if (t->rank == 2 && t->d[0] > 32)
    return NULL;
  if (t->rank == 2 && b < t->d[0])
    b = t->d[0];
  int64_t nn = t->rank == 2   ? t->d[1]
               : t->rank == 1 ? t->d[0]
                              : 1 + below(g, 4);
  int64_t kk = 1 + below(g, 4);
  bool map = chance(g, 50), constant_trips = chance(g, 60);
  int64_t trips = 1 + below(g, 4); // a data trip count is 0..3
  int64_t rows = constant_trips ? trips : 4;
  // xs: [rows * B, K] reshaped to [rows, B, K]
  ty_t st = mat(g->f, rows * b, kk);
  eddy_value_t *xs = gen_float(g, &st, depth + 1);
  int64_t shape[3] = {rows, b, kk};
  eddy_named_attr_t sa = nints(g, "shape", shape, 3);
  xs = op(g, "core.reshape", &xs, 1, &sa, 1);
  bool gather = chance(g, 50);
  eddy_value_t *src = gather ? xs : op1(g, "tl.from_tensor", xs);
  ty_t wt = mat(g->f, kk, nn), ut = mat(g->f, nn, nn), ht = mat(g->f, b, nn);
  eddy_value_t *w = gen_float(g, &wt, depth + 1);
  eddy_value_t *u = map ? NULL : gen_float(g, &ut, depth + 1);
  eddy_value_t *h0 = map ? NULL : gen_float(g, &ht, depth + 1);
  eddy_value_t *trip = constant_trips ? const_i(g, trips) : trip_count(g);
  const eddy_type_t *lt = eddy_ir_list_type_get(g->ctx, type_of(g, &ht));
  eddy_value_t *l0 =
      map || chance(g, 30)
          ? &op_full(g, "tl.reserve", &trip, 1, NULL, 0, &lt, 1, 0)->results[0]
          : NULL;
  const eddy_type_t *rt[3] = {eddy_ir_scalar_type_get(g->ctx, EDDY_DT_I32), lt,
                              type_of(g, &ht)};
  eddy_value_t *inits[3] = {const_i(g, 0), l0, h0};
  size_t n = 1;
  if (l0)
    n++;
  if (h0) { // the state takes the list's place when there is none
    rt[n] = rt[2];
    inits[n++] = h0;
  }
  eddy_op_t *loop = op_full(g, "ctl.while", inits, n, NULL, 0, rt, n, 2);
  g->loop_depth++;
  counter_cond(g, loop, rt, n, trip, false);
  {
    eddy_value_t *args[3];
    saved_t sv = enter_body(g, loop, rt, n, args);
    eddy_value_t *h = h0 ? args[n - 1] : NULL;
    eddy_named_attr_t ax = nint(g, "axis", 0);
    eddy_value_t *gops[2] = {src, args[0]};
    eddy_value_t *x = gather ? op(g, "core.gather", gops, 2, &ax, 1)
                             : op2(g, "tl.get_item", src, args[0]);
    eddy_value_t *p = op2(g, "core.matmul", x, w);
    if (h)
      p = op2(g, "core.add", p, op2(g, "core.matmul", h, u));
    push(g, p, &ht);
    if (h)
      push(g, h, &ht);
    // the rest of the step: random elementwise work on the rows now and
    // then (which may read what the passes cannot batch or split).
    eddy_value_t *y = chance(g, 30) ? gen_float(g, &ht, depth + 2)
                      : chance(g, 50)
                          ? op2(g, "core.mul", p, op1(g, "core.sigmoid", p))
                          : p;
    y = op1(g, "core.tanh", y);
    if (h && chance(g, 50)) // h/2 + y/2
      y = op2(g, "core.add", op2(g, "core.mul", h, const_f(g, 0.5)),
              op2(g, "core.mul", y, const_f(g, 0.5)));
    eddy_value_t *next[3] = {op2(g, "core.add", args[0], const_i(g, 1)), NULL,
                             NULL};
    size_t k = 1;
    if (l0) {
      eddy_value_t *ops[3] = {args[1], args[0], y};
      next[k++] = op(g, "tl.set_item", ops, 3, NULL, 0);
    }
    if (h)
      next[k++] = y;
    terminator(g, "ctl.yield", next, n);
    leave(g, sv);
  }
  g->loop_depth--;
  eddy_value_t *out = h0 ? &loop->results[n - 1] : NULL;
  if (l0 && (!out || chance(g, 50))) { // the stacked results, summed
    // of type [T, B, N] as shape-infer makes it when T is known (map-batch
    // needs it), or [?, B, N]
    int64_t sd[3] = {trips, b, nn};
    const eddy_type_t *stt = eddy_ir_tensor_type_get(g->ctx, g->f, 3, sd);
    eddy_value_t *lst = &loop->results[1];
    eddy_value_t *s =
        constant_trips && chance(g, 70)
            ? &op_full(g, "tl.stack", &lst, 1, NULL, 0, &stt, 1, 0)->results[0]
            : op1(g, "tl.stack", lst);
    int64_t ax0 = 0;
    eddy_named_attr_t a = nints(g, "axes", &ax0, 1);
    s = op(g, "core.reduce_sum", &s, 1, &a, 1);
    out = out ? op2(g, "core.add", out, s) : s;
  }
  return rows_to(g, out, b, t);
}

/// Reads rows of a constant list (tl.from_tensor) at a data index.
static eddy_value_t *gen_list_read(gen_t *g, const ty_t *t, int depth) {
  if (t->rank != 1 || t->d[0] == DYN)
    return NULL;
  int64_t rows = 1 + below(g, 4);
  ty_t src = mat(t->dt, rows, t->d[0]);
  eddy_value_t *s = gen_float(g, &src, depth + 1);
  eddy_value_t *l = op1(g, "tl.from_tensor", s);
  eddy_value_t *idx = op2(g, "core.rem", some_int(g), const_i(g, rows));
  if (chance(g, 30)) {
    eddy_value_t *ops[3] = {l, idx, op1(g, "core.neg", gen_float(g, t,
                                                                 depth + 1))};
    l = op(g, "tl.set_item", ops, 3, NULL, 0);
  }
  return op2(g, "tl.get_item", l, idx);
}

static eddy_value_t *gen_float(gen_t *g, const ty_t *t, int depth) {
  if (g->budget <= 0 || depth > 5)
    return leaf(g, t);
  if (chance(g, 15)) {
    eddy_value_t *v = find(g, t);
    if (v)
      return v;
  }
  for (int tries = 0; tries < 4; tries++) {
    eddy_value_t *v = NULL;
    switch (below(g, 22)) {
    case 0:
    case 1:
    case 2:
    case 3:
      v = gen_unary(g, t, depth);
      break;
    case 4:
    case 5:
    case 6:
    case 7:
      v = gen_binary(g, t, depth);
      break;
    case 8:
      v = gen_select(g, t, depth);
      break;
    case 9:
    case 10:
      v = gen_reduce(g, t, depth);
      break;
    case 11:
      v = chance(g, 50) ? gen_matmul(g, t, depth) : gen_transpose(g, t, depth);
      break;
    case 12:
      v = gen_movement(g, t, depth);
      break;
    case 13:
      v = gen_from_int(g, t);
      break;
    case 14:
    case 15:
      v = gen_if(g, t, depth);
      break;
    case 16:
    case 17:
      v = gen_while(g, t, depth);
      break;
    case 18:
      v = gen_list_read(g, t, depth);
      break;
    case 19:
      v = gen_scan(g, t, depth);
      break;
    case 20:
      v = gen_indexed(g, t, depth);
      break;
    default:
      v = leaf(g, t);
      break;
    }
    if (v) {
      push(g, v, t);
      return v;
    }
  }
  return leaf(g, t);
}

static ty_t random_ty(gen_t *g) {
  ty_t t = {.dt = g->f, .rank = below(g, 3)};
  for (int i = 0; i < t.rank; i++)
    t.d[i] = chance(g, 35) ? DYN : 1 + below(g, 3);
  return t;
}

eddy_status_t dt_generate(eddy_module_t *m, const char *name, uint64_t seed,
                          const dt_gen_opts_t *o) {
  gen_t *g = calloc(1, sizeof *g);
  if (!g)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  g->rng = seed * 0x2545f4914f6cdd1dull + 1;
  g->ctx = m->ctx;
  g->smooth = o && o->smooth;
  g->budget = o && o->budget > 0 ? o->budget : 40;
  g->f = chance(g, 20) ? EDDY_DT_F64 : EDDY_DT_F32;
  g->k = 1 + below(g, 3);
  eddy_ir_builder_init(&g->b, g->ctx);
  size_t nextra = (size_t)below(g, 3), nres = 1 + (size_t)below(g, 3);
  ty_t at[6] = {mat(g->f, DYN, g->k), scalar(g->f), scalar(EDDY_DT_I32),
                scalar(g->f)};
  for (size_t i = 0; i < nextra; i++) {
    at[4 + i] = random_ty(g);
    for (int d = 0; d < at[4 + i].rank; d++)
      if (at[4 + i].d[d] == DYN)
        at[4 + i].d[d] = 1 + below(g, 3);
  }
  ty_t rt[3];
  const eddy_type_t *ain[6], *rout[3];
  for (size_t i = 0; i < 4 + nextra; i++)
    ain[i] = type_of(g, &at[i]);
  for (size_t i = 0; i < nres; i++) {
    rt[i] = random_ty(g);
    if (chance(g, 10))
      rt[i] = scalar(EDDY_DT_I32);
    rout[i] = type_of(g, &rt[i]);
  }
  eddy_op_t *f = NULL;
  eddy_status_t st =
      eddy_ir_func_create(m, name, ain, 4 + nextra, rout, nres, NULL, &f);
  if (st) {
    free(g);
    return st;
  }
  if (setjmp(g->fail)) {
    st = g->err;
    free(g);
    return st;
  }
  eddy_block_t *entry = eddy_ir_func_entry(f);
  eddy_ir_builder_set_end(&g->b, entry);
  g->x = entry->args[0];
  g->s = entry->args[1];
  g->n = entry->args[2];
  g->p = entry->args[3];
  push(g, g->x, &at[0]);
  push(g, g->s, &at[1]);
  push_int(g, g->n);
  for (size_t i = 0; i < nextra; i++)
    push(g, entry->args[4 + i], &at[4 + i]);
  eddy_value_t *res[3];
  for (size_t i = 0; i < nres; i++) {
    if (rt[i].dt == EDDY_DT_I32)
      res[i] = op2(g, "core.add", trip_count(g), some_int(g));
    else if (!(chance(g, 15) && (res[i] = gen_scan(g, &rt[i], 0))))
      res[i] = gen_float(g, &rt[i], 0); // (a scan at the top: row-split's)
  }
  terminator(g, "func.return", res, nres);
  free(g);
  return eddy_ir_verify_op(f);
}
