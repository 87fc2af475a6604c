/// legalize-tf: Einsum, as core transposes, reshapes, reductions and
/// matmuls (autodiff differentiates those, so no einsum rule is needed).
///
/// TensorFlow's Einsum kernel takes one or two operands: tf.einsum splits a
/// longer equation into two-operand Einsums itself (in the order
/// opt_einsum picks), and the gradient of an Einsum is Einsums again, some
/// of one operand ("i->ii") or with a letter repeated in the output
/// ("il,lj->iij"). An equation of three or more operands, which only other
/// producers write, is split here into two-operand contractions from left
/// to right, each keeping the letters the output or a later operand needs.
/// A letter repeated in an operand takes the diagonal (the operand times an
/// identity mask, summed over the second occurrence); a letter repeated in
/// the output puts the result on the diagonal (a new axis times the mask).
/// An ellipsis ("...ij,...jk->...ik") stands for letters of its own, as
/// many as the operand's rank leaves, aligned to the right across operands
/// (numpy broadcasting: a dim of size 1 is broadcast to the others').
#include "lower/tf/tf_lower_internal.h"

#include <stdlib.h>
#include <string.h>

#define MAXR EDDY_TFL_MAX_RANK

/// One operand: its letters (NUL-terminated) and value.
typedef struct es_side {
  char s[MAXR + 1];
  int n;
  eddy_value_t *v;
} es_side_t;

static int es_find(const char *s, int n, char c) {
  for (int i = 0; i < n; i++)
    if (s[i] == c)
      return i;
  return -1;
}

static eddy_named_attr_t ints_attr(eddy_tfl_t *z, const char *name,
                                   const int64_t *v, size_t n) {
  return eddy_ir_named_attr(z->ctx, name,
                            eddy_ir_i64_array_attr_get(z->ctx, v, n));
}

/// v transposed to the letters `to` (a permutation of `from`).
static eddy_status_t es_transpose(eddy_tfl_t *z, const eddy_op_t *op,
                                  eddy_value_t *v, const char *from,
                                  const char *to, int n, eddy_value_t **out) {
  int64_t perm[MAXR];
  bool ident = true;
  for (int i = 0; i < n; i++) {
    perm[i] = es_find(from, n, to[i]);
    ident = ident && perm[i] == i;
  }
  if (ident) {
    *out = v;
    return NULL;
  }
  eddy_named_attr_t a = ints_attr(z, "perm", perm, (size_t)n);
  return eddy_tfl_build(z, op, "core.transpose", &v, 1, &a, 1, out);
}

/// v reshaped to dims[0..n), a dim dims[i] < 0 being the run-time value
/// dimv[i] (dimv may be NULL with at most one such dim: inferred); v itself
/// when it has them.
static eddy_status_t es_reshape(eddy_tfl_t *z, const eddy_op_t *op,
                                eddy_value_t *v, const int64_t *dims,
                                eddy_value_t *const *dimv, size_t n,
                                eddy_value_t **out) {
  bool same = v->type->rank == (int32_t)n;
  for (size_t i = 0; same && i < n; i++)
    same = dims[i] >= 0 && v->type->dims[i] == dims[i];
  if (same) {
    *out = v;
    return NULL;
  }
  return eddy_tfl_reshape_dyn(z, op, v, dims, n, dimv, out);
}

/// The sum of v over the letters of t->s that `keep` lacks; t loses them.
static eddy_status_t es_sum_others(eddy_tfl_t *z, const eddy_op_t *op,
                                   es_side_t *t, const char *keep, int nk) {
  int64_t axes[MAXR];
  char rest[MAXR + 1];
  int na = 0, nr = 0;
  for (int i = 0; i < t->n; i++) {
    if (es_find(keep, nk, t->s[i]) < 0)
      axes[na++] = i;
    else
      rest[nr++] = t->s[i];
  }
  if (!na)
    return NULL;
  eddy_named_attr_t a = ints_attr(z, "axes", axes, (size_t)na);
  eddy_value_t *x = t->v;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.reduce_sum", &x, 1, &a, 1, &t->v));
  memcpy(t->s, rest, (size_t)nr);
  t->s[nr] = 0;
  t->n = nr;
  return NULL;
}

/// The size of letter c: static from either operand, else -1 (dynamic).
static int64_t es_size(const es_side_t *sd, char c) {
  int64_t d = -1;
  for (int k = 0; k < 2; k++) {
    int i = es_find(sd[k].s, sd[k].n, c);
    if (i >= 0 && sd[k].v->type->dims[i] >= 0)
      d = sd[k].v->type->dims[i];
  }
  return d;
}

/// The product of the sizes of letters ls[0..n) (1 for none); -1 when one
/// is dynamic.
static int64_t es_prod(const es_side_t *sd, const char *ls, int n) {
  int64_t p = 1;
  for (int i = 0; i < n; i++) {
    int64_t d = es_size(sd, ls[i]);
    if (d < 0 || !eddy_checked_mul_i64(p, d, &p))
      return -1;
  }
  return p;
}

/// The run-time size of letter c (an i64 scalar), from the operand that has
/// it.
static eddy_status_t es_size_value(eddy_tfl_t *z, const eddy_op_t *op,
                                   const es_side_t *sd, char c,
                                   eddy_value_t **out) {
  for (int k = 0; k < 2; k++) {
    int i = es_find(sd[k].s, sd[k].n, c);
    if (i >= 0)
      return eddy_tfl_dim(z, op, sd[k].v, i, out);
  }
  return eddy_tfl_error(op, "letter '%c' is in neither operand", c);
}

/// The size of the group of letters ls[0..n): *stat, the static product,
/// or -1 with *dyn its run-time value (the product of the letters' dims).
static eddy_status_t es_group(eddy_tfl_t *z, const eddy_op_t *op,
                              const es_side_t *sd, const char *ls, int n,
                              int64_t *stat, eddy_value_t **dyn) {
  *dyn = NULL;
  *stat = es_prod(sd, ls, n);
  if (*stat >= 0)
    return NULL;
  for (int i = 0; i < n; i++) {
    eddy_value_t *d = NULL;
    EDDY_RETURN_IF_ERROR(es_size_value(z, op, sd, ls[i], &d));
    if (*dyn) {
      eddy_value_t *ops[2] = {*dyn, d};
      EDDY_RETURN_IF_ERROR(
          eddy_tfl_build(z, op, "core.mul", ops, 2, NULL, 0, &d));
    }
    *dyn = d;
  }
  return NULL;
}


/// A constant of v's dtype and rank r that is 1 where index p equals index
/// q (both of size d) and 0 elsewhere; its other dims are 1.
static eddy_status_t es_eye(eddy_tfl_t *z, const eddy_op_t *op,
                            eddy_value_t *v, int r, int p, int q, int64_t d,
                            eddy_value_t **out) {
  if (d > 1024)
    return eddy_tfl_error(op, "a repeated einsum letter of size %lld is "
                              "too large for an identity mask",
                          (long long)d);
  int64_t dims[MAXR];
  for (int i = 0; i < r; i++)
    dims[i] = i == p || i == q ? d : 1;
  const eddy_type_t *t =
      eddy_ir_tensor_type_get(z->ctx, v->type->dtype, r, dims);
  if (d == 0) // no elements
    return eddy_tfl_splat(z, v->type->dtype, r, dims, 0.0, out);
  double *vals = calloc((size_t)(d * d), sizeof *vals);
  if (!vals)
    return eddy_tfl_error(op, "out of memory");
  for (int64_t i = 0; i < d; i++)
    vals[i * d + i] = 1.0;
  const eddy_attr_t *a =
      eddy_ir_dense_attr_from_f64(z->ctx, t, vals, (size_t)(d * d));
  free(vals);
  return eddy_ir_build_constant(&z->b, a, out);
}

/// The static size of a repeated letter at positions p and q of dims.
static eddy_status_t es_repeat_size(const eddy_op_t *op, const char *eqn,
                                    char c, int64_t dp, int64_t dq,
                                    int64_t *out) {
  if (dp >= 0 && dq >= 0 && dp != dq)
    return eddy_tfl_error(op, "equation \"%s\": letter '%c' has sizes %lld "
                              "and %lld",
                          eqn, c, (long long)dp, (long long)dq);
  *out = dp >= 0 ? dp : dq;
  if (*out < 0)
    return eddy_tfl_error(op, "equation \"%s\": the repeated letter '%c' "
                              "needs a static size",
                          eqn, c);
  return NULL;
}

/// t's diagonals taken until no letter repeats: for each letter at
/// positions p < q, t times the identity mask of (p, q), summed over q.
static eddy_status_t es_diagonals(eddy_tfl_t *z, const eddy_op_t *op,
                                  const char *eqn, es_side_t *t) {
  for (int q = 1; q < t->n; q++) {
    int p = es_find(t->s, q, t->s[q]);
    if (p < 0)
      continue;
    int64_t d = 0, ax = q;
    EDDY_RETURN_IF_ERROR(es_repeat_size(op, eqn, t->s[q], t->v->type->dims[p],
                                        t->v->type->dims[q], &d));
    eddy_value_t *mask = NULL;
    EDDY_RETURN_IF_ERROR(es_eye(z, op, t->v, t->n, p, q, d, &mask));
    eddy_value_t *x = NULL;
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", t->v, mask, &x));
    eddy_named_attr_t a = ints_attr(z, "axes", &ax, 1);
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.reduce_sum", &x, 1, &a, 1, &t->v));
    memmove(t->s + q, t->s + q + 1, (size_t)(t->n - q));
    t->n--;
    q--;
  }
  return NULL;
}

/// v, whose letters are those of os[0..on) once each in the order they
/// first come, with every later occurrence of a letter put on the
/// diagonal with its first: a new axis there, times the identity mask.
static eddy_status_t es_embed(eddy_tfl_t *z, const eddy_op_t *op,
                              const char *eqn, eddy_value_t *v,
                              const char *os, int on, eddy_value_t **out) {
  int64_t dims[MAXR], from[MAXR];
  int k = 0;
  for (int i = 0; i < on; i++) {
    from[i] = 0;
    if (es_find(os, i, os[i]) >= 0) {
      dims[i] = 1;
      continue;
    }
    from[i] = k;
    dims[i] = v->type->dims[k++];
  }
  if (k == on) {
    *out = v;
    return NULL;
  }
  eddy_value_t *x = v;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_reshape_keep(z, op, x, dims, (size_t)on, from, &v));
  for (int q = 0; q < on; q++) {
    int p = es_find(os, q, os[q]);
    if (p < 0)
      continue;
    int64_t d = 0;
    EDDY_RETURN_IF_ERROR(es_repeat_size(op, eqn, os[q], dims[p], -1, &d));
    eddy_value_t *mask = NULL;
    EDDY_RETURN_IF_ERROR(es_eye(z, op, v, on, p, q, d, &mask));
    x = v;
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.mul", x, mask, &v));
  }
  *out = v;
  return NULL;
}

/// The contraction of two operands whose letters do not repeat, to the
/// letters os[0..on) (each in one of them, none twice): letters only in
/// one operand and not in os are summed first; the rest becomes transposes
/// to [batch, free, contracted] and [batch, contracted, free], reshapes to
/// rank 3 (batch flattened; rank 2 without batch letters), one
/// core.matmul, a reshape back and a transpose to os's order.
static eddy_status_t es_pair(eddy_tfl_t *z, const eddy_op_t *op,
                             const char *eqn, es_side_t *sd, const char *os,
                             int on, eddy_value_t **out) {
  // Sum the letters only one operand has (and the output has not).
  for (int k = 0; k < 2; k++) {
    char keep[2 * MAXR];
    memcpy(keep, sd[1 - k].s, (size_t)sd[1 - k].n);
    memcpy(keep + sd[1 - k].n, os, (size_t)on);
    EDDY_RETURN_IF_ERROR(es_sum_others(z, op, &sd[k], keep, sd[1 - k].n + on));
  }
  char bt[MAXR], fa[MAXR], fb[MAXR], ct[MAXR];
  int nbt = 0, nfa = 0, nfb = 0, nct = 0;
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < sd[k].n; i++) {
      char c = sd[k].s[i];
      bool other = es_find(sd[1 - k].s, sd[1 - k].n, c) >= 0;
      bool outp = es_find(os, on, c) >= 0;
      if (!other && k)
        fb[nfb++] = c;
      else if (!other)
        fa[nfa++] = c;
      else if (k == 0 && outp)
        bt[nbt++] = c;
      else if (k == 0)
        ct[nct++] = c;
    }
  // A: [batch, free, contracted]; B: [batch, contracted, free].
  char la[MAXR], lb[MAXR];
  int na = 0, nbb = 0;
  memcpy(la + na, bt, (size_t)nbt), na += nbt;
  memcpy(la + na, fa, (size_t)nfa), na += nfa;
  memcpy(la + na, ct, (size_t)nct), na += nct;
  memcpy(lb + nbb, bt, (size_t)nbt), nbb += nbt;
  memcpy(lb + nbb, ct, (size_t)nct), nbb += nct;
  memcpy(lb + nbb, fb, (size_t)nfb), nbb += nfb;
  eddy_value_t *A = NULL, *Bv = NULL, *M = NULL, *R = NULL;
  EDDY_RETURN_IF_ERROR(es_transpose(z, op, sd[0].v, sd[0].s, la, na, &A));
  EDDY_RETURN_IF_ERROR(es_transpose(z, op, sd[1].v, sd[1].s, lb, nbb, &Bv));
  // Each group's size, static or read at run time (any number dynamic).
  int64_t pb, pfa, pfb, pct;
  eddy_value_t *vb, *vfa, *vfb, *vct;
  EDDY_RETURN_IF_ERROR(es_group(z, op, sd, bt, nbt, &pb, &vb));
  EDDY_RETURN_IF_ERROR(es_group(z, op, sd, fa, nfa, &pfa, &vfa));
  EDDY_RETURN_IF_ERROR(es_group(z, op, sd, fb, nfb, &pfb, &vfb));
  EDDY_RETURN_IF_ERROR(es_group(z, op, sd, ct, nct, &pct, &vct));
  // Rank 3 with batch letters, else plain matrices.
  int64_t da[3] = {pb, pfa, pct}, db[3] = {pb, pct, pfb};
  eddy_value_t *va[3] = {vb, vfa, vct}, *vbb[3] = {vb, vct, vfb};
  size_t off = nbt ? 0 : 1;
  EDDY_RETURN_IF_ERROR(
      es_reshape(z, op, A, da + off, va + off, 3 - off, &A));
  EDDY_RETURN_IF_ERROR(
      es_reshape(z, op, Bv, db + off, vbb + off, 3 - off, &Bv));
  eddy_value_t *ops[2] = {A, Bv};
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.matmul", ops, 2, NULL, 0, &M));
  // Back to [batch..., freeA..., freeB...], then the output's order.
  char lr[MAXR];
  int nr = 0;
  int64_t dr[MAXR];
  eddy_value_t *vr[MAXR] = {NULL};
  for (int g = 0; g < 3; g++) {
    const char *ls = g == 0 ? bt : g == 1 ? fa : fb;
    int n = g == 0 ? nbt : g == 1 ? nfa : nfb;
    for (int i = 0; i < n; i++) {
      lr[nr] = ls[i];
      dr[nr] = es_size(sd, ls[i]);
      if (dr[nr] < 0)
        EDDY_RETURN_IF_ERROR(es_size_value(z, op, sd, ls[i], &vr[nr]));
      nr++;
    }
  }
  if (nr != on)
    return eddy_tfl_error(op, "equation \"%s\": the output letters do not "
                              "match the operands'",
                          eqn);
  EDDY_RETURN_IF_ERROR(es_reshape(z, op, M, dr, vr, (size_t)nr, &R));
  return es_transpose(z, op, R, lr, os, nr, out);
}

/// The letters of t (in its order) that `need` has, each once.
static int es_kept(const es_side_t *t, const char *need, int nn, char *out,
                   int n) {
  for (int i = 0; i < t->n; i++)
    if (es_find(need, nn, t->s[i]) >= 0 && es_find(out, n, t->s[i]) < 0)
      out[n++] = t->s[i];
  return n;
}

/// Rewrites the equation in buf (no spaces, with "->") without ellipses:
/// each "..." of operand k becomes the last e_k of E fresh letters (e_k
/// the dims its rank leaves, E the most of any operand), the output's all
/// E (none: they are summed). The fresh letters go to ell[0..*ne).
static eddy_status_t es_expand_ellipses(const eddy_op_t *op, char *buf,
                                        size_t cap, char *ell, int *ne) {
  *ne = 0;
  if (!strstr(buf, "..."))
    return NULL;
  char src[8 * MAXR + 8], fresh[MAXR];
  strcpy(src, buf);
  const char *arrow = strstr(src, "->");
  int e[65] = {0}, most = 0;
  uint32_t n = op->num_operands;
  const char *p = src;
  for (uint32_t k = 0; k < n && k < 64; k++) {
    const char *end = k + 1 < n ? strchr(p, ',') : arrow;
    if (!end || end > arrow)
      return NULL; // the parser below reports it
    const char *dots = strstr(p, "...");
    if (dots && dots < end) {
      const eddy_type_t *t = eddy_ir_op_operand(op, k)->type;
      int letters = (int)(end - p) - 3;
      if (t->kind != EDDY_TYPE_TENSOR || t->rank == EDDY_RANK_UNKNOWN ||
          t->rank < letters)
        return eddy_tfl_error(op, "operand %u's rank does not cover its "
                                  "letters and ellipsis",
                              k);
      e[k] = t->rank - letters;
      most = e[k] > most ? e[k] : most;
    }
    p = end + 1;
  }
  // Fresh letters: the ones the equation does not use.
  static const char pool[] =
      "ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkjihgfedcba";
  for (const char *c = pool; *c && *ne < most; c++)
    if (!strchr(src, *c))
      fresh[(*ne)++] = *c;
  if (*ne < most)
    return eddy_tfl_error(op, "the ellipsis needs more letters than are "
                              "free");
  memcpy(ell, fresh, (size_t)most);
  // Rewrite: operand k's "..." by fresh[most - e_k ..], the output's by all.
  size_t w = 0;
  uint32_t k = 0;
  bool out = false;
  for (const char *c = src; *c;) {
    if (c[0] == '-' && c[1] == '>')
      out = true;
    if (strncmp(c, "...", 3) == 0) {
      int from = out ? 0 : most - e[k < 64 ? k : 63];
      for (int i = from; i < most && w + 1 < cap; i++)
        buf[w++] = fresh[i];
      c += 3;
      continue;
    }
    if (*c == ',')
      k++;
    if (w + 1 < cap)
      buf[w++] = *c;
    c++;
  }
  buf[w] = 0;
  return NULL;
}

/// Broadcasts, for each ellipsis letter, an operand whose dim is 1 where
/// another's is larger (static shapes).
static eddy_status_t es_broadcast(eddy_tfl_t *z, const eddy_op_t *op,
                                  es_side_t *sd, uint32_t n, const char *ell,
                                  int ne) {
  for (int j = 0; j < ne; j++) {
    int64_t most = 1;
    for (uint32_t k = 0; k < n; k++) {
      int at = es_find(sd[k].s, sd[k].n, ell[j]);
      int64_t d = at < 0 ? 1 : sd[k].v->type->dims[at];
      most = d > most ? d : most;
    }
    for (uint32_t k = 0; k < n && most > 1; k++) {
      int at = es_find(sd[k].s, sd[k].n, ell[j]);
      const eddy_type_t *t = sd[k].v->type;
      if (at < 0 || t->dims[at] != 1)
        continue;
      int64_t dims[MAXR];
      for (int i = 0; i < t->rank; i++) {
        dims[i] = t->dims[i];
        if (dims[i] < 0)
          return eddy_tfl_error(op, "operand %u is broadcast along its "
                                    "ellipsis and needs a static shape",
                                k);
      }
      dims[at] = most;
      eddy_named_attr_t a = ints_attr(z, "shape", dims, t->rank);
      eddy_value_t *in = sd[k].v;
      EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.broadcast_to", &in, 1,
                                          &a, 1, &sd[k].v));
    }
  }
  return NULL;
}

eddy_status_t eddy_tfl_lower_einsum(eddy_tfl_t *z, const eddy_op_t *op) {
  const eddy_attr_t *eq = eddy_ir_op_attr(op, "equation");
  if (!eq || eq->kind != EDDY_ATTR_STRING)
    return eddy_tfl_error(op, "no equation");
  char buf[8 * MAXR + 8];
  size_t len = eq->u.str.len;
  if (len >= sizeof buf)
    return eddy_tfl_error(op, "the equation is too long");
  size_t w = 0;
  for (size_t i = 0; i < len; i++)
    if (eq->u.str.data[i] != ' ')
      buf[w++] = eq->u.str.data[i];
  buf[w] = 0;
  char ell[MAXR];
  int ne = 0;
  if (!strstr(buf, "->"))
    return eddy_tfl_error(op, "equation \"%s\" is not of the form "
                              "\"ab,bc->ac\"",
                          buf);
  EDDY_RETURN_IF_ERROR(es_expand_ellipses(op, buf, sizeof buf, ell, &ne));
  const char *arrow = strstr(buf, "->");
  if (strchr(buf, '.'))
    return eddy_tfl_error(op, "equation \"%s\" is not of the form "
                              "\"ab,bc->ac\" (an ellipsis is \"...\")",
                          buf);
  uint32_t n = op->num_operands;
  if (n == 0 || n > 64)
    return eddy_tfl_error(op, "einsum of %u operands", n);
  es_side_t *sd = calloc(n, sizeof *sd);
  if (!sd)
    return eddy_tfl_error(op, "out of memory");
  eddy_status_t st = NULL;
  const char *p = buf;
  for (uint32_t k = 0; k < n && !st; k++) {
    const char *e = k + 1 < n ? strchr(p, ',') : arrow;
    if (!e || e > arrow || (k + 1 == n && memchr(p, ',', (size_t)(e - p))))
      st = eddy_tfl_error(op, "equation \"%s\" does not have %u operands", buf,
                          n);
    else if (e - p > MAXR)
      st = eddy_tfl_error(op, "operand %u has more than %d letters", k, MAXR);
    else {
      sd[k].n = (int)(e - p);
      memcpy(sd[k].s, p, (size_t)sd[k].n);
      sd[k].v = tfl_in(z, op, k);
      const eddy_type_t *t = sd[k].v->type;
      if (t->kind != EDDY_TYPE_TENSOR || t->rank != sd[k].n)
        st = eddy_tfl_error(op, "operand %u has rank %d, the equation \"%s\" "
                                "gives it %d letters",
                            k, (int)t->rank, buf, sd[k].n);
      p = e + 1;
    }
  }
  const char *os = arrow + 2;
  int on = (int)strlen(os);
  char u[MAXR + 1]; // the output's letters, each once
  int nu = 0;
  if (!st && on > MAXR)
    st = eddy_tfl_error(op, "the output has more than %d letters", MAXR);
  for (int i = 0; i < on && !st; i++) {
    bool found = false;
    for (uint32_t k = 0; k < n && !found; k++)
      found = es_find(sd[k].s, sd[k].n, os[i]) >= 0;
    if (!found)
      st = eddy_tfl_error(op, "output letter '%c' is in no operand", os[i]);
    if (es_find(u, nu, os[i]) < 0)
      u[nu++] = os[i];
  }
  if (!st)
    st = es_broadcast(z, op, sd, n, ell, ne);
  for (uint32_t k = 0; k < n && !st; k++)
    st = es_diagonals(z, op, buf, &sd[k]);
  eddy_value_t *r = NULL;
  if (!st && n == 1) {
    st = es_sum_others(z, op, &sd[0], u, nu);
    if (!st)
      st = es_transpose(z, op, sd[0].v, sd[0].s, u, nu, &r);
  }
  // Left to right: each contraction keeps the letters the output or a
  // later operand has.
  for (uint32_t k = 1; k < n && !st; k++) {
    es_side_t pair[2] = {sd[0], sd[k]};
    char keep[MAXR + 1];
    int nk = 0;
    if (k + 1 == n) {
      memcpy(keep, u, (size_t)nu);
      nk = nu;
    } else {
      char need[65 * MAXR];
      int nn = 0;
      memcpy(need, u, (size_t)nu), nn += nu;
      for (uint32_t j = k + 1; j < n; j++)
        memcpy(need + nn, sd[j].s, (size_t)sd[j].n), nn += sd[j].n;
      nk = es_kept(&sd[0], need, nn, keep, 0);
      nk = es_kept(&sd[k], need, nn, keep, nk);
    }
    eddy_value_t *c = NULL;
    st = es_pair(z, op, buf, pair, keep, nk, &c);
    sd[0].v = c;
    memcpy(sd[0].s, keep, (size_t)nk);
    sd[0].s[nk] = 0;
    sd[0].n = nk;
    r = sd[0].v;
  }
  free(sd);
  EDDY_RETURN_IF_ERROR(st);
  EDDY_RETURN_IF_ERROR(es_embed(z, op, buf, r, os, on, &r));
  tfl_out1(z, op, r);
  return NULL;
}
