/// .npy reading and writing. The header is a Python dict literal; it is
/// parsed with bounds checks at every byte, so a malformed or truncated
/// file gives an error naming what was expected, never a crash.
#include "runtime/npy.h"
#include "runtime/rt_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static const char rt_npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};
/// numpy itself refuses headers above 10000 bytes unless told otherwise; a
/// larger bound still stops a corrupt length from allocating gigabytes.
#define RT_NPY_MAX_HEADER ((uint32_t)1 << 20)

static bool rt_host_little_endian(void) {
  const uint16_t one = 1;
  unsigned char b;
  memcpy(&b, &one, 1);
  return b == 1;
}

/// ---- Sources -----------------------------------------------------------------------

typedef struct rt_npy_src {
  const char *name; // for messages
  FILE *f;          // or memory:
  const unsigned char *mem;
  size_t size, pos;
} rt_npy_src_t;

static size_t rt_npy_take(rt_npy_src_t *s, void *dst, size_t n) {
  if (s->f)
    return fread(dst, 1, n, s->f);
  size_t avail = s->size - s->pos;
  size_t k = n < avail ? n : avail;
  if (k > 0)
    memcpy(dst, s->mem + s->pos, k);
  s->pos += k;
  return k;
}

// Bytes left to read, or -1 when the source cannot tell (a pipe).
static int64_t rt_npy_remaining(rt_npy_src_t *s) {
  if (!s->f)
    return (int64_t)(s->size - s->pos);
  long here = ftell(s->f);
  if (here < 0 || fseek(s->f, 0, SEEK_END) != 0)
    return -1;
  long end = ftell(s->f);
  if (fseek(s->f, here, SEEK_SET) != 0 || end < here)
    return -1;
  return (int64_t)(end - here);
}

/// ---- Header parsing ------------------------------------------------------------------

typedef struct rt_npy_hdr {
  const char *p, *begin, *end;
  const char *name;
  // Results.
  bool has_descr, has_fortran, has_shape;
  int32_t dtype;
  bool fortran;
  int32_t rank;
  int64_t dims[EDDY_RT_MAX_RANK];
} rt_npy_hdr_t;

static eddy_rt_status_t rt_npy_bad(const rt_npy_hdr_t *h, const char *what) {
  return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, "npy",
                "%s: malformed header: expected %s at header offset %td",
                h->name, what, h->p - h->begin);
}

static void rt_npy_ws(rt_npy_hdr_t *h) {
  while (h->p < h->end &&
         (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
    h->p++;
}

static bool rt_npy_eat(rt_npy_hdr_t *h, char c) {
  rt_npy_ws(h);
  if (h->p < h->end && *h->p == c) {
    h->p++;
    return true;
  }
  return false;
}

static eddy_rt_status_t rt_npy_string(rt_npy_hdr_t *h, const char **out_s,
                                      size_t *out_len) {
  rt_npy_ws(h);
  if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
    return rt_npy_bad(h, "a quoted string");
  char q = *h->p++;
  const char *s = h->p;
  while (h->p < h->end && *h->p != q) {
    if (*h->p == '\\')
      return rt_npy_bad(h, "a string without escapes");
    h->p++;
  }
  if (h->p >= h->end)
    return rt_npy_bad(h, "a closing quote");
  *out_s = s;
  *out_len = (size_t)(h->p - s);
  h->p++;
  return NULL;
}

static bool rt_npy_word(rt_npy_hdr_t *h, const char *w) {
  size_t n = strlen(w);
  if ((size_t)(h->end - h->p) >= n && memcmp(h->p, w, n) == 0) {
    h->p += n;
    return true;
  }
  return false;
}

static eddy_rt_status_t rt_npy_descr(rt_npy_hdr_t *h) {
  rt_npy_ws(h);
  if (h->p < h->end && *h->p == '[')
    return rt_err(EDDY_RT_ERR_UNSUPPORTED, "npy",
                  "%s: structured dtypes are not supported", h->name);
  const char *s;
  size_t n;
  EDDY_RT_RETURN_IF_ERROR(rt_npy_string(h, &s, &n));
  char d[16];
  if (n == 0 || n >= sizeof(d))
    return rt_err(EDDY_RT_ERR_UNSUPPORTED, "npy",
                  "%s: dtype '%.*s' is not supported", h->name,
                  (int)(n < 32 ? n : 32), s);
  memcpy(d, s, n);
  d[n] = '\0';
  char order = d[0];
  const char *code = d + 1;
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    order = '=';
    code = d;
  }
  static const struct {
    const char *code;
    int32_t dtype;
  } known[] = {{"f2", EDDY_RT_F16}, {"f4", EDDY_RT_F32}, {"f8", EDDY_RT_F64},
               {"b1", EDDY_RT_I1},  {"?", EDDY_RT_I1},   {"i1", EDDY_RT_I8},
               {"i4", EDDY_RT_I32}, {"i8", EDDY_RT_I64}};
  for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
    if (strcmp(code, known[i].code) != 0)
      continue;
    size_t size = eddy_rt_dtype_size(known[i].dtype);
    if (order == '>' && size > 1)
      return rt_err(EDDY_RT_ERR_UNSUPPORTED, "npy",
                    "%s: big-endian dtype '%s' is not supported (save the "
                    "array little-endian)",
                    h->name, d);
    h->dtype = known[i].dtype;
    return NULL;
  }
  if (strcmp(code, "O") == 0)
    return rt_err(EDDY_RT_ERR_UNSUPPORTED, "npy",
                  "%s: object arrays are not supported", h->name);
  return rt_err(EDDY_RT_ERR_UNSUPPORTED, "npy",
                "%s: dtype '%s' is not supported (supported: <f2 <f4 <f8 |b1 "
                "|i1 <i4 <i8%s)",
                h->name, d,
                strcmp(code, "V2") == 0
                    ? "; bfloat16 has no numpy dtype and is stored as raw "
                      "'V2' bytes"
                    : "");
}

static eddy_rt_status_t rt_npy_shape(rt_npy_hdr_t *h) {
  if (!rt_npy_eat(h, '('))
    return rt_npy_bad(h, "'(' starting the shape tuple");
  h->rank = 0;
  for (;;) {
    rt_npy_ws(h);
    if (rt_npy_eat(h, ')'))
      return NULL;
    if (h->p < h->end && *h->p == '-')
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, "npy",
                    "%s: shape has a negative dimension", h->name);
    if (h->p >= h->end || *h->p < '0' || *h->p > '9')
      return rt_npy_bad(h, "a dimension or ')'");
    int64_t v = 0;
    while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
      int digit = *h->p - '0';
      if (v > (INT64_MAX - digit) / 10)
        return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, "npy",
                      "%s: shape dimension %d overflows int64", h->name,
                      (int)h->rank);
      v = v * 10 + digit;
      h->p++;
    }
    if (h->p < h->end && *h->p == 'L') // Python 2 long literals
      h->p++;
    if (h->rank >= EDDY_RT_MAX_RANK)
      return rt_err(EDDY_RT_ERR_UNSUPPORTED, "npy",
                    "%s: shape has more than %d dimensions", h->name,
                    EDDY_RT_MAX_RANK);
    h->dims[h->rank++] = v;
    if (rt_npy_eat(h, ','))
      continue;
    if (rt_npy_eat(h, ')'))
      return NULL;
    return rt_npy_bad(h, "',' or ')' in the shape tuple");
  }
}

static eddy_rt_status_t rt_npy_parse_header(rt_npy_hdr_t *h) {
  if (!rt_npy_eat(h, '{'))
    return rt_npy_bad(h, "'{'");
  for (;;) {
    if (rt_npy_eat(h, '}'))
      break;
    const char *key;
    size_t klen;
    EDDY_RT_RETURN_IF_ERROR(rt_npy_string(h, &key, &klen));
    if (!rt_npy_eat(h, ':'))
      return rt_npy_bad(h, "':' after a key");
    rt_npy_ws(h);
    bool *seen;
    if (klen == 5 && memcmp(key, "descr", 5) == 0) {
      seen = &h->has_descr;
      if (!*seen)
        EDDY_RT_RETURN_IF_ERROR(rt_npy_descr(h));
    } else if (klen == 13 && memcmp(key, "fortran_order", 13) == 0) {
      seen = &h->has_fortran;
      if (rt_npy_word(h, "True"))
        h->fortran = true;
      else if (rt_npy_word(h, "False"))
        h->fortran = false;
      else
        return rt_npy_bad(h, "True or False for 'fortran_order'");
    } else if (klen == 5 && memcmp(key, "shape", 5) == 0) {
      seen = &h->has_shape;
      if (!*seen)
        EDDY_RT_RETURN_IF_ERROR(rt_npy_shape(h));
    } else {
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, "npy",
                    "%s: malformed header: unexpected key '%.*s'", h->name,
                    (int)(klen < 32 ? klen : 32), key);
    }
    if (*seen)
      return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, "npy",
                    "%s: malformed header: key '%.*s' appears twice", h->name,
                    (int)klen, key);
    *seen = true;
    if (rt_npy_eat(h, ','))
      continue;
    if (rt_npy_eat(h, '}'))
      break;
    return rt_npy_bad(h, "',' or '}' after a value");
  }
  rt_npy_ws(h);
  while (h->p < h->end && *h->p == '\0') // tolerate NUL padding
    h->p++;
  if (h->p != h->end)
    return rt_npy_bad(h, "only padding after '}'");
  if (!h->has_descr || !h->has_fortran || !h->has_shape)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, "npy",
                  "%s: malformed header: missing key '%s'", h->name,
                  !h->has_descr ? "descr"
                                : (!h->has_fortran ? "fortran_order" : "shape"));
  if (h->fortran && h->rank > 1)
    return rt_err(EDDY_RT_ERR_UNSUPPORTED, "npy",
                  "%s: Fortran-order arrays are not supported (save with "
                  "numpy.ascontiguousarray)",
                  h->name);
  return NULL;
}

/// ---- Reading -------------------------------------------------------------------------

static eddy_rt_status_t rt_npy_truncated(const rt_npy_src_t *s,
                                         const char *what) {
  return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, "npy",
                "%s: truncated file: it ends inside the %s", s->name, what);
}

static eddy_rt_status_t rt_npy_read(eddy_rt_ctx_t *ctx, rt_npy_src_t *s,
                                    eddy_rt_tensor_t *out_t) {
  *out_t = eddy_rt_tensor_empty();
  if (!rt_host_little_endian())
    return rt_err(EDDY_RT_ERR_UNSUPPORTED, "npy",
                  "%s: .npy I/O needs a little-endian host", s->name);
  unsigned char pre[12];
  size_t got = rt_npy_take(s, pre, 8);
  if (got < 6 || memcmp(pre, rt_npy_magic, 6) != 0)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, "npy",
                  "%s: not a .npy file (it does not start with "
                  "\"\\x93NUMPY\")",
                  s->name);
  if (got < 8)
    return rt_npy_truncated(s, "format version");
  int major = pre[6], minor = pre[7];
  if (major < 1 || major > 3 || minor != 0)
    return rt_err(EDDY_RT_ERR_UNSUPPORTED, "npy",
                  "%s: .npy format version %d.%d is not supported (1.0, 2.0 "
                  "and 3.0 are)",
                  s->name, major, minor);
  size_t lsize = major == 1 ? 2 : 4;
  if (rt_npy_take(s, pre + 8, lsize) < lsize)
    return rt_npy_truncated(s, "header length");
  uint32_t hlen = (uint32_t)pre[8] | (uint32_t)pre[9] << 8;
  if (lsize == 4)
    hlen |= (uint32_t)pre[10] << 16 | (uint32_t)pre[11] << 24;
  if (hlen > RT_NPY_MAX_HEADER)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, "npy",
                  "%s: header length %" PRIu32 " is above the limit of %" PRIu32
                  " bytes",
                  s->name, hlen, RT_NPY_MAX_HEADER);
  char *hbuf = malloc(hlen ? hlen : 1);
  if (!hbuf)
    return rt_err(EDDY_RT_ERR_RESOURCE, "npy", "%s: out of memory", s->name);
  if (rt_npy_take(s, hbuf, hlen) < hlen) {
    free(hbuf);
    return rt_npy_truncated(s, "header");
  }
  rt_npy_hdr_t h;
  memset(&h, 0, sizeof(h));
  h.p = h.begin = hbuf;
  h.end = hbuf + hlen;
  h.name = s->name;
  eddy_rt_status_t st = rt_npy_parse_header(&h);
  free(hbuf);
  if (st)
    return st;
  // Check the size before allocating, so that a corrupt shape in a small
  // file is reported as such instead of as a huge allocation.
  int64_t count;
  if (!rt_numel_checked(h.rank, h.dims, &count) ||
      count > INT64_MAX / (int64_t)eddy_rt_dtype_size(h.dtype)) {
    char sd[RT_SHAPE_BUF];
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, "npy",
                  "%s: shape %s is too large (its byte size overflows int64)",
                  s->name, eddy_rt_shape_format(h.rank, h.dims, sd, sizeof(sd)));
  }
  int64_t need = count * (int64_t)eddy_rt_dtype_size(h.dtype);
  int64_t left = rt_npy_remaining(s);
  if (left >= 0 && left < need)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, "npy",
                  "%s: truncated file: the data needs %" PRId64
                  " bytes, found %" PRId64,
                  s->name, need, left);
  EDDY_RT_RETURN_IF_ERROR(
      rt_alloc_tensor(ctx, "npy", h.dtype, h.rank, h.dims, out_t));
  size_t nbytes =
      (size_t)eddy_rt_tensor_numel(out_t) * eddy_rt_dtype_size(h.dtype);
  got = rt_npy_take(s, out_t->data, nbytes);
  if (got < nbytes) {
    eddy_rt_tensor_release(out_t);
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, "npy",
                  "%s: truncated file: the data needs %zu bytes, found %zu",
                  s->name, nbytes, got);
  }
  if (h.dtype == EDDY_RT_I1) {
    unsigned char *b = out_t->data;
    for (size_t i = 0; i < nbytes; i++)
      b[i] = b[i] != 0;
  }
  return NULL;
}

eddy_rt_status_t eddy_rt_npy_read_file(eddy_rt_ctx_t *ctx, const char *path,
                                       eddy_rt_tensor_t *out_t) {
  *out_t = eddy_rt_tensor_empty();
  FILE *f = fopen(path, "rb");
  if (!f)
    return rt_err(EDDY_RT_ERR_IO, "npy", "%s: cannot open: %s", path,
                  strerror(errno));
  rt_npy_src_t s = {path, f, NULL, 0, 0};
  eddy_rt_status_t st = rt_npy_read(ctx, &s, out_t);
  if (!st && ferror(f)) {
    eddy_rt_tensor_release(out_t);
    st = rt_err(EDDY_RT_ERR_IO, "npy", "%s: read error", path);
  }
  fclose(f);
  return st;
}

eddy_rt_status_t eddy_rt_npy_read_memory(eddy_rt_ctx_t *ctx, const void *data,
                                         size_t size, eddy_rt_tensor_t *out_t) {
  rt_npy_src_t s = {"<memory>", NULL, data, size, 0};
  return rt_npy_read(ctx, &s, out_t);
}

/// ---- Writing -------------------------------------------------------------------------

typedef struct rt_npy_sink {
  FILE *f;     // or memory:
  char *mem;   // exactly sized
  size_t pos;
  bool failed;
} rt_npy_sink_t;

static void rt_npy_put(rt_npy_sink_t *k, const void *p, size_t n) {
  if (n == 0 || k->failed)
    return;
  if (k->f) {
    if (fwrite(p, 1, n, k->f) != n)
      k->failed = true;
    return;
  }
  memcpy(k->mem + k->pos, p, n);
  k->pos += n;
}

static const char *rt_npy_descr_of(int32_t dtype) {
  switch (dtype) {
  case EDDY_RT_F16:
    return "<f2";
  case EDDY_RT_F32:
    return "<f4";
  case EDDY_RT_F64:
    return "<f8";
  case EDDY_RT_I1:
    return "|b1";
  case EDDY_RT_I8:
    return "|i1";
  case EDDY_RT_I32:
    return "<i4";
  case EDDY_RT_I64:
    return "<i8";
  default:
    return NULL;
  }
}

/// The whole preamble (magic, version, length, padded header) for t.
typedef struct rt_npy_pre {
  char bytes[1024];
  size_t len;
} rt_npy_pre_t;

static eddy_rt_status_t rt_npy_preamble(const eddy_rt_tensor_t *t, int version,
                                        rt_npy_pre_t *pre) {
  EDDY_RT_RETURN_IF_ERROR(eddy_rt_tensor_validate(t, "npy", "the tensor"));
  if (!rt_host_little_endian())
    return rt_err(EDDY_RT_ERR_UNSUPPORTED, "npy",
                  ".npy I/O needs a little-endian host");
  const char *descr = rt_npy_descr_of(t->dtype);
  if (!descr)
    return rt_err(EDDY_RT_ERR_UNSUPPORTED, "npy",
                  "%s has no numpy dtype; cast to f32 before saving",
                  eddy_rt_dtype_name(t->dtype));
  if (version < 0 || version > 3)
    return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, "npy",
                  "format version %d is not one of 1, 2, 3 (or 0 = auto)",
                  version);
  char dict[900];
  int n = snprintf(dict, sizeof(dict),
                   "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int32_t i = 0; i < t->rank; i++)
    n += snprintf(dict + n, sizeof(dict) - (size_t)n, "%s%" PRId64,
                  i ? ", " : "", t->dims[i]);
  n += snprintf(dict + n, sizeof(dict) - (size_t)n, "%s), }",
                t->rank == 1 ? "," : "");
  if (version == 0)
    version = 1; // our headers are always far below 65535 bytes
  size_t prefix = version == 1 ? 10 : 12;
  // Pad with spaces and a final '\n' so that the data starts 64-aligned.
  size_t total = prefix + (size_t)n + 1;
  total = (total + 63) / 64 * 64;
  size_t hlen = total - prefix;
  memcpy(pre->bytes, rt_npy_magic, 6);
  pre->bytes[6] = (char)version;
  pre->bytes[7] = 0;
  pre->bytes[8] = (char)(hlen & 0xff);
  pre->bytes[9] = (char)((hlen >> 8) & 0xff);
  if (version != 1) {
    pre->bytes[10] = (char)((hlen >> 16) & 0xff);
    pre->bytes[11] = (char)((hlen >> 24) & 0xff);
  }
  memcpy(pre->bytes + prefix, dict, (size_t)n);
  memset(pre->bytes + prefix + n, ' ', hlen - (size_t)n - 1);
  pre->bytes[total - 1] = '\n';
  pre->len = total;
  return NULL;
}

static void rt_npy_put_data(rt_npy_sink_t *k, const eddy_rt_tensor_t *t) {
  int64_t n = eddy_rt_tensor_numel(t);
  size_t es = eddy_rt_dtype_size(t->dtype);
  if (eddy_rt_tensor_is_contiguous(t) && t->dtype != EDDY_RT_I1) {
    rt_npy_put(k, t->data, (size_t)n * es);
    return;
  }
  // Strided or i1 (normalized to 0/1): element by element through a stage.
  char stage[4096];
  size_t used = 0;
  for (int64_t i = 0; i < n; i++) {
    const char *p = eddy_rt_tensor_elem_ptr(t, i);
    if (t->dtype == EDDY_RT_I1)
      stage[used] = *p != 0;
    else
      memcpy(stage + used, p, es);
    used += es;
    if (used + es > sizeof(stage)) {
      rt_npy_put(k, stage, used);
      used = 0;
    }
  }
  rt_npy_put(k, stage, used);
}

eddy_rt_status_t eddy_rt_npy_write_file(const char *path,
                                        const eddy_rt_tensor_t *t,
                                        int version) {
  rt_npy_pre_t pre;
  EDDY_RT_RETURN_IF_ERROR(rt_npy_preamble(t, version, &pre));
  FILE *f = fopen(path, "wb");
  if (!f)
    return rt_err(EDDY_RT_ERR_IO, "npy", "%s: cannot create: %s", path,
                  strerror(errno));
  rt_npy_sink_t k = {f, NULL, 0, false};
  rt_npy_put(&k, pre.bytes, pre.len);
  rt_npy_put_data(&k, t);
  if (fclose(f) != 0)
    k.failed = true;
  if (k.failed)
    return rt_err(EDDY_RT_ERR_IO, "npy", "%s: write error", path);
  return NULL;
}

eddy_rt_status_t eddy_rt_npy_write_memory(const eddy_rt_tensor_t *t,
                                          int version, void **out_data,
                                          size_t *out_size) {
  *out_data = NULL;
  *out_size = 0;
  rt_npy_pre_t pre;
  EDDY_RT_RETURN_IF_ERROR(rt_npy_preamble(t, version, &pre));
  size_t bytes =
      (size_t)eddy_rt_tensor_numel(t) * eddy_rt_dtype_size(t->dtype);
  if (bytes > SIZE_MAX - pre.len)
    return rt_err(EDDY_RT_ERR_RESOURCE, "npy", "encoding is too large");
  char *mem = malloc(pre.len + bytes);
  if (!mem)
    return rt_err(EDDY_RT_ERR_RESOURCE, "npy",
                  "out of memory encoding %zu bytes", pre.len + bytes);
  rt_npy_sink_t k = {NULL, mem, 0, false};
  rt_npy_put(&k, pre.bytes, pre.len);
  rt_npy_put_data(&k, t);
  *out_data = mem;
  *out_size = pre.len + bytes;
  return NULL;
}
