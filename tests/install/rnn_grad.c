/// Runs rnn_grad_v2 (tests/fixtures/tf: a TensorFlow tanh RNN over a
/// [T, B, D] sequence and its gradient, 7 fetches) built by eddy_add_model
/// from its GraphDef, on the fixture's inputs in_0..in_4.npy, and compares
/// every result with TensorFlow's out_0..out_6.npy within the fixture's
/// tolerance (|got - want| <= atol + rtol * |want|).
/// usage: app_rnn_grad FIXTURE_DIR
#include "rnn_grad.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NUM_IN 5
#define NUM_OUT 7
#define ATOL 1e-5
#define RTOL 1e-4
#if rnn_grad_NUM_ARGS != NUM_IN || rnn_grad_NUM_RESULTS != NUM_OUT
#error "rnn_grad.h: expected 5 arguments (FEEDS) and 7 results (FETCHES)"
#endif

/// A float32 array read from a .npy file.
typedef struct {
  int32_t rank;
  int64_t dims[EDDY_RT_MAX_RANK];
  int64_t numel;
  float *data;
} npy_t;

/// Reads PATH: .npy format 1.0, little-endian f32, C order (what the fixtures
/// hold). Returns 0, or prints why not (naming the file) and returns 1.
static int npy_read(const char *path, npy_t *out) {
  memset(out, 0, sizeof *out);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "%s: cannot open\n", path);
    return 1;
  }
  unsigned char pre[10];
  char header[1024];
  int rc = 1;
  if (fread(pre, 1, sizeof pre, f) != sizeof pre ||
      memcmp(pre, "\x93NUMPY", 6) != 0) {
    fprintf(stderr, "%s: not a .npy file\n", path);
    goto done;
  }
  if (pre[6] != 1 || pre[7] != 0) {
    fprintf(stderr, "%s: .npy format %d.%d, only 1.0 is read\n", path, pre[6],
            pre[7]);
    goto done;
  }
  size_t hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
  if (hlen >= sizeof header || fread(header, 1, hlen, f) != hlen) {
    fprintf(stderr, "%s: bad header length %zu\n", path, hlen);
    goto done;
  }
  header[hlen] = '\0';
  if (!strstr(header, "'descr': '<f4'") ||
      !strstr(header, "'fortran_order': False")) {
    fprintf(stderr, "%s: not little-endian float32 in C order: %s\n", path,
            header);
    goto done;
  }
  const char *p = strstr(header, "'shape': (");
  if (!p) {
    fprintf(stderr, "%s: no shape in the header: %s\n", path, header);
    goto done;
  }
  p += strlen("'shape': (");
  out->numel = 1;
  while (*p != ')') {
    char *end;
    long long d = strtoll(p, &end, 10);
    if (end == p || d < 0 || out->rank == EDDY_RT_MAX_RANK) {
      fprintf(stderr, "%s: bad shape in the header: %s\n", path, header);
      goto done;
    }
    out->dims[out->rank++] = d;
    out->numel *= d;
    p = end;
    while (*p == ',' || *p == ' ')
      p++;
  }
  out->data = malloc(out->numel ? (size_t)out->numel * sizeof(float) : 1);
  if (!out->data) {
    fprintf(stderr, "%s: out of memory\n", path);
    goto done;
  }
  if (fread(out->data, sizeof(float), (size_t)out->numel, f) !=
      (size_t)out->numel) {
    fprintf(stderr, "%s: shorter than its shape says\n", path);
    goto done;
  }
  rc = 0;
done:
  fclose(f);
  if (rc) {
    free(out->data);
    out->data = NULL;
  }
  return rc;
}

/// Writes "[d0,d1,...]" into BUF.
static const char *dims_text(int32_t rank, const int64_t *dims, char *buf,
                             size_t len) {
  size_t n = (size_t)snprintf(buf, len, "[");
  for (int32_t i = 0; i < rank && n < len; i++)
    n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? "," : "",
                          (long long)dims[i]);
  if (n < len)
    snprintf(buf + n, len - n, "]");
  return buf;
}

/// Compares result INDEX with WANT; prints one line, returns 1 on mismatch.
static int compare(int index, const eddy_rt_tensor_t *got, const npy_t *want) {
  int same_shape = got->dtype == EDDY_RT_F32 && got->rank == want->rank;
  for (int32_t i = 0; same_shape && i < want->rank; i++)
    same_shape = got->dims[i] == want->dims[i];
  if (!same_shape) {
    char a[256], b[256];
    fprintf(stderr, "result %d: dtype %d, dims %s; out_%d.npy: f32, dims %s\n",
            index, (int)got->dtype,
            dims_text(got->rank, got->dims, a, sizeof a), index,
            dims_text(want->rank, want->dims, b, sizeof b));
    return 1;
  }
  const float *g = got->data;
  double max_err = 0;
  int64_t bad = 0, first_bad = -1;
  for (int64_t i = 0; i < want->numel; i++) {
    double w = want->data[i], d = fabs((double)g[i] - w);
    if (d > max_err || d != d)
      max_err = d;
    if (!(d <= ATOL + RTOL * fabs(w))) {
      if (first_bad < 0)
        first_bad = i;
      bad++;
    }
  }
  printf("rnn_grad (GraphDef) result %d: %lld elements, max abs error %.3g%s\n",
         index, (long long)want->numel, max_err, bad ? " MISMATCH" : "");
  if (bad)
    fprintf(stderr,
            "result %d: %lld elements differ, first at %lld: %.9g, "
            "TensorFlow %.9g\n",
            index, (long long)bad, (long long)first_bad, (double)g[first_bad],
            (double)want->data[first_bad]);
  return bad != 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s FIXTURE_DIR\n", argv[0]);
    return 2;
  }
  npy_t in[NUM_IN], out[NUM_OUT];
  memset(in, 0, sizeof in);
  memset(out, 0, sizeof out);
  char path[4096];
  int bad = 0;
  for (int i = 0; i < NUM_IN + NUM_OUT && !bad; i++) {
    int is_in = i < NUM_IN;
    snprintf(path, sizeof path, "%s/%s_%d.npy", argv[1], is_in ? "in" : "out",
             is_in ? i : i - NUM_IN);
    bad = npy_read(path, is_in ? &in[i] : &out[i - NUM_IN]);
  }

  eddy_rt_ctx_t *rt = NULL;
  if (!bad) {
    eddy_rt_status_t rs = eddy_rt_ctx_create(NULL, &rt);
    if (rs) {
      fprintf(stderr, "%s\n", eddy_rt_status_message(rs));
      eddy_rt_status_destroy(rs);
      bad = 1;
    }
  }
  if (!bad) {
    // The arguments follow FEEDS: x, h0, w, u, b (in_0 .. in_4).
    eddy_rt_tensor_t args[rnn_grad_NUM_ARGS], results[rnn_grad_NUM_RESULTS];
    for (int i = 0; i < NUM_IN; i++)
      eddy_rt_tensor_wrap(EDDY_RT_F32, in[i].rank, in[i].dims, in[i].data,
                          &args[i]);
    char err[256] = "";
    int32_t rc = rnn_grad_run(rt, args, results, err, sizeof err);
    if (rc != 0) {
      fprintf(stderr, "rnn_grad: error: %s\n", err);
      bad = 1;
    } else {
      for (int i = 0; i < NUM_OUT; i++)
        bad |= compare(i, &results[i], &out[i]);
      for (int i = 0; i < rnn_grad_NUM_RESULTS; i++)
        eddy_rt_tensor_release(&results[i]);
    }
  }
  eddy_rt_ctx_destroy(rt);
  for (int i = 0; i < NUM_IN; i++)
    free(in[i].data);
  for (int i = 0; i < NUM_OUT; i++)
    free(out[i].data);
  if (bad)
    fprintf(stderr, "FAILED: rnn_grad (GraphDef) does not match TensorFlow\n");
  return bad;
}
