/// legalize-tf: CropAndResize and its gradients CropAndResizeGradImage and
/// CropAndResizeGradBoxes (tf.image.crop_and_resize, the region-of-interest
/// pooling of detection models), with core ops: the boxes are run-time
/// values, so each crop position's sampling point is computed in f32 as
/// TensorFlow's CPU kernel does, and the image is read with core.gather at
/// the linear indices of its rows (batch, y, x) and written back by the
/// image gradient with core.scatter.
///
/// For box b = (y1, x1, y2, x2) and crop height ch > 1, output row y reads
/// the image at in_y = y1 * (H - 1) + y * ((y2 - y1) * (H - 1) / (ch - 1));
/// with ch = 1 at 0.5 * (y1 + y2) * (H - 1); x likewise. A point outside
/// [0, H - 1] x [0, W - 1] (or NaN) gives the extrapolation value, and no
/// gradient. "bilinear" mixes the four neighbours floor/ceil(in_y) x
/// floor/ceil(in_x); "nearest" reads roundf(in_y), roundf(in_x) (ties away
/// from zero).
#include "lower/tf/tf_lower_internal.h"

#include <stdlib.h>
#include <string.h>

/// What the three ops share: the sampling of the crops.
typedef struct crop {
  const eddy_op_t *op;
  bool nearest;
  int64_t ch, cw;       ///< crop height and width (static)
  eddy_value_t *dim[4]; ///< the image's B, H, W, C as i64 scalars
  int64_t sdim[4];      ///< ... and their static values (-1: dynamic)
  eddy_value_t *boxes;  ///< [N, 4] f32
  eddy_value_t *bidx;   ///< [N, 1, 1] i64: the box's image row (-1: bad)
  /// Per axis (0: y, [N, ch, 1]; 1: x, [N, 1, cw]): whether the sampling
  /// point is inside the image, the lower and upper neighbours (i64, 0
  /// outside) and the weight of the upper one (bilinear), or the nearest
  /// position (in lo).
  eddy_value_t *valid[2], *lo[2], *hi[2], *lerp[2];
  eddy_value_t *ok; ///< [N, ch, cw, 1] i1: both axes inside
} crop_t;

static const char *const CROP_OPS[] = {
    "CropAndResize",
    "CropAndResizeGradBoxes",
    "CropAndResizeGradImage",
};

void eddy_tfl_crop_ops_each(void (*fn)(const char *name, void *user),
                            void *user) {
  for (size_t i = 0; i < sizeof CROP_OPS / sizeof CROP_OPS[0]; i++)
    fn(CROP_OPS[i], user);
}

static eddy_status_t un(eddy_tfl_t *z, const crop_t *c, const char *name,
                        eddy_value_t *x, eddy_value_t **out) {
  return eddy_tfl_build(z, c->op, name, &x, 1, NULL, 0, out);
}

static eddy_status_t bin(eddy_tfl_t *z, const crop_t *c, const char *name,
                         eddy_value_t *a, eddy_value_t *b, eddy_value_t **out) {
  return tfl_bin(z, c->op, name, a, b, out);
}

static eddy_status_t f32(eddy_tfl_t *z, double x, eddy_value_t **out) {
  return eddy_tfl_splat(z, EDDY_DT_F32, 0, NULL, x, out);
}

/// The image dims B, H, W, C from a rank-4 value's type (dynamic ones read
/// with core.dim), or from the 1-D operand `size` (image_size).
static eddy_status_t image_dims(eddy_tfl_t *z, crop_t *c, eddy_value_t *img,
                                eddy_value_t *size) {
  const eddy_op_t *op = c->op;
  if (img && img->type->rank != 4)
    return eddy_tfl_error(op, "the image must have rank 4 (NHWC)");
  int64_t k[4];
  bool known = size && eddy_tfl_const_ints(z, size, k, 4) == 4;
  if (size && !known && (size->type->rank != 1 || size->type->dims[0] != 4))
    return eddy_tfl_error(op, "image_size must be a vector of 4 integers");
  for (int i = 0; i < 4; i++) {
    c->sdim[i] = img ? img->type->dims[i] : known ? k[i] : -1;
    if (c->sdim[i] >= 0) {
      if (i == 1 || i == 2 ? c->sdim[i] < 1 : c->sdim[i] < 0)
        return eddy_tfl_error(op, "the image's %s must be positive",
                              i == 1 ? "height" : "width");
      EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL,
                                          (double)c->sdim[i], &c->dim[i]));
    } else if (img) {
      EDDY_RETURN_IF_ERROR(eddy_tfl_dim(z, op, img, i, &c->dim[i]));
    } else {
      EDDY_RETURN_IF_ERROR(eddy_tfl_element(z, op, size, i, &c->dim[i]));
      EDDY_RETURN_IF_ERROR(
          eddy_tfl_cast(z, op, c->dim[i], EDDY_DT_I64, &c->dim[i]));
    }
  }
  return NULL;
}

/// The boxes, [N, 4] f32, and box_ind as the row offsets of c->bidx.
static eddy_status_t boxes(eddy_tfl_t *z, crop_t *c, eddy_value_t *bx,
                           eddy_value_t *ind) {
  const eddy_op_t *op = c->op;
  if (bx->type->rank != 2 || (bx->type->dims[1] >= 0 && bx->type->dims[1] != 4))
    return eddy_tfl_error(op, "boxes must have shape [num_boxes, 4]");
  if (ind->type->rank != 1)
    return eddy_tfl_error(op, "box_ind must be a vector");
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, bx, EDDY_DT_F32, &c->boxes));
  // A box index outside [0, B) becomes -1, which the gather (or scatter)
  // reports at run time: TensorFlow's "box_index has values outside [0,
  // batch_size)".
  eddy_value_t *b = NULL, *zero = NULL, *neg = NULL, *big = NULL, *bad = NULL,
               *m1 = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, ind, EDDY_DT_I64, &b));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 0, &zero));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, -1, &m1));
  EDDY_RETURN_IF_ERROR(bin(z, c, "core.lt", b, zero, &neg));
  EDDY_RETURN_IF_ERROR(bin(z, c, "core.ge", b, c->dim[0], &big));
  EDDY_RETURN_IF_ERROR(bin(z, c, "core.or", neg, big, &bad));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, bad, m1, b, &b));
  int64_t d3[3] = {-1, 1, 1};
  return eddy_tfl_reshape(z, op, b, d3, 3, &c->bidx);
}

/// Column `col` of the boxes: [N, 1].
static eddy_status_t box_col(eddy_tfl_t *z, const crop_t *c, int64_t col,
                             eddy_value_t **out) {
  eddy_value_t *idx = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_int_constant(z, EDDY_DT_I64, &col, 1, &idx));
  eddy_value_t *ops[2] = {c->boxes, idx};
  eddy_named_attr_t a = eddy_tfl_int_attr(z, "axis", 1);
  return eddy_tfl_build(z, c->op, "core.gather", ops, 2, &a, 1, out);
}

/// (size - 1) of image dim d as an f32 scalar.
static eddy_status_t last_pos(eddy_tfl_t *z, const crop_t *c, int d,
                              eddy_value_t **out) {
  if (c->sdim[d] >= 0)
    return f32(z, (double)(c->sdim[d] - 1), out);
  eddy_value_t *one = NULL, *v = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 1, &one));
  EDDY_RETURN_IF_ERROR(bin(z, c, "core.sub", c->dim[d], one, &v));
  return eddy_tfl_cast(z, c->op, v, EDDY_DT_F32, out);
}

/// 0, 1, ..., n - 1 as f32, shaped [1, n].
static eddy_status_t positions(eddy_tfl_t *z, const crop_t *c, int64_t n,
                               eddy_value_t **out) {
  int64_t *p = malloc((size_t)n * sizeof *p);
  if (!p)
    return eddy_status_create(EDDY_ERR_RESOURCE, "out of memory");
  for (int64_t i = 0; i < n; i++)
    p[i] = i;
  eddy_value_t *v = NULL;
  int64_t d2[2] = {1, n};
  eddy_status_t st = eddy_tfl_int_constant(z, EDDY_DT_I64, p, n, &v);
  free(p);
  EDDY_RETURN_IF_ERROR(st);
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, c->op, v, EDDY_DT_F32, &v));
  return eddy_tfl_reshape(z, c->op, v, d2, 2, out);
}

/// v [N, n] as [N, n, 1] (axis 0: y) or [N, 1, n] (axis 1: x).
static eddy_status_t along(eddy_tfl_t *z, const crop_t *c, int axis, int64_t n,
                           eddy_value_t *v, eddy_value_t **out) {
  int64_t d3[3] = {-1, axis ? 1 : n, axis ? n : 1};
  return eddy_tfl_reshape(z, c->op, v, d3, 3, out);
}

/// The sampling along one axis (0: y from box columns 0 and 2 and image
/// dim 1; 1: x from columns 1 and 3 and dim 2), in TensorFlow's order of
/// f32 operations, and its neighbours.
static eddy_status_t sample_axis(eddy_tfl_t *z, crop_t *c, int axis) {
  int64_t n = axis ? c->cw : c->ch;
  eddy_value_t *p1 = NULL, *p2 = NULL, *last = NULL, *at = NULL, *t = NULL;
  EDDY_RETURN_IF_ERROR(box_col(z, c, axis, &p1));
  EDDY_RETURN_IF_ERROR(box_col(z, c, axis + 2, &p2));
  EDDY_RETURN_IF_ERROR(last_pos(z, c, axis + 1, &last));
  if (n > 1) {
    // scale = (p2 - p1) * last / (n - 1); at = p1 * last + i * scale.
    eddy_value_t *scale = NULL, *den = NULL, *pos = NULL;
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.sub", p2, p1, &scale));
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.mul", scale, last, &scale));
    EDDY_RETURN_IF_ERROR(f32(z, (double)(n - 1), &den));
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.div", scale, den, &scale));
    EDDY_RETURN_IF_ERROR(positions(z, c, n, &pos));
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.mul", pos, scale, &t));
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.mul", p1, last, &at));
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.add", at, t, &at));
  } else {
    eddy_value_t *half = NULL;
    EDDY_RETURN_IF_ERROR(f32(z, 0.5, &half));
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.add", p1, p2, &at));
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.mul", half, at, &at));
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.mul", at, last, &at));
  }
  EDDY_RETURN_IF_ERROR(along(z, c, axis, n, at, &at));
  // Inside [0, last]; NaN is outside.
  eddy_value_t *zero = NULL, *ge = NULL, *le = NULL, *fl = NULL;
  EDDY_RETURN_IF_ERROR(f32(z, 0.0, &zero));
  EDDY_RETURN_IF_ERROR(bin(z, c, "core.ge", at, zero, &ge));
  EDDY_RETURN_IF_ERROR(bin(z, c, "core.le", at, last, &le));
  EDDY_RETURN_IF_ERROR(bin(z, c, "core.and", ge, le, &c->valid[axis]));
  EDDY_RETURN_IF_ERROR(un(z, c, "core.floor", at, &fl));
  eddy_value_t *lo = fl, *hi = NULL;
  if (c->nearest) {
    // roundf: floor + 1 where the fraction is at least one half.
    eddy_value_t *frac = NULL, *half = NULL, *up = NULL, *one = NULL;
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.sub", at, fl, &frac));
    EDDY_RETURN_IF_ERROR(f32(z, 0.5, &half));
    EDDY_RETURN_IF_ERROR(f32(z, 1.0, &one));
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.ge", frac, half, &up));
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.add", fl, one, &t));
    EDDY_RETURN_IF_ERROR(tfl_sel(z, c->op, up, t, fl, &lo));
  } else {
    EDDY_RETURN_IF_ERROR(un(z, c, "core.ceil", at, &hi));
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.sub", at, fl, &c->lerp[axis]));
    EDDY_RETURN_IF_ERROR(tfl_sel(z, c->op, c->valid[axis], hi, zero, &hi));
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_cast(z, c->op, hi, EDDY_DT_I64, &c->hi[axis]));
  }
  EDDY_RETURN_IF_ERROR(tfl_sel(z, c->op, c->valid[axis], lo, zero, &lo));
  return eddy_tfl_cast(z, c->op, lo, EDDY_DT_I64, &c->lo[axis]);
}

/// The sampling of all crops, from the boxes (operands ib, ib + 1) and the
/// crop size ch x cw.
static eddy_status_t sample(eddy_tfl_t *z, crop_t *c, int ib) {
  const eddy_op_t *op = c->op;
  const eddy_attr_t *m = eddy_ir_op_attr(op, "method");
  const char *method =
      m && m->kind == EDDY_ATTR_STRING ? m->u.str.data : "bilinear";
  if (strcmp(method, "bilinear") != 0 && strcmp(method, "nearest") != 0)
    return eddy_tfl_error(op,
                          "method \"%s\" is not supported (bilinear or "
                          "nearest)",
                          method);
  c->nearest = strcmp(method, "nearest") == 0;
  EDDY_RETURN_IF_ERROR(boxes(z, c, tfl_in(z, op, ib), tfl_in(z, op, ib + 1)));
  for (int a = 0; a < 2; a++)
    EDDY_RETURN_IF_ERROR(sample_axis(z, c, a));
  eddy_value_t *ok = NULL;
  int64_t d4[4] = {-1, c->ch, c->cw, 1};
  EDDY_RETURN_IF_ERROR(bin(z, c, "core.and", c->valid[0], c->valid[1], &ok));
  return eddy_tfl_reshape(z, op, ok, d4, 4, &c->ok);
}

/// The image row (b * H + y) * W + x of the neighbours y (of the lower, or
/// upper, y positions) and x: [N, ch, cw] i64, -1 for a bad box index.
static eddy_status_t rows(eddy_tfl_t *z, const crop_t *c, eddy_value_t *y,
                          eddy_value_t *x, eddy_value_t **out) {
  eddy_value_t *r = NULL, *neg = NULL, *zero = NULL, *m1 = NULL;
  EDDY_RETURN_IF_ERROR(bin(z, c, "core.mul", c->bidx, c->dim[1], &r));
  EDDY_RETURN_IF_ERROR(bin(z, c, "core.add", r, y, &r));
  EDDY_RETURN_IF_ERROR(bin(z, c, "core.mul", r, c->dim[2], &r));
  EDDY_RETURN_IF_ERROR(bin(z, c, "core.add", r, x, &r));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, 0, &zero));
  EDDY_RETURN_IF_ERROR(eddy_tfl_splat(z, EDDY_DT_I64, 0, NULL, -1, &m1));
  EDDY_RETURN_IF_ERROR(bin(z, c, "core.lt", c->bidx, zero, &neg));
  return tfl_sel(z, c->op, neg, m1, r, out);
}

/// The image, cast to f32, as rows [B * H * W, C].
static eddy_status_t flat_image(eddy_tfl_t *z, const crop_t *c,
                                eddy_value_t *img, eddy_value_t **out) {
  eddy_value_t *v = NULL;
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, c->op, img, EDDY_DT_F32, &v));
  int64_t d2[2] = {-1, c->sdim[3]};
  eddy_value_t *dv[2] = {NULL, c->dim[3]};
  if (c->sdim[3] < 0) {
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.mul", c->dim[0], c->dim[1], &dv[0]));
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.mul", dv[0], c->dim[2], &dv[0]));
  }
  return eddy_tfl_reshape_dyn(z, c->op, v, d2, 2, dv, out);
}

/// The image rows at r: [N, ch, cw, C].
static eddy_status_t read_rows(eddy_tfl_t *z, const crop_t *c,
                               eddy_value_t *flat, eddy_value_t *r,
                               eddy_value_t **out) {
  eddy_value_t *ops[2] = {flat, r};
  eddy_named_attr_t a = eddy_tfl_int_attr(z, "axis", 0);
  return eddy_tfl_build(z, c->op, "core.gather", ops, 2, &a, 1, out);
}

/// A per-axis value [N, ch, 1] / [N, 1, cw] as [N, ch, 1, 1] / [N, 1, cw,
/// 1], to weigh [N, ch, cw, C].
static eddy_status_t weight(eddy_tfl_t *z, const crop_t *c, int axis,
                            eddy_value_t *v, eddy_value_t **out) {
  int64_t d4[4] = {-1, axis ? 1 : c->ch, axis ? c->cw : 1, 1};
  return eddy_tfl_reshape(z, c->op, v, d4, 4, out);
}

/// The four neighbours' values [N, ch, cw, C]: v[0] top-left, v[1]
/// top-right, v[2] bottom-left, v[3] bottom-right (nearest: v[0] only).
static eddy_status_t neighbours(eddy_tfl_t *z, const crop_t *c,
                                eddy_value_t *img, eddy_value_t **v) {
  eddy_value_t *flat = NULL, *r = NULL;
  EDDY_RETURN_IF_ERROR(flat_image(z, c, img, &flat));
  for (int k = 0; k < (c->nearest ? 1 : 4); k++) {
    EDDY_RETURN_IF_ERROR(rows(z, c, k & 2 ? c->hi[0] : c->lo[0],
                              k & 1 ? c->hi[1] : c->lo[1], &r));
    EDDY_RETURN_IF_ERROR(read_rows(z, c, flat, r, &v[k]));
  }
  return NULL;
}

/// a + (b - a) * t.
static eddy_status_t lerp(eddy_tfl_t *z, const crop_t *c, eddy_value_t *a,
                          eddy_value_t *b, eddy_value_t *t,
                          eddy_value_t **out) {
  eddy_value_t *d = NULL;
  EDDY_RETURN_IF_ERROR(bin(z, c, "core.sub", b, a, &d));
  EDDY_RETURN_IF_ERROR(bin(z, c, "core.mul", d, t, &d));
  return bin(z, c, "core.add", a, d, out);
}

/// The crop size: constant operand 3 of CropAndResize, or static dims 1
/// and 2 of the grads (operand 0) of the gradients.
static eddy_status_t crop_size(eddy_tfl_t *z, crop_t *c, bool forward) {
  const eddy_op_t *op = c->op;
  int64_t s[2];
  if (forward) {
    if (eddy_tfl_const_ints(z, tfl_in(z, op, 3), s, 2) != 2 || s[0] < 1 ||
        s[1] < 1)
      return eddy_tfl_error(op, "crop_size (operand 3) must be a constant of "
                                "2 positive integers");
  } else {
    const eddy_type_t *g = tfl_in(z, op, 0)->type;
    if (g->rank != 4 || g->dims[1] < 1 || g->dims[2] < 1)
      return eddy_tfl_error(op, "the grads must have rank 4 with a static "
                                "crop height and width");
    s[0] = g->dims[1];
    s[1] = g->dims[2];
  }
  c->ch = s[0];
  c->cw = s[1];
  return NULL;
}

/// CropAndResize(image, boxes, box_ind, crop_size) -> [N, ch, cw, C] f32.
static eddy_status_t crop_and_resize(eddy_tfl_t *z, crop_t *c) {
  const eddy_op_t *op = c->op;
  eddy_value_t *img = tfl_in(z, op, 0), *v[4] = {NULL}, *r = NULL, *ext = NULL;
  EDDY_RETURN_IF_ERROR(crop_size(z, c, true));
  EDDY_RETURN_IF_ERROR(image_dims(z, c, img, NULL));
  EDDY_RETURN_IF_ERROR(sample(z, c, 1));
  EDDY_RETURN_IF_ERROR(neighbours(z, c, img, v));
  if (c->nearest) {
    r = v[0];
  } else {
    eddy_value_t *xl = NULL, *yl = NULL, *top = NULL, *bottom = NULL;
    EDDY_RETURN_IF_ERROR(weight(z, c, 1, c->lerp[1], &xl));
    EDDY_RETURN_IF_ERROR(weight(z, c, 0, c->lerp[0], &yl));
    EDDY_RETURN_IF_ERROR(lerp(z, c, v[0], v[1], xl, &top));
    EDDY_RETURN_IF_ERROR(lerp(z, c, v[2], v[3], xl, &bottom));
    EDDY_RETURN_IF_ERROR(lerp(z, c, top, bottom, yl, &r));
  }
  double ev = eddy_ir_op_attr_float(op, "extrapolation_value", 0.0);
  EDDY_RETURN_IF_ERROR(f32(z, ev, &ext));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, c->ok, r, ext, &r));
  tfl_out1(z, op, r);
  return NULL;
}

/// CropAndResizeGradImage(grads, boxes, box_ind, image_size) -> [B, H, W,
/// C] of dtype T: each crop position's gradient added back at the image
/// rows it read, weighted as it read them (core.scatter, the gather's
/// transpose); nothing from a position outside the image.
static eddy_status_t grad_image(eddy_tfl_t *z, crop_t *c) {
  const eddy_op_t *op = c->op;
  eddy_dtype_t want;
  if (!eddy_tfl_attr_dtype(op, "T", &want))
    return eddy_tfl_error(op, "attribute 'T' is missing");
  if (!eddy_dtype_is_float(want))
    return eddy_tfl_error(op, "only floating-point results are supported");
  eddy_value_t *g = NULL, *zero = NULL, *sum = NULL, *n = NULL;
  EDDY_RETURN_IF_ERROR(crop_size(z, c, false));
  EDDY_RETURN_IF_ERROR(image_dims(z, c, NULL, tfl_in(z, op, 3)));
  EDDY_RETURN_IF_ERROR(sample(z, c, 1));
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, tfl_in(z, op, 0), EDDY_DT_F32, &g));
  EDDY_RETURN_IF_ERROR(f32(z, 0.0, &zero));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, c->ok, g, zero, &g));
  // The updates of the neighbours: TensorFlow's dtop = (1 - yl) * g and
  // dbottom = yl * g, each split (1 - xl) : xl between left and right.
  eddy_value_t *upd[4] = {g, NULL, NULL, NULL};
  if (!c->nearest) {
    eddy_value_t *xl = NULL, *yl = NULL, *one = NULL, *xr = NULL, *yr = NULL,
                 *half[2] = {NULL};
    EDDY_RETURN_IF_ERROR(f32(z, 1.0, &one));
    EDDY_RETURN_IF_ERROR(weight(z, c, 1, c->lerp[1], &xl));
    EDDY_RETURN_IF_ERROR(weight(z, c, 0, c->lerp[0], &yl));
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.sub", one, xl, &xr));
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.sub", one, yl, &yr));
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.mul", yr, g, &half[0]));
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.mul", yl, g, &half[1]));
    for (int k = 0; k < 4; k++)
      EDDY_RETURN_IF_ERROR(
          bin(z, c, "core.mul", half[k >> 1], k & 1 ? xl : xr, &upd[k]));
  }
  // Rows B * H * W: static, or read at run time.
  int64_t nrows = -1;
  if (c->sdim[0] >= 0 && c->sdim[1] >= 0 && c->sdim[2] >= 0 &&
      !eddy_checked_mul_i64(c->sdim[0], c->sdim[1], &nrows))
    return eddy_tfl_error(op, "the image is too large");
  if (nrows >= 0 && !eddy_checked_mul_i64(nrows, c->sdim[2], &nrows))
    return eddy_tfl_error(op, "the image is too large");
  if (nrows < 0) {
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.mul", c->dim[0], c->dim[1], &n));
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.mul", n, c->dim[2], &n));
  }
  eddy_named_attr_t a[2] = {eddy_tfl_int_attr(z, "axis", 0),
                            eddy_tfl_int_attr(z, "size", nrows)};
  for (int k = 0; k < (c->nearest ? 1 : 4); k++) {
    eddy_value_t *r = NULL, *s = NULL;
    EDDY_RETURN_IF_ERROR(rows(z, c, k & 2 ? c->hi[0] : c->lo[0],
                              k & 1 ? c->hi[1] : c->lo[1], &r));
    eddy_value_t *ops[3] = {r, upd[k], n};
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.scatter", ops, n ? 3 : 2, a, 2, &s));
    if (sum)
      EDDY_RETURN_IF_ERROR(bin(z, c, "core.add", sum, s, &s));
    sum = s;
  }
  int64_t d4[4];
  eddy_value_t *dv[4];
  for (int i = 0; i < 4; i++) {
    d4[i] = c->sdim[i];
    dv[i] = c->sdim[i] < 0 ? c->dim[i] : NULL;
  }
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape_dyn(z, op, sum, d4, 4, dv, &sum));
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, sum, want, &sum));
  tfl_out1(z, op, sum);
  return NULL;
}

/// sum over y (axis 0) or x (axis 1) of d [N, ch, cw] times w [1, n] of
/// that axis: [N, 1].
static eddy_status_t weigh_sum(eddy_tfl_t *z, const crop_t *c, int axis,
                               eddy_value_t *d, eddy_value_t *w,
                               eddy_value_t **out) {
  eddy_value_t *v = NULL;
  int64_t other = axis ? 1 : 2, all[1] = {1};
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_reduce(z, c->op, "core.reduce_sum", d, &other, 1, false, &v));
  EDDY_RETURN_IF_ERROR(bin(z, c, "core.mul", v, w, &v));
  return eddy_tfl_reduce(z, c->op, "core.reduce_sum", v, all, 1, true, out);
}

/// CropAndResizeGradBoxes(grads, image, boxes, box_ind) -> [N, 4] f32
/// (bilinear only, as in TensorFlow): the image's slope at each sampling
/// point, along y (x), times the incoming gradient, summed over the
/// channels, then over the positions weighted by d in_y / d y1 = (H - 1) -
/// y * (H - 1) / (ch - 1) and d in_y / d y2 = y * (H - 1) / (ch - 1) (both
/// (H - 1) / 2 when ch = 1); x likewise.
static eddy_status_t grad_boxes(eddy_tfl_t *z, crop_t *c) {
  const eddy_op_t *op = c->op;
  eddy_value_t *img = tfl_in(z, op, 1), *v[4] = {NULL}, *g = NULL, *zero = NULL,
               *one = NULL, *cols[4] = {NULL};
  EDDY_RETURN_IF_ERROR(crop_size(z, c, false));
  EDDY_RETURN_IF_ERROR(image_dims(z, c, img, NULL));
  EDDY_RETURN_IF_ERROR(sample(z, c, 2));
  if (c->nearest)
    return eddy_tfl_error(op, "method \"nearest\" has no box gradient "
                              "(TensorFlow's supports bilinear only)");
  EDDY_RETURN_IF_ERROR(neighbours(z, c, img, v));
  EDDY_RETURN_IF_ERROR(eddy_tfl_cast(z, op, tfl_in(z, op, 0), EDDY_DT_F32, &g));
  EDDY_RETURN_IF_ERROR(f32(z, 0.0, &zero));
  EDDY_RETURN_IF_ERROR(f32(z, 1.0, &one));
  EDDY_RETURN_IF_ERROR(tfl_sel(z, op, c->ok, g, zero, &g));
  eddy_value_t *l[2] = {NULL}, *r[2] = {NULL};
  for (int a = 0; a < 2; a++) {
    EDDY_RETURN_IF_ERROR(weight(z, c, a, c->lerp[a], &l[a]));
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.sub", one, l[a], &r[a]));
  }
  // Slope along y: (1 - xl) * (bl - tl) + xl * (br - tr); along x:
  // (1 - yl) * (tr - tl) + yl * (br - bl).
  for (int a = 0; a < 2; a++) {
    eddy_value_t *d0 = NULL, *d1 = NULL, *s = NULL;
    int o = 1 - a; // the other axis weighs the two differences
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.sub", v[a ? 1 : 2], v[0], &d0));
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.sub", v[3], v[a ? 2 : 1], &d1));
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.mul", r[o], d0, &d0));
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.mul", l[o], d1, &d1));
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.add", d0, d1, &s));
    EDDY_RETURN_IF_ERROR(bin(z, c, "core.mul", s, g, &s));
    int64_t ch_axis = 3;
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_reduce(z, op, "core.reduce_sum", s, &ch_axis, 1, false, &s));
    // d at / d p1 and d at / d p2 per position of this axis, [1, n].
    int64_t n = a ? c->cw : c->ch;
    eddy_value_t *last = NULL, *w1 = NULL, *w2 = NULL;
    EDDY_RETURN_IF_ERROR(last_pos(z, c, a + 1, &last));
    if (n > 1) {
      eddy_value_t *ratio = NULL, *den = NULL, *pos = NULL;
      EDDY_RETURN_IF_ERROR(f32(z, (double)(n - 1), &den));
      EDDY_RETURN_IF_ERROR(bin(z, c, "core.div", last, den, &ratio));
      EDDY_RETURN_IF_ERROR(positions(z, c, n, &pos));
      EDDY_RETURN_IF_ERROR(bin(z, c, "core.mul", pos, ratio, &w2));
      EDDY_RETURN_IF_ERROR(bin(z, c, "core.sub", last, w2, &w1));
    } else {
      eddy_value_t *half = NULL;
      EDDY_RETURN_IF_ERROR(f32(z, 0.5, &half));
      EDDY_RETURN_IF_ERROR(bin(z, c, "core.mul", last, half, &w1));
      w2 = w1;
    }
    EDDY_RETURN_IF_ERROR(weigh_sum(z, c, a, s, w1, &cols[a]));
    EDDY_RETURN_IF_ERROR(weigh_sum(z, c, a, s, w2, &cols[a + 2]));
  }
  eddy_value_t *r4 = NULL;
  eddy_named_attr_t ax = eddy_tfl_int_attr(z, "axis", 1);
  EDDY_RETURN_IF_ERROR(
      eddy_tfl_build(z, op, "core.concat", cols, 4, &ax, 1, &r4));
  tfl_out1(z, op, r4);
  return NULL;
}

eddy_status_t eddy_tfl_lower_crop_op(eddy_tfl_t *z, const eddy_op_t *op,
                                     bool *handled) {
  const char *t = op->name->str + 3;
  crop_t c = {.op = op};
  *handled = true;
  if (strcmp(t, "CropAndResize") == 0)
    return crop_and_resize(z, &c);
  if (strcmp(t, "CropAndResizeGradImage") == 0)
    return grad_image(z, &c);
  if (strcmp(t, "CropAndResizeGradBoxes") == 0)
    return grad_boxes(z, &c);
  *handled = false;
  return NULL;
}
