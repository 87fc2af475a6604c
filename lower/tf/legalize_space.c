/// legalize-tf: the ops that move blocks of positions between dims, with
/// core pads, reshapes and transposes: SpaceToBatchND and BatchToSpaceND
/// (what tf.nn.convolution writes around a dilated convolution; each is the
/// other's gradient), and DepthToSpace and SpaceToDepth (pixel shuffle:
/// sub-pixel convolutions, space-to-depth stems; also each other's
/// gradient).
#include "lower/tf/tf_lower_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const SPACE_OPS[] = {
    "BatchToSpaceND",
    "DepthToSpace",
    "SpaceToBatchND",
    "SpaceToDepth",
};

void eddy_tfl_space_ops_each(void (*fn)(const char *name, void *user),
                             void *user) {
  for (size_t i = 0; i < sizeof SPACE_OPS / sizeof SPACE_OPS[0]; i++)
    fn(SPACE_OPS[i], user);
}

/// ---- SpaceToBatchND and BatchToSpaceND ----------------------------------

#define MAXB 8

/// The constant block_shape (operand 1) and paddings or crops (operand 2,
/// [M, 2]) of a SpaceToBatchND / BatchToSpaceND on x: M >= 1 blocks >= 1,
/// pads >= 0; x's dims static but the batch.
static eddy_status_t space_batch_args(eddy_tfl_t *z, const eddy_op_t *op,
                                      eddy_value_t *x, int64_t *block,
                                      int64_t *pads, int32_t *m) {
  int64_t nb = eddy_tfl_const_ints(z, tfl_in(z, op, 1), block, MAXB);
  if (nb < 1)
    return eddy_tfl_error(op,
                          "block_shape must be a constant vector of 1 to "
                          "%d entries",
                          MAXB);
  if (eddy_tfl_const_ints(z, tfl_in(z, op, 2), pads, 2 * MAXB) != 2 * nb)
    return eddy_tfl_error(
        op, "the %s must be a constant [%lld, 2]",
        strcmp(op->name->str, "tf.SpaceToBatchND") == 0 ? "paddings" : "crops",
        (long long)nb);
  const eddy_type_t *t = x->type;
  if (t->kind != EDDY_TYPE_TENSOR || t->rank == EDDY_RANK_UNKNOWN ||
      t->rank < 1 + nb || t->rank > EDDY_TFL_MAX_RANK - MAXB)
    return eddy_tfl_error(op, "the input must have a known rank above the "
                              "number of blocks");
  for (int32_t i = 1; i < t->rank; i++)
    if (t->dims[i] < 0)
      return eddy_tfl_error(op, "only the batch dim may be dynamic");
  for (int64_t i = 0; i < nb; i++)
    if (block[i] < 1 || pads[2 * i] < 0 || pads[2 * i + 1] < 0)
      return eddy_tfl_error(op, "blocks must be >= 1 and paddings >= 0");
  *m = (int32_t)nb;
  return NULL;
}

/// SpaceToBatchND(x, block, paddings), x [B, s1..sM, rest...]: x padded,
/// reshaped to [B, s1/b1, b1, ..., sM/bM, bM, rest...], the blocks moved to
/// the front and merged with the batch: [b1 * ... * bM * B, s1/b1, ...].
static eddy_status_t lower_space_to_batch(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = tfl_in(z, op, 0), *v = NULL;
  int64_t block[MAXB], pads[2 * MAXB];
  int32_t m = 0;
  EDDY_RETURN_IF_ERROR(space_batch_args(z, op, x, block, pads, &m));
  const eddy_type_t *t = x->type;
  int32_t r = t->rank, rest = r - 1 - m;
  int64_t lo[EDDY_TFL_MAX_RANK] = {0}, hi[EDDY_TFL_MAX_RANK] = {0};
  int64_t d[EDDY_TFL_MAX_RANK], perm[EDDY_TFL_MAX_RANK], nblk = 1;
  for (int32_t i = 0; i < m; i++) {
    lo[1 + i] = pads[2 * i];
    hi[1 + i] = pads[2 * i + 1];
    int64_t s = t->dims[1 + i] + lo[1 + i] + hi[1 + i];
    if (s % block[i] != 0)
      return eddy_tfl_error(op,
                            "padded dim %d (%lld) is not a multiple of "
                            "its block %lld",
                            (int)(1 + i), (long long)s, (long long)block[i]);
    d[1 + 2 * i] = s / block[i];
    d[2 + 2 * i] = block[i];
    perm[i] = 2 + 2 * i;
    perm[m + 1 + i] = 1 + 2 * i;
    nblk *= block[i];
  }
  d[0] = t->dims[0] < 0 ? -1 : t->dims[0];
  perm[m] = 0;
  for (int32_t i = 0; i < rest; i++) {
    d[1 + 2 * m + i] = t->dims[1 + m + i];
    perm[1 + 2 * m + i] = 1 + 2 * m + i;
  }
  eddy_value_t *zero = NULL;
  EDDY_RETURN_IF_ERROR(tfl_scalar_like(z, x, 0.0, &zero));
  eddy_value_t *pops[2] = {x, zero};
  eddy_named_attr_t pa[2] = {eddy_tfl_ints_attr(z, "low", lo, (size_t)r),
                             eddy_tfl_ints_attr(z, "high", hi, (size_t)r)};
  EDDY_RETURN_IF_ERROR(eddy_tfl_build(z, op, "core.pad", pops, 2, pa, 2, &v));
  size_t n = (size_t)(1 + 2 * m + rest);
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, v, d, n, &v));
  EDDY_RETURN_IF_ERROR(eddy_tfl_transpose(z, op, v, perm, n, &v));
  int64_t o[EDDY_TFL_MAX_RANK];
  o[0] = t->dims[0] < 0 ? -1 : t->dims[0] * nblk;
  for (int32_t i = 0; i < m; i++)
    o[1 + i] = d[1 + 2 * i];
  for (int32_t i = 0; i < rest; i++)
    o[1 + m + i] = t->dims[1 + m + i];
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, v, o, (size_t)r, &v));
  tfl_out1(z, op, v);
  return NULL;
}

/// BatchToSpaceND(x, block, crops), x [b1 * ... * bM * B, s1..sM, rest...]:
/// reshaped to [b1, ..., bM, B, s1, ..., sM, rest...], each block moved
/// behind its dim, merged with it ([B, s1 * b1, ...]) and cropped (a
/// core.gather of the kept positions, so that the batch may be dynamic).
static eddy_status_t lower_batch_to_space(eddy_tfl_t *z, const eddy_op_t *op) {
  eddy_value_t *x = tfl_in(z, op, 0), *v = NULL;
  int64_t block[MAXB], crops[2 * MAXB];
  int32_t m = 0;
  EDDY_RETURN_IF_ERROR(space_batch_args(z, op, x, block, crops, &m));
  const eddy_type_t *t = x->type;
  int32_t r = t->rank, rest = r - 1 - m;
  int64_t d[EDDY_TFL_MAX_RANK], perm[EDDY_TFL_MAX_RANK], nblk = 1;
  for (int32_t i = 0; i < m; i++) {
    d[i] = block[i];
    d[m + 1 + i] = t->dims[1 + i];
    perm[1 + 2 * i] = m + 1 + i;
    perm[2 + 2 * i] = i;
    nblk *= block[i];
  }
  if (t->dims[0] >= 0 && t->dims[0] % nblk != 0)
    return eddy_tfl_error(op,
                          "the batch (%lld) is not a multiple of the "
                          "blocks' product %lld",
                          (long long)t->dims[0], (long long)nblk);
  int64_t b = t->dims[0] < 0 ? -1 : t->dims[0] / nblk;
  d[m] = b;
  perm[0] = m;
  for (int32_t i = 0; i < rest; i++) {
    d[2 * m + 1 + i] = t->dims[1 + m + i];
    perm[2 * m + 1 + i] = 2 * m + 1 + i;
  }
  size_t n = (size_t)(1 + 2 * m + rest);
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, x, d, n, &v));
  EDDY_RETURN_IF_ERROR(eddy_tfl_transpose(z, op, v, perm, n, &v));
  int64_t o[EDDY_TFL_MAX_RANK];
  o[0] = b;
  for (int32_t i = 0; i < m; i++)
    o[1 + i] = t->dims[1 + i] * block[i];
  for (int32_t i = 0; i < rest; i++)
    o[1 + m + i] = t->dims[1 + m + i];
  EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, v, o, (size_t)r, &v));
  for (int32_t i = 0; i < m; i++) {
    int64_t len = o[1 + i] - crops[2 * i] - crops[2 * i + 1];
    if (len < 0)
      return eddy_tfl_error(op, "the crops of dim %d exceed its size",
                            (int)(1 + i));
    if (len == o[1 + i])
      continue;
    int64_t *at = malloc((size_t)(len ? len : 1) * sizeof *at);
    if (!at)
      return eddy_tfl_error(op, "out of memory");
    for (int64_t k = 0; k < len; k++)
      at[k] = crops[2 * i] + k;
    const eddy_type_t *it =
        eddy_ir_tensor_type_get(z->ctx, EDDY_DT_I64, 1, &len);
    eddy_value_t *idx = NULL;
    eddy_status_t st = eddy_ir_build_constant(
        &z->b, eddy_ir_dense_attr_from_i64(z->ctx, it, at, (size_t)len), &idx);
    free(at);
    EDDY_RETURN_IF_ERROR(st);
    eddy_value_t *gops[2] = {v, idx};
    eddy_named_attr_t ga = eddy_tfl_int_attr(z, "axis", 1 + i);
    EDDY_RETURN_IF_ERROR(
        eddy_tfl_build(z, op, "core.gather", gops, 2, &ga, 1, &v));
  }
  tfl_out1(z, op, v);
  return NULL;
}

/// ---- DepthToSpace and SpaceToDepth ------------------------------------

/// DepthToSpace(x [N, H, W, C], block b) -> [N, H * b, W * b, C / b^2]:
/// channel (i * b + j) * C' + c of pixel (h, w) goes to pixel (h * b + i,
/// w * b + j), channel c; x reshaped to [N, H, W, b, b, C'], the block
/// rows moved behind H ([N, H, b, W, b, C']) and merged. SpaceToDepth is
/// the inverse. NHWC only; H, W and C static, the batch may be dynamic.
static eddy_status_t lower_depth_space(eddy_tfl_t *z, const eddy_op_t *op,
                                       bool to_space) {
  eddy_value_t *x = tfl_in(z, op, 0), *v = NULL;
  const eddy_attr_t *fa = eddy_ir_op_attr(op, "data_format");
  if (fa && fa->kind == EDDY_ATTR_STRING && strcmp(fa->u.str.data, "NHWC"))
    return eddy_tfl_error(op,
                          "data_format \"%s\" is not supported (only "
                          "NHWC)",
                          fa->u.str.data);
  int64_t b = eddy_ir_op_attr_int(op, "block_size", 0);
  if (b < 2 || b > ((int64_t)1 << 16))
    return eddy_tfl_error(op, "block_size must be at least 2, got %lld",
                          (long long)b);
  const eddy_type_t *t = x->type;
  if (t->kind != EDDY_TYPE_TENSOR || t->rank != 4)
    return eddy_tfl_error(op, "the input must have rank 4 (NHWC)");
  int64_t n = t->dims[0] < 0 ? -1 : t->dims[0], h = t->dims[1], w = t->dims[2],
          c = t->dims[3];
  if (h < 0 || w < 0 || c < 0)
    return eddy_tfl_error(op, "the input's height, width and channels must "
                              "be static");
  static const int64_t perm[6] = {0, 1, 3, 2, 4, 5};
  if (to_space) {
    if (c % (b * b) != 0)
      return eddy_tfl_error(op,
                            "the channels (%lld) are not a multiple of "
                            "block_size^2 (%lld)",
                            (long long)c, (long long)(b * b));
    int64_t d6[6] = {n, h, w, b, b, c / (b * b)};
    int64_t d4[4] = {n, h * b, w * b, c / (b * b)};
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, x, d6, 6, &v));
    EDDY_RETURN_IF_ERROR(eddy_tfl_transpose(z, op, v, perm, 6, &v));
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, v, d4, 4, &v));
  } else {
    if (h % b != 0 || w % b != 0)
      return eddy_tfl_error(op,
                            "the height (%lld) and width (%lld) must be "
                            "multiples of block_size (%lld)",
                            (long long)h, (long long)w, (long long)b);
    int64_t d6[6] = {n, h / b, b, w / b, b, c};
    int64_t d4[4] = {n, h / b, w / b, b * b * c};
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, x, d6, 6, &v));
    EDDY_RETURN_IF_ERROR(eddy_tfl_transpose(z, op, v, perm, 6, &v));
    EDDY_RETURN_IF_ERROR(eddy_tfl_reshape(z, op, v, d4, 4, &v));
  }
  tfl_out1(z, op, v);
  return NULL;
}

eddy_status_t eddy_tfl_lower_space_op(eddy_tfl_t *z, const eddy_op_t *op,
                                      bool *handled) {
  const char *t = op->name->str + 3;
  *handled = true;
  if (strcmp(t, "SpaceToBatchND") == 0)
    return lower_space_to_batch(z, op);
  if (strcmp(t, "BatchToSpaceND") == 0)
    return lower_batch_to_space(z, op);
  if (strcmp(t, "DepthToSpace") == 0)
    return lower_depth_space(z, op, true);
  if (strcmp(t, "SpaceToDepth") == 0)
    return lower_depth_space(z, op, false);
  *handled = false;
  return NULL;
}
