/// legalize-tf: StridedSlice, StridedSliceGrad, Slice, Pad, MirrorPad and
/// MirrorPadGrad.
///
/// A StridedSlice is resolved the way TensorFlow's own kernels resolve it
/// (the "sparse" specification of begin, end, strides and the five masks is
/// made "dense", one entry per dimension of the operand, and each entry is
/// made canonical against the dimension's size):
///
/// - an ellipsis stands for as many whole dimensions as the operand has
///   left; without one, an ellipsis is implied after the last entry;
/// - a new axis inserts a dimension of size 1 into the result and takes no
///   dimension of the operand;
/// - a shrink takes the single index `begin` (counted from the end when
///   negative) and drops the dimension;
/// - otherwise begin and end count from the end when negative and are then
///   clamped to the dimension (to [0, size] for a positive stride, to
///   [-1, size - 1] for a negative one); a masked begin or end is the first
///   or last element in the stride's direction. The length is
///   ceil((end - begin) / stride), 0 for an empty interval.
///
/// Each dimension is then whole, one index, or a list of positions. With
/// a static operand and no negative stride the result is one core.slice
/// (and a reshape for shrinks and new axes); otherwise each dimension
/// taking positions is a core.gather of them, each index a core.gather of
/// a scalar (which drops the dimension), and new axes a reshape.
///
/// A dimension of dynamic size can be whole, indexed (a negative index adds
/// the size read at run time) or sliced with bounds >= 0 (the gather checks
/// them at run time, where TensorFlow would clamp an end past the size).
/// Slices whose bounds depend on the dynamic size (x[1:], x[-2:], x[::-1])
/// and bounds that are run-time values (x[:, :t]; the strides must be
/// constants) take positions computed at run time: the bounds made
/// canonical with core ops against the size, then core.range.
#include "lower/tf/tf_lower_internal.h"

#include <stdlib.h>
#include <string.h>

#define MAXR 64
/// The most positions one dimension of a dynamic size may take.
#define MAX_POSITIONS ((int64_t)1 << 24)

/// What one dimension of the operand becomes.
typedef enum ss_kind {
  SS_WHOLE, ///< all of it, in order
  SS_INDEX, ///< one index; the dimension is dropped
  SS_RANGE, ///< `size` positions begin, begin + stride, ...
  SS_TAIL,  ///< from begin >= 0 to the end of a dynamic dimension, stride 1
            ///< (StridedSliceGrad only: its dy is padded back by begin)
  SS_RUN,   ///< positions computed at run time (run_positions)
} ss_kind_t;

typedef struct ss_dim {
  ss_kind_t kind;
  int64_t dim;          ///< the operand's size, EDDY_DIM_DYNAMIC when unknown
  int64_t begin;        ///< INDEX, RANGE: the first position (INDEX on a
                        ///< dynamic dim: may be < 0, from the end)
  int64_t stride, size; ///< RANGE; RUN: the stride
  int64_t end;          ///< RUN: the end, when a constant
  int64_t at;           ///< the entry of begin and end this dim reads
  bool bm, em;          ///< RUN: begin, end masked
  /// RUN, INDEX: begin, end are run-time values (entry `at` of the
  /// operands begin and end).
  bool rt_begin, rt_end;
} ss_dim_t;

/// A resolved slice: one entry per dimension of the operand, and the
/// result's dimensions in order, each the operand's dimension it comes
/// from or SS_NEW_AXIS (shrunk dimensions do not appear).
typedef struct ss_spec {
  int64_t rank;
  ss_dim_t d[MAXR];
  int64_t nout;
  int64_t out[MAXR];
} ss_spec_t;

#define SS_NEW_AXIS (-1)

static bool bit(int64_t mask, int64_t i) {
  return i < 63 && ((mask >> i) & 1) != 0;
}

/// The masks of a StridedSlice or StridedSliceGrad.
typedef struct ss_masks {
  int64_t begin, end, ellipsis, new_axis, shrink;
} ss_masks_t;

static ss_masks_t masks_of(const eddy_op_t *op) {
  ss_masks_t m = {eddy_ir_op_attr_int(op, "begin_mask", 0),
                  eddy_ir_op_attr_int(op, "end_mask", 0),
                  eddy_ir_op_attr_int(op, "ellipsis_mask", 0),
                  eddy_ir_op_attr_int(op, "new_axis_mask", 0),
                  eddy_ir_op_attr_int(op, "shrink_axis_mask", 0)};
  return m;
}

/// One dense entry (begin b, end e, stride st, its masks) against a
/// dimension of size d (EDDY_DIM_DYNAMIC when unknown), as TensorFlow makes
/// it canonical.
static eddy_status_t resolve_dim(const eddy_op_t *op, int64_t axis, int64_t d,
                                 int64_t b, int64_t e, int64_t st, bool bm,
                                 bool em, bool brt, bool ert, bool shrink,
                                 bool tail_ok, ss_dim_t *out) {
  *out = (ss_dim_t){.kind = SS_WHOLE, .dim = d, .stride = 1};
  if (st == 0)
    return eddy_tfl_error(op, "the stride of dimension %lld is 0",
                          (long long)axis);
  // Positions computed at run time.
  ss_dim_t run = {.kind = SS_RUN, .dim = d, .begin = b, .end = e,
                  .stride = st, .bm = bm, .em = em, .rt_begin = brt && !bm,
                  .rt_end = ert && !em};
  // Bounds this large are not indices of any tensor eddy can hold; keeping
  // them out keeps the arithmetic below from overflowing.
  const int64_t big = (int64_t)1 << 48;
  if (b < -big || b > big || e < -big || e > big || st < -big || st > big)
    return eddy_tfl_error(op, "begin, end or stride of dimension %lld is "
                              "beyond 2^48",
                          (long long)axis);
  if (shrink) {
    if (st < 0)
      return eddy_tfl_error(op, "dimension %lld takes one index with a "
                                "negative stride",
                            (long long)axis);
    out->kind = SS_INDEX;
    out->begin = b;
    out->rt_begin = brt;
    if (d == EDDY_DIM_DYNAMIC || brt)
      return NULL;
    out->begin = b < 0 ? b + d : b;
    if (out->begin < 0 || out->begin >= d)
      return eddy_tfl_error(op, "index %lld is out of range for dimension "
                                "%lld of size %lld",
                            (long long)b, (long long)axis, (long long)d);
    return NULL;
  }
  if (run.rt_begin || run.rt_end) {
    *out = run;
    return NULL;
  }
  int64_t lo, hi;
  if (d != EDDY_DIM_DYNAMIC) {
    // Valid positions: [0, d] going up, [-1, d - 1] going down (one past
    // each end, so that a clamped interval can be empty).
    int64_t vmin = st > 0 ? 0 : -1, vmax = st > 0 ? d : d - 1;
    if (bm) {
      lo = st > 0 ? vmin : vmax;
    } else {
      lo = b < 0 ? b + d : b;
      lo = lo < vmin ? vmin : lo > vmax ? vmax : lo;
    }
    if (em) {
      hi = st > 0 ? vmax : vmin;
    } else {
      hi = e < 0 ? e + d : e;
      hi = hi < vmin ? vmin : hi > vmax ? vmax : hi;
    }
  } else {
    // Only bounds that do not depend on the size: a whole dimension, or
    // bounds >= 0 (a masked begin going up is 0).
    if (em && st == 1 && (bm || b == 0))
      return NULL;
    if (tail_ok && em && st == 1 && !bm && b > 0) {
      out->kind = SS_TAIL;
      out->begin = b;
      return NULL;
    }
    lo = bm && st > 0 ? 0 : b;
    hi = e;
    if ((bm && st < 0) || em || lo < 0 || hi < 0) {
      *out = run; // bounds that depend on the size
      return NULL;
    }
  }
  int64_t len = hi - lo, size = 0;
  if (len != 0 && (len < 0) == (st < 0))
    size = len / st + (len % st != 0);
  if (d == EDDY_DIM_DYNAMIC && size > MAX_POSITIONS)
    return eddy_tfl_error(op, "dimension %lld: the slice takes %lld "
                              "positions, more than eddy makes a constant of",
                          (long long)axis, (long long)size);
  if (d != EDDY_DIM_DYNAMIC && st == 1 && lo == 0 && size == d)
    return NULL; // the whole dimension
  out->kind = SS_RANGE;
  out->begin = lo;
  out->stride = st;
  out->size = size;
  return NULL;
}

/// The entries of begin or end (operand k): its constants (*rt false), or,
/// when it is a vector of n run-time values, zeros and *rt true.
static eddy_status_t bounds(eddy_tfl_t *z, const eddy_op_t *op, size_t k,
                            int64_t n, int64_t *v, bool *rt) {
  eddy_value_t *x = tfl_in(z, op, k);
  int64_t got = eddy_tfl_const_ints(z, x, v, MAXR);
  *rt = got < 0;
  if (*rt) {
    const eddy_type_t *t = x->type;
    if (t->kind != EDDY_TYPE_TENSOR || t->rank != 1 || t->dims[0] != n ||
        eddy_dtype_is_float(t->dtype))
      return eddy_tfl_error(op, "begin and end must be integer vectors as "
                                "long as the strides (%lld)",
                            (long long)n);
    memset(v, 0, (size_t)n * sizeof *v);
  } else if (got != n) {
    return eddy_tfl_error(op, "begin, end and strides must have equal "
                              "lengths");
  }
  return NULL;
}

/// Builds the dense specification of a StridedSlice from its operands
/// begin, end and strides (operands first .. first + 2; the strides
/// constants, begin and end constants or run-time vectors) and masks,
/// against an operand of `rank` dims.
static eddy_status_t resolve(eddy_tfl_t *z, const eddy_op_t *op,
                             const int64_t *dims, int64_t rank, size_t first,
                             bool tail_ok, ss_spec_t *s) {
  int64_t b[MAXR], e[MAXR], st[MAXR];
  int64_t n = eddy_tfl_const_ints(z, tfl_in(z, op, first + 2), st, MAXR);
  if (n < 0)
    return eddy_tfl_error(op, "the strides must be constants");
  bool brt, ert;
  EDDY_RETURN_IF_ERROR(bounds(z, op, first, n, b, &brt));
  EDDY_RETURN_IF_ERROR(bounds(z, op, first + 1, n, e, &ert));
  if (n > 62)
    return eddy_tfl_error(op, "the slice has %lld entries (at most 62)",
                          (long long)n);
  ss_masks_t m = masks_of(op);
  // Bit i of a mask is entry i's: TensorFlow ignores the bits past them.
  int64_t entries = ((int64_t)1 << n) - 1;
  m.begin &= entries;
  m.end &= entries;
  m.ellipsis &= entries;
  m.new_axis &= entries;
  m.shrink &= entries;
  if (m.ellipsis & (m.ellipsis - 1))
    return eddy_tfl_error(op, "the slice has more than one ellipsis");
  // New axes after the ellipsis, which it must leave room for.
  int64_t new_after = 0;
  bool seen = false;
  for (int64_t i = 0; i < n; i++) {
    if (seen && bit(m.new_axis, i))
      new_after++;
    if (bit(m.ellipsis, i))
      seen = true;
  }
  int64_t sparse = n, ellipsis = m.ellipsis;
  if (!seen) { // an ellipsis is implied after the last entry
    ellipsis |= (int64_t)1 << n;
    sparse = n + 1;
  }
  s->rank = rank;
  s->nout = 0;
  int64_t full = 0;
  for (int64_t i = 0; i < sparse; i++) {
    if (bit(ellipsis, i)) {
      int64_t next = rank - (sparse - i) + 1 + new_after;
      if (next > rank)
        next = rank;
      for (; full < next; full++) {
        s->d[full] = (ss_dim_t){.kind = SS_WHOLE, .dim = dims[full],
                                .stride = 1};
        s->out[s->nout++] = full;
      }
    } else if (bit(m.new_axis, i)) {
      if (s->nout == MAXR)
        return eddy_tfl_error(op, "the result has more than %d dimensions",
                              MAXR);
      s->out[s->nout++] = SS_NEW_AXIS;
    } else {
      if (full >= rank)
        return eddy_tfl_error(op, "the slice indexes more dimensions than "
                                  "the operand's %lld",
                              (long long)rank);
      bool shrink = bit(m.shrink, i);
      EDDY_RETURN_IF_ERROR(resolve_dim(
          op, full, dims[full], b[i], e[i], st[i], bit(m.begin, i),
          bit(m.end, i), brt, ert, shrink, tail_ok, &s->d[full]));
      s->d[full].at = i;
      if (!shrink)
        s->out[s->nout++] = full;
      full++;
    }
  }
  if (full != rank) // the ellipsis covers the rest, so this cannot happen
    return eddy_tfl_error(op, "the slice does not cover the operand");
  return NULL;
}

/// A constant i64 vector, or a scalar when rank is 0.
static eddy_status_t const_index(eddy_tfl_t *z, const int64_t *v, int64_t n,
                                 int32_t rank, eddy_value_t **out) {
  const eddy_type_t *t = eddy_ir_tensor_type_get(z->ctx, EDDY_DT_I64, rank,
                                                 rank ? &n : NULL);
  const eddy_attr_t *a =
      n == 0 ? eddy_ir_dense_attr_get(z->ctx, t, v, 0)
             : eddy_ir_dense_attr_from_i64(z->ctx, t, v, (size_t)n);
  return eddy_ir_build_constant(&z->b, a, out);
}

static eddy_status_t gather(eddy_tfl_t *z, const eddy_op_t *op,
                            eddy_value_t *x, eddy_value_t *idx, int64_t axis,
                            eddy_value_t **out) {
  eddy_value_t *ops[2] = {x, idx};
  eddy_named_attr_t a = eddy_ir_named_attr(
      z->ctx, "axis", eddy_ir_int_attr_get(z->ctx, axis, EDDY_DT_I64));
  return eddy_tfl_build(z, op, "core.gather", ops, 2, &a, 1, out);
}

/// A scalar index i into dimension `axis` of x, as a value: i itself, or
/// when it is a negative index into a dimension of dynamic size, that size
/// (read at run time) + i.
static eddy_status_t index_value(eddy_tfl_t *z, const eddy_op_t *op,
                                 eddy_value_t *x, int64_t axis, int64_t i,
                                 eddy_value_t **out) {
  EDDY_RETURN_IF_ERROR(const_index(z, &i, 1, 0, out));
  if (i >= 0)
    return NULL;
  eddy_value_t *d = NULL, *ops[2];
  eddy_named_attr_t a = eddy_ir_named_attr(
      z->ctx, "index", eddy_ir_int_attr_get(z->ctx, axis, EDDY_DT_I64));
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.dim", &x, 1, &a, 1, &d));
  ops[0] = d;
  ops[1] = *out;
  return eddy_tfl_build(z, op, "core.add", ops, 2, NULL, 0, out);
}

/// Element i of the integer vector v, as an i64 scalar: a constant when v
/// is one (so that no op is made of constants only: in a v1 loop kept as
/// dataflow it would sit outside the loop's frame).
static eddy_status_t vec_elem(eddy_tfl_t *z, const eddy_op_t *op,
                              eddy_value_t *v, int64_t i, eddy_value_t **out) {
  int64_t c[2 * MAXR];
  if (eddy_tfl_const_ints(z, v, c, 2 * MAXR) > i)
    return const_index(z, &c[i], 1, 0, out);
  eddy_value_t *e = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_element(z, op, v, i, &e));
  return eddy_tfl_cast(z, op, e, EDDY_DT_I64, out);
}

/// i where i >= 0, else i + size (i64 scalars).
static eddy_status_t from_end(eddy_tfl_t *z, const eddy_op_t *op,
                              eddy_value_t *i, eddy_value_t *size,
                              eddy_value_t **out) {
  eddy_value_t *zero = NULL, *neg = NULL, *w = NULL;
  int64_t z0 = 0;
  EDDY_RETURN_IF_ERROR(const_index(z, &z0, 1, 0, &zero));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.lt", i, zero, &neg));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.add", i, size, &w));
  return tfl_sel(z, op, neg, w, i, out);
}

/// Begin (end: k = 1) of an SS_RUN dimension of run-time size `size` (an
/// i64 scalar), canonical as TensorFlow makes it: a masked bound is the
/// first (last) position in the stride's direction; another counts from
/// the end when negative and is clamped to [0, size] going up, to [-1,
/// size - 1] going down. Run-time bounds are entry d->at of operand first
/// + k.
static eddy_status_t run_bound(eddy_tfl_t *z, const eddy_op_t *op,
                               size_t first, const ss_dim_t *d,
                               eddy_value_t *size, int k,
                               eddy_value_t **out) {
  bool up = d->stride > 0, masked = k ? d->em : d->bm;
  eddy_value_t *one = NULL, *last = NULL, *v = NULL, *lo = NULL;
  int64_t c1 = 1, cm1 = -1, z0 = 0;
  EDDY_RETURN_IF_ERROR(const_index(z, &c1, 1, 0, &one));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.sub", size, one, &last));
  if (masked && up == (k == 1)) { // the far end: size going up, else last
    *out = up ? size : last;
    return NULL;
  }
  if (masked) // the near end: 0 going up, -1 going down
    return const_index(z, up ? &z0 : &cm1, 1, 0, out);
  if (k ? d->rt_end : d->rt_begin)
    EDDY_RETURN_IF_ERROR(vec_elem(z, op, tfl_in(z, op, first + k), d->at, &v));
  else
    EDDY_RETURN_IF_ERROR(const_index(z, k ? &d->end : &d->begin, 1, 0, &v));
  EDDY_RETURN_IF_ERROR(from_end(z, op, v, size, &v));
  EDDY_RETURN_IF_ERROR(const_index(z, up ? &z0 : &cm1, 1, 0, &lo));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.maximum", v, lo, &v));
  return tfl_bin(z, op, "core.minimum", v, up ? size : last, out);
}

/// The positions an SS_RUN dimension of run-time size `size` takes:
/// core.range(begin, end, stride), empty when the interval is.
static eddy_status_t run_positions(eddy_tfl_t *z, const eddy_op_t *op,
                                   size_t first, const ss_dim_t *d,
                                   eddy_value_t *size, eddy_value_t **out) {
  eddy_value_t *b = NULL, *e = NULL, *st = NULL;
  EDDY_RETURN_IF_ERROR(run_bound(z, op, first, d, size, 0, &b));
  EDDY_RETURN_IF_ERROR(run_bound(z, op, first, d, size, 1, &e));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op,
                               d->stride > 0 ? "core.maximum" : "core.minimum",
                               e, b, &e));
  EDDY_RETURN_IF_ERROR(const_index(z, &d->stride, 1, 0, &st));
  eddy_value_t *ops[3] = {b, e, st};
  return eddy_tfl_build(z, op, "core.range", ops, 3, NULL, 0, out);
}

/// The run-time index of an SS_INDEX dimension with rt_begin: entry d->at
/// of operand `first`, counted from the end when negative.
static eddy_status_t run_index(eddy_tfl_t *z, const eddy_op_t *op,
                               size_t first, const ss_dim_t *d,
                               eddy_value_t *size, eddy_value_t **out) {
  eddy_value_t *v = NULL;
  EDDY_RETURN_IF_ERROR(vec_elem(z, op, tfl_in(z, op, first), d->at, &v));
  return from_end(z, op, v, size, out);
}

/// Dimension i of x as an i64 scalar: a constant when static.
static eddy_status_t size_of(eddy_tfl_t *z, const eddy_op_t *op,
                             eddy_value_t *x, const ss_dim_t *d, int64_t i,
                             eddy_value_t **out) {
  if (d->dim != EDDY_DIM_DYNAMIC)
    return const_index(z, &d->dim, 1, 0, out);
  return eddy_tfl_dim(z, op, x, i, out);
}

/// One core.slice for the whole spec, then a reshape to the result's
/// dimensions; possible when every dimension is static and no stride is
/// negative.
static bool slice_fits(const ss_spec_t *s) {
  for (int64_t i = 0; i < s->rank; i++)
    if (s->d[i].dim == EDDY_DIM_DYNAMIC || s->d[i].kind == SS_RUN ||
        s->d[i].rt_begin ||
        (s->d[i].kind == SS_RANGE && s->d[i].stride < 0))
      return false;
  return true;
}

static eddy_status_t apply_slice(eddy_tfl_t *z, const eddy_op_t *op,
                                 eddy_value_t *x, const ss_spec_t *s,
                                 eddy_value_t **out) {
  int64_t lo[MAXR], hi[MAXR], st[MAXR], dims[MAXR];
  bool same;
  for (int64_t i = 0; i < s->rank; i++) {
    const ss_dim_t *d = &s->d[i];
    lo[i] = 0;
    hi[i] = d->dim;
    st[i] = 1;
    if (d->kind == SS_INDEX) {
      lo[i] = d->begin;
      hi[i] = d->begin + 1;
    } else if (d->kind == SS_RANGE) {
      lo[i] = d->size ? d->begin : 0;
      hi[i] = d->size ? d->begin + (d->size - 1) * d->stride + 1 : 0;
      st[i] = d->stride;
    }
  }
  eddy_named_attr_t a[3] = {
      eddy_ir_named_attr(z->ctx, "start", eddy_ir_i64_array_attr_get(
                                              z->ctx, lo, (size_t)s->rank)),
      eddy_ir_named_attr(z->ctx, "limit", eddy_ir_i64_array_attr_get(
                                              z->ctx, hi, (size_t)s->rank)),
      eddy_ir_named_attr(z->ctx, "strides", eddy_ir_i64_array_attr_get(
                                                z->ctx, st, (size_t)s->rank))};
  eddy_value_t *r = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.slice", &x, 1, a, 3, &r));
  same = s->nout == s->rank;
  int64_t from[MAXR];
  for (int64_t k = 0; k < s->nout; k++) {
    int64_t src = s->out[k];
    dims[k] = src == SS_NEW_AXIS ? 1 : r->type->dims[src];
    from[k] = src;
    same = same && dims[k] == r->type->dims[k];
  }
  if (!same)
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape_keep(z, op, r, dims,
                                               (size_t)s->nout, from, &r));
  *out = r;
  return NULL;
}

/// The most positions a gather's constant index takes (128 MiB of i64).
#define EDDY_TFL_MAX_POSITIONS ((int64_t)1 << 24)

/// The general form: a gather per dimension that takes positions, one per
/// index (last dimension first, each drops its dimension), a reshape for
/// new axes.
static eddy_status_t apply_gathers(eddy_tfl_t *z, const eddy_op_t *op,
                                   eddy_value_t *x, const ss_spec_t *s,
                                   size_t first, eddy_value_t **out) {
  eddy_value_t *r = x;
  for (int64_t i = 0; i < s->rank; i++) {
    const ss_dim_t *d = &s->d[i];
    if (d->kind == SS_RUN) {
      eddy_value_t *size = NULL, *pos = NULL;
      EDDY_RETURN_IF_ERROR(size_of(z, op, x, d, i, &size));
      EDDY_RETURN_IF_ERROR(run_positions(z, op, first, d, size, &pos));
      EDDY_RETURN_IF_ERROR(gather(z, op, r, pos, i, &r));
      continue;
    }
    if (d->kind != SS_RANGE)
      continue;
    // The positions become a constant: bounded, as a Const of the graph
    // would be by its own bytes.
    if (d->size > EDDY_TFL_MAX_POSITIONS)
      return eddy_tfl_error(op,
                            "dimension %lld takes %lld positions: more "
                            "than the %lld a constant index may hold",
                            (long long)i, (long long)d->size,
                            (long long)EDDY_TFL_MAX_POSITIONS);
    int64_t *pos = malloc((size_t)(d->size ? d->size : 1) * sizeof *pos);
    if (!pos)
      return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    for (int64_t j = 0; j < d->size; j++)
      pos[j] = d->begin + j * d->stride;
    eddy_value_t *idx = NULL;
    eddy_status_t st = const_index(z, pos, d->size, 1, &idx);
    free(pos);
    EDDY_RETURN_IF_ERROR(st);
    EDDY_RETURN_IF_ERROR(gather(z, op, r, idx, i, &r));
  }
  for (int64_t i = s->rank; i-- > 0;) {
    const ss_dim_t *d = &s->d[i];
    if (d->kind != SS_INDEX)
      continue;
    eddy_value_t *idx = NULL, *size = NULL;
    if (d->rt_begin) {
      EDDY_RETURN_IF_ERROR(size_of(z, op, x, d, i, &size));
      EDDY_RETURN_IF_ERROR(run_index(z, op, first, d, size, &idx));
    } else {
      EDDY_RETURN_IF_ERROR(index_value(z, op, x, i, d->begin, &idx));
    }
    EDDY_RETURN_IF_ERROR(gather(z, op, r, idx, i, &r));
  }
  bool any_new = false;
  for (int64_t k = 0; k < s->nout; k++)
    any_new = any_new || s->out[k] == SS_NEW_AXIS;
  if (any_new) {
    // r has the kept dimensions in order; the new axes go between them.
    int64_t dims[MAXR], from[MAXR], j = 0;
    for (int64_t k = 0; k < s->nout; k++) {
      from[k] = s->out[k] == SS_NEW_AXIS ? -1 : j;
      dims[k] = s->out[k] == SS_NEW_AXIS ? 1 : r->type->dims[j++];
    }
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape_keep(z, op, r, dims,
                                               (size_t)s->nout, from, &r));
  }
  *out = r;
  return NULL;
}

static eddy_status_t apply(eddy_tfl_t *z, const eddy_op_t *op, eddy_value_t *x,
                           const ss_spec_t *s, size_t first,
                           eddy_value_t **out) {
  return slice_fits(s) ? apply_slice(z, op, x, s, out)
                       : apply_gathers(z, op, x, s, first, out);
}

/// x[i] with a run-time i: begin = [i], end = [i + 1], strides = [1],
/// shrink_axis_mask = 1 (how TensorFlow indexes loop inputs).
static bool is_run_time_index(eddy_tfl_t *z, const eddy_op_t *op,
                              size_t first) {
  int64_t st[MAXR];
  ss_masks_t m = masks_of(op);
  return m.shrink == 1 && m.ellipsis == 0 && m.new_axis == 0 &&
         eddy_tfl_const_ints(z, tfl_in(z, op, first + 2), st, MAXR) == 1 &&
         st[0] == 1;
}

/// The scalar index of x[i] with a run-time i into dimension 0 of size d
/// (a value of x's dimension 0 when d is NULL): a negative i counts from
/// the end, select(i < 0, i + d, i).
static eddy_status_t run_time_index(eddy_tfl_t *z, const eddy_op_t *op,
                                    eddy_value_t *x, const int64_t *d,
                                    eddy_value_t **out) {
  eddy_value_t *i = NULL, *size = NULL, *zero = NULL, *neg = NULL,
               *wrapped = NULL, *ops[3];
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, tfl_in(z, op, 1), NULL, 0, &i));
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, i, EDDY_DT_I64, &i));
  if (d) {
    EDDY_RETURN_IF_ERROR(const_index(z, d, 1, 0, &size));
  } else {
    eddy_named_attr_t a = eddy_ir_named_attr(
        z->ctx, "index", eddy_ir_int_attr_get(z->ctx, 0, EDDY_DT_I64));
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.dim", &x, 1, &a, 1, &size));
  }
  int64_t z0 = 0;
  EDDY_RETURN_IF_ERROR(const_index(z, &z0, 1, 0, &zero));
  ops[0] = i;
  ops[1] = zero;
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.lt", ops, 2, NULL, 0, &neg));
  ops[1] = size;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.add", ops, 2, NULL, 0, &wrapped));
  ops[0] = neg;
  ops[1] = wrapped;
  ops[2] = i;
  return eddy_tfl_build(z, op, "core.select", ops, 3, NULL, 0, out);
}

eddy_status_t eddy_tfl_lower_strided_slice(eddy_tfl_t *z,
                                           const eddy_op_t *op) {
  eddy_value_t *x = tfl_in(z, op, 0), *r = NULL;
  int64_t dims[MAXR];
  bool ranked = tfl_dims_of(x->type, dims);
  if (eddy_tfl_const(z, tfl_in(z, op, 1)) == NULL &&
      is_run_time_index(z, op, 1)) {
    if (ranked && x->type->rank < 1)
      return eddy_tfl_error(op, "the operand is a scalar");
    bool d0 = ranked && dims[0] != EDDY_DIM_DYNAMIC;
    eddy_value_t *idx = NULL;
    EDDY_RETURN_IF_ERROR(run_time_index(z, op, x, d0 ? &dims[0] : NULL, &idx));
    EDDY_RETURN_IF_ERROR(gather(z, op, x, idx, 0, &r));
    eddy_tfl_set(z, &op->results[0], r);
    return NULL;
  }
  if (!ranked)
    return eddy_tfl_error(op, "the operand's rank is unknown");
  ss_spec_t s;
  EDDY_RETURN_IF_ERROR(resolve(z, op, dims, x->type->rank, 1, false, &s));
  EDDY_RETURN_IF_ERROR(apply(z, op, x, &s, 1, &r));
  eddy_tfl_set(z, &op->results[0], r);
  return NULL;
}

/// Gradient of x[i] with a run-time i: row i of zeros(dims) replaced by
/// dy, select(iota == i, dy, 0).
static eddy_status_t grad_run_time_index(eddy_tfl_t *z, const eddy_op_t *op,
                                         const int64_t *dims, int64_t rank,
                                         eddy_value_t **out) {
  eddy_value_t *dy = tfl_in(z, op, 4), *idx = NULL, *mask = NULL, *zero = NULL;
  EDDY_RETURN_IF_ERROR(run_time_index(z, op, NULL, &dims[0], &idx));
  const eddy_type_t *it = eddy_ir_tensor_type_get(z->ctx, EDDY_DT_I64, 1, dims);
  eddy_named_attr_t a = eddy_ir_named_attr(
      z->ctx, "dimension", eddy_ir_int_attr_get(z->ctx, 0, EDDY_DT_I64));
  eddy_op_t *o = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build_typed(z, op, "core.iota", NULL, 0, &a, 1, &it, 1, &o));
  eddy_value_t *cmp[2] = {eddy_ir_op_result(o, 0), idx};
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.eq", cmp, 2, NULL, 0, &mask));
  int64_t md[MAXR], dd[MAXR];
  for (int64_t i = 0; i < rank; i++) {
    md[i] = i == 0 ? dims[0] : 1;
    dd[i] = i == 0 ? 1 : dims[i];
  }
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, mask, md, (size_t)rank, &mask));
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, dy, dd, (size_t)rank, &dy));
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_splat(z, dy->type->dtype, (int32_t)rank, dims, 0.0, &zero));
  eddy_value_t *ops[3] = {mask, dy, zero};
  return eddy_tfl_build(z, op, "core.select", ops, 3, NULL, 0, out);
}

/// Dimension `axis` of v (of static type, `k` long there) spread to the
/// `d` positions of the operand: position pos[j] gets element j, the others
/// 0. v gets one slice of zeros appended and is gathered by the inverse of
/// pos (k, the zeros, where no element goes).
static eddy_status_t scatter_dim(eddy_tfl_t *z, const eddy_op_t *op,
                                 eddy_value_t *v, int64_t axis,
                                 const ss_dim_t *d, eddy_value_t **out) {
  int64_t dims[MAXR];
  int32_t rank = v->type->rank;
  for (int32_t i = 0; i < rank; i++)
    dims[i] = v->type->dims[i];
  dims[axis] = 1;
  eddy_value_t *zero = NULL, *ext = NULL, *idx = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_splat(z, v->type->dtype, rank, dims, 0.0, &zero));
  eddy_value_t *parts[2] = {v, zero};
  eddy_named_attr_t a = eddy_ir_named_attr(
      z->ctx, "axis", eddy_ir_int_attr_get(z->ctx, axis, EDDY_DT_I64));
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.concat", parts, 2, &a, 1, &ext));
  int64_t *inv = malloc((size_t)(d->dim ? d->dim : 1) * sizeof *inv);
  if (!inv)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (int64_t p = 0; p < d->dim; p++)
    inv[p] = d->size;
  for (int64_t j = 0; j < d->size; j++)
    inv[d->begin + j * d->stride] = j;
  eddy_status_t st = const_index(z, inv, d->dim, 1, &idx);
  free(inv);
  EDDY_RETURN_IF_ERROR(st);
  return gather(z, op, ext, idx, axis, out);
}

/// The run-time size of dimension i of the sliced operand, read from the
/// shape vector (not from the tensor it may be the Shape of: in a v1 loop
/// kept as dataflow, that tensor may belong to another frame).
static eddy_status_t shape_dim(eddy_tfl_t *z, const eddy_op_t *op,
                               eddy_value_t *shape, int64_t i,
                               eddy_value_t **out) {
  return vec_elem(z, op, shape, i, out);
}

/// core.range(start, start + n) of i64 scalars: the positions a run-time
/// slice or pad takes along one dimension.
static eddy_status_t positions(eddy_tfl_t *z, const eddy_op_t *op,
                               eddy_value_t *start, eddy_value_t *n,
                               eddy_value_t **out) {
  eddy_value_t *one = NULL, *end = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 1, &one));
  EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.add", start, n, &end));
  eddy_value_t *ops[3] = {start, end, one};
  return eddy_tfl_build(z, op, "core.range", ops, 3, NULL, 0, out);
}

/// The shape operand of a StridedSliceGrad known at run time only: its
/// length (the operand's rank) must be known; a dim is static where the
/// tensor it is the Shape of has it static.
static eddy_status_t run_time_shape(eddy_tfl_t *z, const eddy_op_t *op,
                                    eddy_value_t *shape, int64_t *dims,
                                    int64_t *rank) {
  const eddy_type_t *st = shape->type;
  if (st->kind != EDDY_TYPE_TENSOR || st->rank != 1 || st->dims[0] < 0 ||
      eddy_dtype_is_float(st->dtype))
    return eddy_tfl_error(op, "the shape of the sliced operand is neither a "
                              "constant nor an integer vector of known "
                              "length");
  if (st->dims[0] > MAXR)
    return eddy_tfl_error(op, "the sliced operand's rank %lld is above %d",
                          (long long)st->dims[0], MAXR);
  *rank = st->dims[0];
  eddy_value_t *src = eddy_tfl_shape_source(shape);
  for (int64_t i = 0; i < *rank; i++)
    dims[i] = src && src->type->rank == *rank && src->type->dims[i] >= 0
                  ? src->type->dims[i]
                  : EDDY_DIM_DYNAMIC;
  return NULL;
}

/// Dimension `axis` of v (its dy, `d->size` or 1 long there) spread into
/// the operand's dimension: core.scatter at the positions the slice took
/// (`run`, when computed at run time) into its size, read at run time when
/// dynamic (an index from the end then counts from that size).
static eddy_status_t scatter_positions(eddy_tfl_t *z, const eddy_op_t *op,
                                       eddy_value_t *v, eddy_value_t *shape,
                                       int64_t axis, const ss_dim_t *d,
                                       eddy_value_t *run, eddy_value_t **out) {
  eddy_value_t *size = NULL, *idx = run;
  bool dyn = d->dim == EDDY_DIM_DYNAMIC;
  if (dyn)
    EDDY_RETURN_IF_ERROR(shape_dim(z, op, shape, axis, &size));
  if (!run && d->kind == SS_INDEX) {
    int64_t one = 1;
    if (d->begin < 0 && dyn) {
      EDDY_RETURN_IF_ERROR(const_index(z, &d->begin, 1, 0, &idx));
      EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.add", size, idx, &idx));
      EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, idx, &one, 1, &idx));
    } else {
      EDDY_RETURN_IF_ERROR(const_index(z, &d->begin, 1, 1, &idx));
    }
  } else if (!run) {
    int64_t *pos = malloc((size_t)(d->size ? d->size : 1) * sizeof *pos);
    if (!pos)
      return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
    for (int64_t j = 0; j < d->size; j++)
      pos[j] = d->begin + j * d->stride;
    eddy_status_t st = const_index(z, pos, d->size, 1, &idx);
    free(pos);
    EDDY_RETURN_IF_ERROR(st);
  }
  eddy_value_t *ops[3] = {idx, v, size};
  eddy_named_attr_t a[2] = {
      eddy_ir_named_attr(z->ctx, "axis",
                         eddy_ir_int_attr_get(z->ctx, axis, EDDY_DT_I64)),
      eddy_ir_named_attr(z->ctx, "size",
                         eddy_ir_int_attr_get(z->ctx, dyn ? -1 : d->dim,
                                              EDDY_DT_I64))};
  return eddy_tfl_build(z, op, "core.scatter", ops, dyn ? 3 : 2, a, 2, out);
}

/// StridedSliceGrad(shape, begin, end, strides, dy): dy placed where the
/// slice was taken, zeros elsewhere. shape is a constant, or a vector of
/// known length whose dims are read at run time where not static (the
/// gradient of a slice of a tensor of dynamic shape): a dynamic dimension
/// the slice takes whole stays as it is, one it indexes or slices gets dy
/// scattered into its run-time size.
eddy_status_t eddy_tfl_lower_strided_slice_grad(eddy_tfl_t *z,
                                                const eddy_op_t *op) {
  int64_t dims[MAXR];
  eddy_value_t *shape = tfl_in(z, op, 0);
  int64_t rank = eddy_tfl_const_ints(z, shape, dims, MAXR);
  bool dynamic = rank < 0;
  if (dynamic)
    EDDY_RETURN_IF_ERROR(run_time_shape(z, op, shape, dims, &rank));
  for (int64_t i = 0; i < rank && !dynamic; i++)
    if (dims[i] < 0)
      return eddy_tfl_error(op, "dimension %lld of the shape is %lld",
                            (long long)i, (long long)dims[i]);
  eddy_value_t *r = NULL;
  if (rank >= 1 && eddy_tfl_const(z, tfl_in(z, op, 1)) == NULL &&
      is_run_time_index(z, op, 1)) {
    for (int64_t i = 0; i < rank; i++)
      if (dims[i] < 0)
        return eddy_tfl_error(op, "the gradient of x[i] with a run-time i "
                                  "needs x of static shape; dimension %lld "
                                  "is dynamic",
                              (long long)i);
    EDDY_RETURN_IF_ERROR(grad_run_time_index(z, op, dims, rank, &r));
    eddy_tfl_set(z, &op->results[0], r);
    return NULL;
  }
  ss_spec_t s;
  EDDY_RETURN_IF_ERROR(resolve(z, op, dims, rank, 1, true, &s));
  // dy with one dimension per dimension of the operand (new axes gone,
  // shrunk dimensions back as 1); the positions of the dimensions that
  // take them at run time.
  int64_t sd[MAXR];
  eddy_value_t *sdv[MAXR] = {NULL}, *pos[MAXR] = {NULL};
  int ndyn = 0;
  for (int64_t i = 0; i < rank; i++) {
    const ss_dim_t *d = &s.d[i];
    sd[i] = d->kind == SS_WHOLE   ? dims[i]
            : d->kind == SS_INDEX ? 1
            : d->kind == SS_TAIL || d->kind == SS_RUN ? EDDY_DIM_DYNAMIC
                                                      : d->size;
    ndyn += sd[i] < 0;
    if (d->kind != SS_RUN && !d->rt_begin)
      continue;
    eddy_value_t *size = NULL;
    int64_t one = 1;
    EDDY_RETURN_IF_ERROR(shape_dim(z, op, shape, i, &size));
    if (d->kind == SS_RUN) {
      EDDY_RETURN_IF_ERROR(run_positions(z, op, 1, d, size, &pos[i]));
    } else {
      EDDY_RETURN_IF_ERROR(run_index(z, op, 1, d, size, &pos[i]));
      EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, pos[i], &one, 1, &pos[i]));
    }
  }
  for (int64_t i = 0; i < rank && ndyn > 1; i++) {
    if (sd[i] >= 0)
      continue;
    if (s.d[i].kind == SS_RUN) { // as many as the positions
      EDDY_RETURN_IF_ERROR(eddy_tfl_dim(z, op, pos[i], 0, &sdv[i]));
      continue;
    }
    EDDY_RETURN_IF_ERROR(shape_dim(z, op, shape, i, &sdv[i]));
    if (s.d[i].kind == SS_TAIL) { // the size less begin
      eddy_value_t *b = NULL;
      EDDY_RETURN_IF_ERROR(const_index(z, &s.d[i].begin, 1, 0, &b));
      EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.sub", sdv[i], b, &sdv[i]));
    }
  }
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape_dyn(z, op, tfl_in(z, op, 4), sd,
                                            (size_t)rank, sdv, &r));
  // Contiguous pieces are padded (all at once); strided or reversed ones
  // are scattered first.
  int64_t lo[MAXR], hi[MAXR];
  bool pad = false;
  for (int64_t i = 0; i < rank; i++) {
    const ss_dim_t *d = &s.d[i];
    lo[i] = hi[i] = 0;
    if (d->kind == SS_WHOLE)
      continue;
    if (d->kind == SS_TAIL) { // dy then zeros before it
      lo[i] = d->begin;
      pad = true;
      continue;
    }
    // A dynamic dimension, or a strided or reversed piece of a tensor with
    // one (scatter_dim's zeros need a static shape), is scattered; the
    // others are padded below.
    if (pos[i] || d->dim == EDDY_DIM_DYNAMIC ||
        (d->kind == SS_RANGE && d->size > 1 && d->stride != 1 &&
         !eddy_ir_type_is_static(r->type))) {
      EDDY_RETURN_IF_ERROR(
          scatter_positions(z, op, r, shape, i, d, pos[i], &r));
      continue;
    }
    if (d->kind == SS_RANGE && d->size > 1 && d->stride != 1) {
      EDDY_RETURN_IF_ERROR(scatter_dim(z, op, r, i, d, &r));
      continue;
    }
    int64_t n = d->kind == SS_INDEX ? 1 : d->size;
    lo[i] = n ? d->begin : 0;
    hi[i] = dims[i] - lo[i] - n;
    pad = pad || lo[i] || hi[i];
  }
  if (pad) {
    eddy_value_t *zero = NULL;
    EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, r->type->dtype, 0, NULL, 0.0, &zero));
    eddy_value_t *ops[2] = {r, zero};
    eddy_named_attr_t a[2] = {
        eddy_ir_named_attr(z->ctx, "low", eddy_ir_i64_array_attr_get(
                                              z->ctx, lo, (size_t)rank)),
        eddy_ir_named_attr(z->ctx, "high", eddy_ir_i64_array_attr_get(
                                               z->ctx, hi, (size_t)rank))};
    EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.pad", ops, 2, a, 2, &r));
  }
  eddy_tfl_set(z, &op->results[0], r);
  return NULL;
}

/// Slice(x, begin, size) with begin or size known at run time only (the
/// gradient of a concat of tensors of run-time shape: ConcatOffset and
/// ShapeN): each dimension gathered at core.range(begin, begin + size), a
/// size < 0 taking the rest; the gathers check the bounds at run time.
static eddy_status_t slice_run_time(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = tfl_in(z, op, 0), *r = x;
  const eddy_type_t *xt = x->type;
  if (xt->kind != EDDY_TYPE_TENSOR || xt->rank == EDDY_RANK_UNKNOWN ||
      xt->rank > MAXR)
    return eddy_tfl_error(op, "begin and size are not constants and the "
                              "operand's rank is unknown");
  for (size_t k = 1; k <= 2; k++) {
    const eddy_type_t *t = tfl_in(z, op, k)->type;
    if (t->kind != EDDY_TYPE_TENSOR || eddy_dtype_is_float(t->dtype) ||
        (t->rank != EDDY_RANK_UNKNOWN &&
         (t->rank != 1 || (t->dims[0] >= 0 && t->dims[0] != xt->rank))))
      return eddy_tfl_error(op, "%s must be an integer vector of %d "
                                "entries, one per dimension",
                            k == 1 ? "begin" : "size", (int)xt->rank);
  }
  for (int32_t i = 0; i < xt->rank; i++) {
    eddy_value_t *b = NULL, *n = NULL, *d = NULL, *rest = NULL, *neg = NULL,
                 *zero = NULL, *pos = NULL;
    EDDY_RETURN_IF_ERROR(vec_elem(z, op, tfl_in(z, op, 1), i, &b));
    EDDY_RETURN_IF_ERROR(vec_elem(z, op, tfl_in(z, op, 2), i, &n));
    EDDY_RETURN_IF_ERROR(eddy_tfl_dim(z, op, r, i, &d));
    int64_t nc = 0;
    bool known = eddy_tfl_const_ints(z, n, &nc, 1) == 1;
    if (!known || nc < 0)
      EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.sub", d, b, &rest));
    if (!known) {
      EDDY_RETURN_IF_ERROR(
          eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 0, &zero));
      EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.lt", n, zero, &neg));
      EDDY_RETURN_IF_ERROR(tfl_sel(z, op, neg, rest, n, &n));
    } else if (nc < 0) {
      n = rest;
    }
    EDDY_RETURN_IF_ERROR(positions(z, op, b, n, &pos));
    EDDY_RETURN_IF_ERROR(gather(z, op, r, pos, i, &r));
  }
  eddy_tfl_set(z, &op->results[0], r);
  return NULL;
}

/// Slice(x, begin, size): size -1 takes the rest of the dimension.
eddy_status_t eddy_tfl_lower_slice(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = tfl_in(z, op, 0), *r = NULL;
  int64_t dims[MAXR], b[MAXR], sz[MAXR];
  int64_t nb = eddy_tfl_const_ints(z, tfl_in(z, op, 1), b, MAXR);
  int64_t ns = eddy_tfl_const_ints(z, tfl_in(z, op, 2), sz, MAXR);
  if (nb < 0 || ns < 0)
    return slice_run_time(z, op);
  if (ns != nb)
    return eddy_tfl_error(op, "begin and size must be constants of equal "
                              "length");
  if (!tfl_dims_of(x->type, dims) || x->type->rank != nb)
    return eddy_tfl_error(op, "begin and size have %lld entries for an "
                              "operand of %s rank",
                          (long long)nb,
                          x->type->rank == EDDY_RANK_UNKNOWN ? "unknown"
                                                              : "another");
  ss_spec_t s = {.rank = nb, .nout = nb};
  for (int64_t i = 0; i < nb; i++) {
    int64_t d = dims[i], n = sz[i];
    s.out[i] = i;
    s.d[i] = (ss_dim_t){.kind = SS_WHOLE, .dim = d, .stride = 1};
    if (b[i] < 0 || n < -1 || (d != EDDY_DIM_DYNAMIC && b[i] > d))
      return eddy_tfl_error(op, "dimension %lld: begin %lld and size %lld "
                                "are out of range",
                            (long long)i, (long long)b[i], (long long)n);
    if (n == -1) {
      if (b[i] == 0)
        continue; // the whole dimension
      if (d == EDDY_DIM_DYNAMIC) { // from begin to the run-time end
        s.d[i] = (ss_dim_t){.kind = SS_RUN, .dim = d, .begin = b[i],
                            .stride = 1, .em = true};
        continue;
      }
      n = d - b[i];
    }
    if (d != EDDY_DIM_DYNAMIC && n > d - b[i])
      return eddy_tfl_error(op, "dimension %lld: begin %lld + size %lld is "
                                "past its size %lld",
                            (long long)i, (long long)b[i], (long long)n,
                            (long long)d);
    if (d == EDDY_DIM_DYNAMIC && n > MAX_POSITIONS)
      return eddy_tfl_error(op, "dimension %lld: size %lld is too large",
                            (long long)i, (long long)n);
    if (b[i] == 0 && n == d)
      continue;
    s.d[i] = (ss_dim_t){.kind = SS_RANGE, .dim = d, .begin = b[i],
                        .stride = 1, .size = n};
  }
  EDDY_RETURN_IF_ERROR(apply(z, op, x, &s, 1, &r));
  eddy_tfl_set(z, &op->results[0], r);
  return NULL;
}

/// Pad(x, paddings) (or PadV2 with a constant value 0) with paddings known
/// at run time only (the gradient of a Slice of a tensor of dynamic
/// shape): each dimension of x scattered into zeros of size low + dim +
/// high at positions low, low + 1, ...; a negative padding is a run-time
/// error of the range or the scatter.
static eddy_status_t pad_run_time(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = tfl_in(z, op, 0), *p = tfl_in(z, op, 1), *r = x;
  const eddy_type_t *xt = x->type, *pt = p->type;
  if (xt->kind != EDDY_TYPE_TENSOR || xt->rank == EDDY_RANK_UNKNOWN ||
      xt->rank > MAXR)
    return eddy_tfl_error(op, "the paddings are not a constant and the "
                              "operand's rank is unknown");
  if (pt->kind != EDDY_TYPE_TENSOR || eddy_dtype_is_float(pt->dtype) ||
      (pt->rank != EDDY_RANK_UNKNOWN &&
       (pt->rank != 2 || (pt->dims[0] >= 0 && pt->dims[0] != xt->rank) ||
        (pt->dims[1] >= 0 && pt->dims[1] != 2))))
    return eddy_tfl_error(op, "the paddings must be an integer [%d, 2] "
                              "tensor",
                          (int)xt->rank);
  if (op->num_operands == 3) {
    int64_t v = 0;
    double f = 0.0;
    const eddy_attr_t *c = eddy_tfl_const(z, tfl_in(z, op, 2));
    if (c && eddy_dtype_is_float(c->type->dtype))
      f = eddy_ir_dense_attr_f64(c, 0);
    else if (c)
      v = eddy_ir_dense_attr_i64(c, 0);
    if (!c || f != 0.0 || v != 0)
      return eddy_tfl_error(op, "with paddings known at run time only, the "
                                "pad value must be a constant 0");
  }
  int64_t flat = 2 * (int64_t)xt->rank;
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, p, &flat, 1, &p));
  for (int32_t i = 0; i < xt->rank; i++) {
    eddy_value_t *lo = NULL, *hi = NULL, *d = NULL, *pos = NULL,
                 *size = NULL;
    EDDY_RETURN_IF_ERROR(vec_elem(z, op, p, 2 * i, &lo));
    EDDY_RETURN_IF_ERROR(vec_elem(z, op, p, 2 * i + 1, &hi));
    EDDY_RETURN_IF_ERROR(eddy_tfl_dim(z, op, r, i, &d));
    EDDY_RETURN_IF_ERROR(positions(z, op, lo, d, &pos));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.add", lo, d, &size));
    EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.add", size, hi, &size));
    eddy_value_t *ops[3] = {pos, r, size};
    eddy_named_attr_t a[2] = {
        eddy_ir_named_attr(z->ctx, "axis",
                           eddy_ir_int_attr_get(z->ctx, i, EDDY_DT_I64)),
        eddy_ir_named_attr(z->ctx, "size",
                           eddy_ir_int_attr_get(z->ctx, -1, EDDY_DT_I64))};
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.scatter", ops, 3, a, 2, &r));
  }
  eddy_tfl_set(z, &op->results[0], r);
  return NULL;
}

/// Pad(x, paddings) and PadV2(x, paddings, value), paddings a constant
/// [rank, 2] (or known at run time only: pad_run_time).
eddy_status_t eddy_tfl_lower_pad(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = tfl_in(z, op, 0), *v = NULL, *r = NULL;
  int64_t p[2 * MAXR], lo[MAXR], hi[MAXR];
  int64_t n = eddy_tfl_const_ints(z, tfl_in(z, op, 1), p, 2 * MAXR);
  if (n < 0)
    return pad_run_time(z, op);
  if (n % 2)
    return eddy_tfl_error(op, "the paddings are not a constant [rank, 2]");
  for (int64_t i = 0; i < n / 2; i++) {
    lo[i] = p[2 * i];
    hi[i] = p[2 * i + 1];
  }
  if (op->num_operands == 3 &&
      eddy_ir_op_operand(op, 2)->type->kind == EDDY_TYPE_TENSOR)
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_reshape(z, op, tfl_in(z, op, 2), NULL, 0, &v));
  else
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_splat(z, x->type->dtype, 0, NULL, 0.0, &v));
  eddy_value_t *ops[2] = {x, v};
  eddy_named_attr_t a[2] = {
      eddy_ir_named_attr(z->ctx, "low", eddy_ir_i64_array_attr_get(
                                            z->ctx, lo, (size_t)(n / 2))),
      eddy_ir_named_attr(z->ctx, "high", eddy_ir_i64_array_attr_get(
                                             z->ctx, hi, (size_t)(n / 2)))};
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.pad", ops, 2, a, 2, &r));
  eddy_tfl_set(z, &op->results[0], r);
  return NULL;
}

/// x[from, from + n) along axis (static dims), reversed along it when rev.
static eddy_status_t mirror_part(eddy_tfl_t *z, const eddy_op_t *op,
                                 eddy_value_t *x, int32_t axis, int64_t from,
                                 int64_t n, bool rev, eddy_value_t **out) {
  const eddy_type_t *t = x->type;
  int64_t start[MAXR], limit[MAXR];
  for (int32_t i = 0; i < t->rank; i++) {
    start[i] = i == axis ? from : 0;
    limit[i] = i == axis ? from + n : t->dims[i];
  }
  eddy_named_attr_t a[2] = {
      eddy_tfl_ints_attr(z, "start", start, (size_t)t->rank),
      eddy_tfl_ints_attr(z, "limit", limit, (size_t)t->rank)};
  eddy_value_t *part = NULL;
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.slice", &x, 1, a, 2, &part));
  *out = part;
  if (!rev)
    return NULL;
  int64_t ax = axis;
  eddy_named_attr_t ra = eddy_tfl_ints_attr(z, "axes", &ax, 1);
  return eddy_tfl_build(z, op, "core.reverse", &part, 1, &ra, 1, out);
}

/// MirrorPad(x, paddings) {mode = REFLECT | SYMMETRIC} and
/// MirrorPadGrad(dy, paddings) {mode}, paddings a constant [rank, 2] and
/// every padded dim static. Per padded axis of size d (of x), REFLECT
/// mirrors without the edge (pads x[lo], ..., x[1] in front and x[d-2], ...
/// x[d-1-hi] behind; lo, hi <= d - 1), SYMMETRIC with it (x[lo-1], ...,
/// x[0]; lo, hi <= d). The pad is a concat of the reversed slices; its
/// gradient adds the reversed slices of dy at the rows they came from.
eddy_status_t eddy_tfl_lower_mirror_pad(eddy_tfl_t *z, const eddy_op_t *op) {
  bool grad = tfl_is(op, "tf.MirrorPadGrad");
  eddy_value_t *r = tfl_in(z, op, 0);
  const eddy_type_t *t = r->type;
  const eddy_attr_t *ma = eddy_ir_op_attr(op, "mode");
  const char *mode = ma && ma->kind == EDDY_ATTR_STRING ? ma->u.str.data : "";
  bool reflect = strcmp(mode, "REFLECT") == 0;
  if (!reflect && strcmp(mode, "SYMMETRIC") != 0)
    return eddy_tfl_error(op, "mode \"%s\" is neither REFLECT nor SYMMETRIC",
                          mode);
  int64_t p[2 * MAXR];
  int64_t n = eddy_tfl_const_ints(z, tfl_in(z, op, 1), p, 2 * MAXR);
  if (t->kind != EDDY_TYPE_TENSOR || t->rank == EDDY_RANK_UNKNOWN ||
      n != 2 * (int64_t)t->rank)
    return eddy_tfl_error(op, "needs constant paddings [rank, 2] and an "
                              "operand of known rank");
  int64_t edge = reflect ? 1 : 0;
  for (int32_t i = 0; i < t->rank; i++) {
    int64_t lo = p[2 * i], hi = p[2 * i + 1], dim = r->type->dims[i];
    if (lo == 0 && hi == 0)
      continue;
    // x's size along the axis: dy's less the padding.
    int64_t d = grad && dim >= 0 ? dim - lo - hi : dim;
    if (dim < 0)
      return eddy_tfl_error(op, "padded dimension %d must be static", (int)i);
    if (lo < 0 || hi < 0 || lo > d - edge || hi > d - edge)
      return eddy_tfl_error(op, "paddings %lld and %lld of dimension %d do "
                                "not fit its size %lld in %s mode",
                            (long long)lo, (long long)hi, (int)i,
                            (long long)d, mode);
    eddy_value_t *front = NULL, *mid = NULL, *back = NULL;
    if (!grad) {
      EDDY_RETURN_IF_ERROR(mirror_part(z, op, r, i, edge, lo, true, &front));
      EDDY_RETURN_IF_ERROR(
          mirror_part(z, op, r, i, d - edge - hi, hi, true, &back));
      eddy_value_t *parts[3] = {front, r, back};
      eddy_named_attr_t a = eddy_tfl_int_attr(z, "axis", i);
      EDDY_RETURN_IF_ERROR(
          eddy_tfl_build(z, op, "core.concat", parts, 3, &a, 1, &r));
      continue;
    }
    // dy's rows [0, lo) reversed land on x's [edge, edge + lo), its rows
    // [lo + d, lo + d + hi) reversed on [d - edge - hi, d - edge).
    EDDY_RETURN_IF_ERROR(mirror_part(z, op, r, i, 0, lo, true, &front));
    EDDY_RETURN_IF_ERROR(mirror_part(z, op, r, i, lo + d, hi, true, &back));
    EDDY_RETURN_IF_ERROR(mirror_part(z, op, r, i, lo, d, false, &mid));
    int64_t plo[MAXR] = {0}, phi[MAXR] = {0};
    eddy_value_t *zero = NULL;
    EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, t->dtype, 0, NULL, 0.0, &zero));
    for (int k = 0; k < 2; k++) {
      int64_t at = k == 0 ? edge : d - edge - hi, len = k == 0 ? lo : hi;
      plo[i] = at;
      phi[i] = d - at - len;
      eddy_named_attr_t a[2] = {
          eddy_tfl_ints_attr(z, "low", plo, (size_t)t->rank),
          eddy_tfl_ints_attr(z, "high", phi, (size_t)t->rank)};
      eddy_value_t *ops[2] = {k == 0 ? front : back, zero}, *padded = NULL;
      EDDY_RETURN_IF_ERROR(
          eddy_tfl_build(z, op, "core.pad", ops, 2, a, 2, &padded));
      EDDY_RETURN_IF_ERROR(tfl_bin(z, op, "core.add", mid, padded, &mid));
    }
    r = mid;
  }
  eddy_tfl_set(z, &op->results[0], r);
  return NULL;
}
