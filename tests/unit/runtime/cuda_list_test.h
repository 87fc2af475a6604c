/// What the tests of the device lists share (test_rt_cuda_list.c: lists of
/// tensors and what only the device has; test_rt_cuda_list_nested.c:
/// tl.add, tl.zeros_like and lists of lists): the fake driver's knobs, a
/// setup and teardown that check nothing leaked, device buffers, and the
/// pairs: every op runs on the host helpers (eddy_rt_entry_list_*) and on
/// the device helpers with the same arguments, and results, lengths, codes
/// and messages must agree. Included by those two files only.
#ifndef EDDY_TESTS_UNIT_RUNTIME_CUDA_LIST_TEST_H
#define EDDY_TESTS_UNIT_RUNTIME_CUDA_LIST_TEST_H

#include "tests/unit/runtime/cuda_test.h"

#define F32 EDDY_RT_F32
#define I32 EDDY_RT_I32
#define ERRLEN CUDA_TEST_ERRLEN

/// The knobs of the fake driver both files use.
static long (*cuda_stat)(const char *what);

static eddy_rt_ctx_t *g_ctx; // for the host helpers
static long g_allocs, g_host, g_events;

static inline int setup(void **state) {
  (void)state;
  g_ctx = rtt_ctx(1);
  begin_ok();
  g_allocs = cuda_stat("live_allocs");
  g_host = cuda_stat("live_host_allocs");
  g_events = cuda_stat("live_events");
  return 0;
}

/// Nothing leaked: host list storage, device and pinned blocks, events.
static inline int teardown(void **state) {
  (void)state;
  end_ok();
  assert_int_equal(eddy_rt_ctx_bytes_in_use(g_ctx), 0);
  assert_int_equal(cuda_stat("live_allocs"), g_allocs);
  assert_int_equal(cuda_stat("live_host_allocs"), g_host);
  assert_int_equal(cuda_stat("live_events"), g_events);
  eddy_rt_ctx_destroy(g_ctx);
  return 0;
}

/// ---- Device buffers --------------------------------------------------------

static inline void *dput(const void *host, size_t bytes) {
  void *d = eddy_rt_entry_cuda_alloc(NULL, (int64_t)bytes, g_err, sizeof g_err);
  if (!d)
    fail_msg("eddy_rt_entry_cuda_alloc: %s", g_err);
  eddy_rt_entry_cuda_to_device(d, host, (int64_t)bytes);
  return d;
}

static inline void dfree(void *d, size_t bytes) {
  eddy_rt_entry_cuda_free(NULL, d, (int64_t)bytes);
}

/// ---- Host and device side by side ------------------------------------------

/// A host list and a device list that went through the same operations.
typedef struct pair {
  void *h, *d;
} pair_t;

/// The outcome both sides must agree on.
typedef struct res {
  int32_t code;
  char err[ERRLEN];
} res_t;

typedef struct slots {
  int32_t hc, dc;
  char he[ERRLEN], de[ERRLEN];
} slots_t;

static inline slots_t slots(void) {
  slots_t s;
  memset(&s, 0, sizeof s);
  return s;
}

/// The two sides agree; returns their common outcome.
static inline res_t agree(const slots_t *s, const void *hret, const void *dret,
                          bool returns) {
  if (s->hc != s->dc || strcmp(s->he, s->de) != 0)
    fail_msg("host: %d \"%s\"\ndevice: %d \"%s\"", s->hc, s->he, s->dc, s->de);
  if (returns && (hret == NULL) != (dret == NULL))
    fail_msg("host returned %p, device %p", hret, dret);
  res_t r;
  r.code = s->hc;
  memcpy(r.err, s->he, sizeof r.err);
  return r;
}

static inline void same_length(pair_t p) {
  assert_int_equal(eddy_rt_entry_list_length(p.h),
                   eddy_rt_entry_cuda_list_length(p.d));
}

static inline size_t nbytes(int32_t dtype, int32_t rank, const int64_t *dims) {
  size_t n = eddy_rt_dtype_size(dtype);
  for (int32_t i = 0; i < rank; i++)
    n *= (size_t)dims[i];
  return n;
}

static inline pair_t p_empty(int32_t dtype, int32_t rank, const int64_t *dims,
                             int64_t max, int32_t swap, res_t *r) {
  slots_t s = slots();
  pair_t p = {eddy_rt_entry_list_empty(g_ctx, dtype, rank, dims, max, &s.hc,
                                       s.he, ERRLEN),
              eddy_rt_entry_cuda_list_empty(g_ctx, dtype, rank, dims, max,
                                            &s.dc, s.de, ERRLEN, swap)};
  *r = agree(&s, p.h, p.d, true);
  return p;
}

static inline pair_t p_reserve(int32_t dtype, int32_t rank, const int64_t *dims,
                               int64_t n, res_t *r) {
  slots_t s = slots();
  pair_t p = {eddy_rt_entry_list_reserve(g_ctx, dtype, rank, dims, n, &s.hc,
                                         s.he, ERRLEN),
              eddy_rt_entry_cuda_list_reserve(g_ctx, dtype, rank, dims, n,
                                              &s.dc, s.de, ERRLEN)};
  *r = agree(&s, p.h, p.d, true);
  if (p.h)
    same_length(p);
  return p;
}

static inline pair_t p_push(pair_t l, int32_t moved, const void *data,
                            int32_t dtype, int32_t rank, const int64_t *dims,
                            res_t *r) {
  slots_t s = slots();
  size_t bytes = nbytes(dtype, rank, dims);
  void *d = dput(data, bytes);
  pair_t p = {eddy_rt_entry_list_push(g_ctx, l.h, moved, (void *)data, dtype,
                                      rank, dims, &s.hc, s.he, ERRLEN),
              eddy_rt_entry_cuda_list_push(g_ctx, l.d, moved, d, dtype, rank,
                                           dims, &s.dc, s.de, ERRLEN)};
  // The caller may reuse its buffer at once.
  memset(g_err, 0x7f, sizeof g_err);
  eddy_rt_entry_cuda_to_device(d, g_err, (int64_t)bytes);
  dfree(d, bytes);
  *r = agree(&s, p.h, p.d, true);
  if (p.h)
    same_length(p);
  return p;
}

static inline pair_t p_set(pair_t l, int32_t moved, int64_t index,
                           const void *data, int32_t dtype, int32_t rank,
                           const int64_t *dims, res_t *r) {
  slots_t s = slots();
  size_t bytes = nbytes(dtype, rank, dims);
  void *d = dput(data, bytes);
  pair_t p = {eddy_rt_entry_list_set(g_ctx, l.h, moved, index, (void *)data,
                                     dtype, rank, dims, &s.hc, s.he, ERRLEN),
              eddy_rt_entry_cuda_list_set(g_ctx, l.d, moved, index, d, dtype,
                                          rank, dims, &s.dc, s.de, ERRLEN)};
  dfree(d, bytes);
  *r = agree(&s, p.h, p.d, true);
  if (p.h)
    same_length(p);
  return p;
}

/// What a read wrote must agree too (both outputs start as garbage).
static inline void same_output(const res_t *r, const void *hout, void *d,
                               size_t bytes) {
  char back[4096];
  assert_true(bytes <= sizeof back);
  eddy_rt_entry_cuda_to_host(back, d, (int64_t)bytes);
  dfree(d, bytes);
  if (r->code == 0 && bytes > 0)
    assert_memory_equal(back, hout, bytes);
}

static inline pair_t p_pop(pair_t l, int32_t moved, void *out, int32_t dtype,
                           int32_t rank, const int64_t *dims, res_t *r) {
  slots_t s = slots();
  size_t bytes = nbytes(dtype, rank, dims);
  memset(out, 0x55, bytes);
  void *d = dput(out, bytes);
  pair_t p = {eddy_rt_entry_list_pop(g_ctx, l.h, moved, out, dtype, rank, dims,
                                     &s.hc, s.he, ERRLEN),
              eddy_rt_entry_cuda_list_pop(g_ctx, l.d, moved, d, dtype, rank,
                                          dims, &s.dc, s.de, ERRLEN)};
  *r = agree(&s, p.h, p.d, true);
  same_output(r, out, d, bytes);
  if (p.h)
    same_length(p);
  return p;
}

static inline void p_get(pair_t l, int64_t index, void *out, int32_t dtype,
                         int32_t rank, const int64_t *dims, res_t *r) {
  slots_t s = slots();
  size_t bytes = nbytes(dtype, rank, dims);
  memset(out, 0x55, bytes);
  void *d = dput(out, bytes);
  eddy_rt_entry_list_get(g_ctx, l.h, index, out, dtype, rank, dims, &s.hc, s.he,
                         ERRLEN);
  eddy_rt_entry_cuda_list_get(g_ctx, l.d, index, d, dtype, rank, dims, &s.dc,
                              s.de, ERRLEN);
  *r = agree(&s, NULL, NULL, false);
  same_output(r, out, d, bytes);
}

static inline void p_stack(pair_t l, void *out, int32_t dtype, int32_t rank,
                           const int64_t *dims, res_t *r) {
  slots_t s = slots();
  size_t bytes = nbytes(dtype, rank, dims);
  memset(out, 0x55, bytes);
  void *d = dput(out, bytes);
  eddy_rt_entry_list_stack(g_ctx, l.h, out, dtype, rank, dims, &s.hc, s.he,
                           ERRLEN);
  eddy_rt_entry_cuda_list_stack(g_ctx, l.d, d, dtype, rank, dims, &s.dc, s.de,
                                ERRLEN);
  *r = agree(&s, NULL, NULL, false);
  same_output(r, out, d, bytes);
}

static inline void p_release(pair_t p) {
  eddy_rt_entry_list_release(p.h);
  eddy_rt_entry_cuda_list_release(p.d);
}

static inline void p_retain(pair_t p) {
  eddy_rt_entry_list_retain(p.h);
  eddy_rt_entry_cuda_list_retain(p.d);
}

#define OK(r) assert_int_equal((r).code, 0)

static inline void expect_err(const res_t *r, int32_t code, const char *msg) {
  if (r->code != code || strcmp(r->err, msg) != 0)
    fail_msg("got %d \"%s\"\nexpected %d \"%s\"", r->code, r->err, code, msg);
}

/// The shape most items of the tests have.
static const int64_t k23[] = {2, 3};

static inline void fill(float *v, int n, float base) {
  for (int i = 0; i < n; i++)
    v[i] = base + (float)i * 0.25f;
}

/// Loads the fakes (exits when they cannot be loaded) and cuda_stat;
/// returns the fake driver for the tests' other knobs.
static inline void *cuda_list_test_init(void) {
  void *cuda, *cublas;
  cuda_test_load_fakes(&cuda, &cublas);
  knob(cuda, "fake_cuda_stat", &cuda_stat);
  return cuda;
}

#endif
