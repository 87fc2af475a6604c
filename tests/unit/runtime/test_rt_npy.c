/// .npy I/O: round trips for every dtype and format version, files written
/// the way numpy writes them, clear errors for what is not supported, and
/// malformed files (every truncation of a valid file, corrupted bytes) that
/// must give errors, never crashes.
#define _POSIX_C_SOURCE 200809L // mkstemp, close
#include "rt_test.h"

#include "runtime/npy.h"

#include <unistd.h>

static eddy_rt_ctx_t *g_ctx;

static int setup(void **state) {
  (void)state;
  g_ctx = rtt_ctx(1);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  assert_int_equal(eddy_rt_ctx_bytes_in_use(g_ctx), 0);
  eddy_rt_ctx_destroy(g_ctx);
  return 0;
}

/// A .npy image: magic, version major.0, the header padded like numpy pads
/// it (or not at all when pad is false), then n data bytes.
typedef struct img {
  unsigned char b[4096];
  size_t n;
} img_t;

static void make_npy(img_t *m, int major, const char *header, bool pad,
                     const void *data, size_t n) {
  size_t prefix = major == 1 ? 10 : 12;
  size_t hl = strlen(header) + 1;
  if (pad)
    hl = (prefix + hl + 63) / 64 * 64 - prefix;
  memcpy(m->b, "\x93NUMPY", 6);
  m->b[6] = (unsigned char)major;
  m->b[7] = 0;
  m->b[8] = (unsigned char)(hl & 0xff);
  m->b[9] = (unsigned char)(hl >> 8);
  if (major != 1) {
    m->b[10] = 0;
    m->b[11] = 0;
  }
  memset(m->b + prefix, ' ', hl);
  memcpy(m->b + prefix, header, strlen(header));
  m->b[prefix + hl - 1] = '\n';
  assert_true(prefix + hl + n <= sizeof(m->b));
  if (n)
    memcpy(m->b + prefix + hl, data, n);
  m->n = prefix + hl + n;
}

static eddy_rt_status_t read_img(const img_t *m, eddy_rt_tensor_t *out) {
  return eddy_rt_npy_read_memory(g_ctx, m->b, m->n, out);
}

static void test_round_trips(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  const int32_t dts[] = {EDDY_RT_F16, EDDY_RT_F32, EDDY_RT_F64, EDDY_RT_I1,
                         EDDY_RT_I8,  EDDY_RT_I32, EDDY_RT_I64};
  const char *descr[] = {"'<f2'", "'<f4'", "'<f8'", "'|b1'",
                         "'|i1'", "'<i4'", "'<i8'"};
  const char *shapes[] = {"", "3", "2x3", "0x3", "1x1x2x1"};
  const char *tuples[] = {"()", "(3,)", "(2, 3)", "(0, 3)", "(1, 1, 2, 1)"};
  for (size_t d = 0; d < 7; d++) {
    for (size_t s = 0; s < 5; s++) {
      for (int version = 0; version <= 3; version++) {
        eddy_rt_tensor_t t = rtt_f(c, dts[d], shapes[s], NULL), back;
        for (int64_t i = 0; i < eddy_rt_tensor_numel(&t); i++)
          eddy_rt_tensor_set_f64(&t, i, (double)(i * 3 % 7) - 2.5);
        void *mem;
        size_t n;
        RTT_OK(eddy_rt_npy_write_memory(&t, version, &mem, &n));
        const unsigned char *b = mem;
        assert_memory_equal(b, "\x93NUMPY", 6);
        assert_int_equal(b[6], version == 0 ? 1 : version);
        size_t prefix = b[6] == 1 ? 10 : 12;
        size_t hl = b[8] | (size_t)b[9] << 8;
        assert_int_equal((prefix + hl) % 64, 0); // data is 64-aligned
        assert_int_equal(b[prefix + hl - 1], '\n');
        char header[256];
        memcpy(header, b + prefix, hl);
        header[hl] = '\0';
        assert_non_null(strstr(header, descr[d]));
        assert_non_null(strstr(header, "'fortran_order': False"));
        assert_non_null(strstr(header, tuples[s]));
        RTT_OK(eddy_rt_npy_read_memory(c, mem, n, &back));
        assert_true(rtt_same(&t, &back));
        free(mem);
        eddy_rt_tensor_release(&t);
        eddy_rt_tensor_release(&back);
      }
    }
  }
}

static void test_files_and_views(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  char path[] = "/tmp/eddy_rt_npy_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  // A transposed view is written in logical (C) order.
  eddy_rt_tensor_t x = RTT_I(c, EDDY_RT_I32, "2x3", 1, 2, 3, 4, 5, 6), v = x, y;
  v.dims[0] = 3, v.dims[1] = 2, v.strides[0] = 1, v.strides[1] = 3;
  RTT_OK(eddy_rt_npy_write_file(path, &v, 2));
  RTT_OK(eddy_rt_npy_read_file(c, path, &y));
  RTT_EXPECT_I(&y, EDDY_RT_I32, "3x2", 1, 4, 2, 5, 3, 6);
  eddy_rt_tensor_release(&y);
  // i1 is normalized to 0/1 on the way out and in.
  uint8_t raw[3] = {0, 7, 1};
  eddy_rt_tensor_t b;
  RTT_OK(eddy_rt_tensor_wrap(EDDY_RT_I1, 1, (int64_t[]){3}, raw, &b));
  RTT_OK(eddy_rt_npy_write_file(path, &b, 0));
  RTT_OK(eddy_rt_npy_read_file(c, path, &y));
  assert_memory_equal(y.data, "\0\1\1", 3);
  eddy_rt_tensor_release(&y);
  // Truncated files are errors through the file path too.
  FILE *f = fopen(path, "r+b");
  assert_non_null(f);
  assert_int_equal(ftruncate(fileno(f), 70), 0);
  fclose(f);
  RTT_ERR(eddy_rt_npy_read_file(c, path, &y), EDDY_RT_ERR_INVALID_ARGUMENT,
          path, "truncated");
  unlink(path);
  RTT_ERR(eddy_rt_npy_read_file(c, path, &y), EDDY_RT_ERR_IO, path,
          "cannot open");
  RTT_ERR(eddy_rt_npy_write_file("/nonexistent-dir/x.npy", &x, 0),
          EDDY_RT_ERR_IO, "cannot create");
  eddy_rt_tensor_t h = rtt_f(c, EDDY_RT_BF16, "2", NULL);
  void *mem;
  size_t n;
  RTT_ERR(eddy_rt_npy_write_memory(&h, 0, &mem, &n), EDDY_RT_ERR_UNSUPPORTED,
          "bf16 has no numpy dtype");
  RTT_ERR(eddy_rt_npy_write_memory(&x, 4, &mem, &n),
          EDDY_RT_ERR_INVALID_ARGUMENT, "format version 4");
  eddy_rt_tensor_release(&h);
  eddy_rt_tensor_release(&x);
}

static void test_numpy_variants(void **state) {
  (void)state;
  img_t m;
  eddy_rt_tensor_t t;
  const int64_t two[2] = {1, -2};
  // Keys in any order, double quotes, Python 2 longs, no padding, v3.
  make_npy(&m, 3, "{\"shape\": (2L,), \"fortran_order\": False, \"descr\": "
                  "\"<i8\"}",
           false, two, 16);
  RTT_OK(read_img(&m, &t));
  RTT_EXPECT_I(&t, EDDY_RT_I64, "2", 1, -2);
  eddy_rt_tensor_release(&t);
  // 1-byte dtypes have no byte order; '=' is native.
  const int8_t b8[2] = {-1, 5};
  make_npy(&m, 1, "{'descr': '>i1', 'fortran_order': False, 'shape': (2,), }",
           true, b8, 2);
  RTT_OK(read_img(&m, &t));
  RTT_EXPECT_I(&t, EDDY_RT_I8, "2", -1, 5);
  eddy_rt_tensor_release(&t);
  const float f1 = 1.5f;
  make_npy(&m, 1, "{'descr': '=f4', 'fortran_order': False, 'shape': (), }",
           true, &f1, 4);
  RTT_OK(read_img(&m, &t));
  RTT_EXPECT_F(&t, EDDY_RT_F32, "", 1.5);
  eddy_rt_tensor_release(&t);
  // Fortran order of a rank-1 array is C order.
  make_npy(&m, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }",
           true, &f1, 4);
  RTT_OK(read_img(&m, &t));
  eddy_rt_tensor_release(&t);
  // Extra data after the array is ignored, as numpy does.
  make_npy(&m, 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (0,), }",
           true, &f1, 4);
  RTT_OK(read_img(&m, &t));
  rtt_shape(&t, EDDY_RT_F32, "0");
  eddy_rt_tensor_release(&t);
}

/// A header that must be rejected with each of the NULL-terminated phrases.
static void reject(const char *header, eddy_rt_code_t code, ...) {
  img_t m;
  char data[64] = {0};
  make_npy(&m, 1, header, true, data, sizeof(data));
  eddy_rt_tensor_t t;
  eddy_rt_status_t st = read_img(&m, &t);
  if (!st) {
    print_error("accepted: %s\n", header);
    fail();
  }
  assert_null(t.data);
  const char *msg = eddy_rt_status_message(st);
  assert_int_equal(eddy_rt_status_code(st), code);
  va_list ap;
  va_start(ap, code);
  for (const char *s = va_arg(ap, const char *); s;
       s = va_arg(ap, const char *)) {
    if (!strstr(msg, s)) {
      print_error("\"%s\" lacks \"%s\"\n", msg, s);
      fail();
    }
  }
  va_end(ap);
  eddy_rt_status_destroy(st);
}

#define REJECT(h, code, ...) reject(h, code, __VA_ARGS__, NULL)
#define HDR(descr, fo, shape)                                                  \
  "{'descr': " descr ", 'fortran_order': " fo ", 'shape': " shape ", }"

static void test_rejects(void **state) {
  (void)state;
  REJECT(HDR("'>f4'", "False", "(2,)"), EDDY_RT_ERR_UNSUPPORTED, "<memory>",
         "big-endian", "'>f4'");
  REJECT(HDR("'>i8'", "False", "(2,)"), EDDY_RT_ERR_UNSUPPORTED, "big-endian");
  REJECT(HDR("'<f4'", "True", "(2, 2)"), EDDY_RT_ERR_UNSUPPORTED,
         "Fortran-order");
  REJECT(HDR("'|O'", "False", "(2,)"), EDDY_RT_ERR_UNSUPPORTED,
         "object arrays");
  REJECT(HDR("'<u1'", "False", "(2,)"), EDDY_RT_ERR_UNSUPPORTED,
         "dtype '<u1' is not supported");
  REJECT(HDR("'<c8'", "False", "(2,)"), EDDY_RT_ERR_UNSUPPORTED, "'<c8'");
  REJECT(HDR("'<V2'", "False", "(2,)"), EDDY_RT_ERR_UNSUPPORTED, "bfloat16");
  REJECT(HDR("[('a', '<f4')]", "False", "(2,)"), EDDY_RT_ERR_UNSUPPORTED,
         "structured");
  REJECT("{'descr': '<f4', 'fortran_order': False, }",
         EDDY_RT_ERR_INVALID_ARGUMENT, "missing key 'shape'");
  REJECT("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': "
         "(), }",
         EDDY_RT_ERR_INVALID_ARGUMENT, "'descr' appears twice");
  REJECT("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}",
         EDDY_RT_ERR_INVALID_ARGUMENT, "unexpected key 'x'");
  REJECT(HDR("'<f4'", "false", "()"), EDDY_RT_ERR_INVALID_ARGUMENT,
         "True or False");
  REJECT(HDR("'<f4'", "False", "(-1,)"), EDDY_RT_ERR_INVALID_ARGUMENT,
         "negative");
  REJECT(HDR("'<f4'", "False", "(99999999999999999999,)"),
         EDDY_RT_ERR_INVALID_ARGUMENT, "overflows");
  REJECT(HDR("'<f8'", "False", "(4294967296, 4294967296)"),
         EDDY_RT_ERR_INVALID_ARGUMENT, "too large");
  REJECT(HDR("'<f8'", "False", "(1000000000,)"), EDDY_RT_ERR_INVALID_ARGUMENT,
         "truncated", "needs 8000000000 bytes");
  REJECT(HDR("'<f4'", "False",
             "(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)"),
         EDDY_RT_ERR_UNSUPPORTED, "more than 16");
  REJECT(HDR("'<f4'", "False", "(2 3)"), EDDY_RT_ERR_INVALID_ARGUMENT,
         "',' or ')'");
  REJECT("{'descr': '<f4", EDDY_RT_ERR_INVALID_ARGUMENT, "closing quote");
  REJECT("{'descr' '<f4'}", EDDY_RT_ERR_INVALID_ARGUMENT, "':' after a key");
  REJECT("{'descr': '<f4', 'fortran_order': False, 'shape': ()} junk",
         EDDY_RT_ERR_INVALID_ARGUMENT, "only padding after '}'");
  REJECT("['descr']", EDDY_RT_ERR_INVALID_ARGUMENT, "expected '{'");
  REJECT("", EDDY_RT_ERR_INVALID_ARGUMENT, "malformed header");

  img_t m;
  eddy_rt_tensor_t t;
  make_npy(&m, 1, HDR("'<f4'", "False", "()"), true, "abcd", 4);
  m.b[0] = 'X';
  RTT_ERR(read_img(&m, &t), EDDY_RT_ERR_INVALID_ARGUMENT, "not a .npy file");
  m.b[0] = 0x93;
  m.b[6] = 4;
  RTT_ERR(read_img(&m, &t), EDDY_RT_ERR_UNSUPPORTED, "version 4.0");
  m.b[6] = 1;
  m.b[7] = 1;
  RTT_ERR(read_img(&m, &t), EDDY_RT_ERR_UNSUPPORTED, "version 1.1");
  make_npy(&m, 2, HDR("'<f4'", "False", "()"), true, "abcd", 4);
  m.b[8] = m.b[9] = m.b[10] = m.b[11] = 0xff;
  RTT_ERR(read_img(&m, &t), EDDY_RT_ERR_INVALID_ARGUMENT, "header length",
          "above the limit");
  // The memory limit applies and names the reader.
  eddy_rt_ctx_options_t o = eddy_rt_ctx_options_default();
  o.memory_limit = 256;
  eddy_rt_ctx_t *lc;
  RTT_OK(eddy_rt_ctx_create(&o, &lc));
  static const double zeros[64];
  make_npy(&m, 1, HDR("'<f8'", "False", "(64,)"), true, zeros, sizeof(zeros));
  RTT_ERR(eddy_rt_npy_read_memory(lc, m.b, m.n, &t), EDDY_RT_ERR_RESOURCE,
          "npy", "memory limit");
  eddy_rt_ctx_destroy(lc);
}

/// Every proper prefix of a valid file is an error; every single-byte
/// corruption of the header either reads or errors, and never crashes (the
/// sanitizer build checks the "never reads out of bounds" part).
static void test_truncation_and_corruption(void **state) {
  (void)state;
  eddy_rt_ctx_t *c = g_ctx;
  eddy_rt_tensor_t x = RTT_F(c, EDDY_RT_F64, "2x3", 1, 2, 3, 4, 5, 6), t;
  for (int version = 1; version <= 2; version++) {
    void *mem;
    size_t n;
    RTT_OK(eddy_rt_npy_write_memory(&x, version, &mem, &n));
    unsigned char *copy = malloc(n);
    assert_non_null(copy);
    for (size_t len = 0; len < n; len++) {
      // A fresh allocation of exactly len bytes, so that reading past the
      // end is caught by AddressSanitizer.
      unsigned char *p = malloc(len ? len : 1);
      assert_non_null(p);
      memcpy(p, mem, len);
      eddy_rt_status_t st = eddy_rt_npy_read_memory(c, p, len, &t);
      if (!st) {
        print_error("prefix of %zu / %zu bytes was accepted\n", len, n);
        fail();
      }
      assert_null(t.data);
      eddy_rt_status_destroy(st);
      free(p);
    }
    size_t hend = version == 1 ? 10 + ((unsigned char *)mem)[8] +
                                     ((size_t)((unsigned char *)mem)[9] << 8)
                               : 12 + ((unsigned char *)mem)[8] +
                                     ((size_t)((unsigned char *)mem)[9] << 8);
    const unsigned char vals[] = {0, ' ', '\'', '(', ')', ',', '9', '{',
                                  '}', ':', 'L', 0x80, 0xff, '-', '"'};
    for (size_t pos = 0; pos < hend; pos++) {
      for (size_t k = 0; k < sizeof(vals); k++) {
        memcpy(copy, mem, n);
        copy[pos] = vals[k];
        eddy_rt_status_t st = eddy_rt_npy_read_memory(c, copy, n, &t);
        if (st)
          eddy_rt_status_destroy(st);
        else
          eddy_rt_tensor_release(&t);
      }
    }
    free(copy);
    free(mem);
  }
  eddy_rt_tensor_release(&x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_round_trips),
      cmocka_unit_test(test_files_and_views),
      cmocka_unit_test(test_numpy_variants),
      cmocka_unit_test(test_rejects),
      cmocka_unit_test(test_truncation_and_corruption),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
