/// Entry helpers for compiled code (backend-cpu): the argument checks and
/// result allocation that every generated `PREFIX_run` function calls, so that
/// the messages are written once, in C, and read the same for every model.
#define _POSIX_C_SOURCE 200809L
#include "runtime/eddyrt.h"
#include "runtime/kernels.h"
#include "runtime/rt_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

char *rt_spec_str(int32_t dtype, int32_t rank, const int64_t *dims, char *buf,
                  size_t size) {
  size_t n = (size_t)snprintf(buf, size, "%s[", eddy_rt_dtype_name(dtype));
  for (int32_t i = 0; i < rank && n < size; i++) {
    if (dims[i] < 0)
      n += (size_t)snprintf(buf + n, size - n, "%s?", i ? "," : "");
    else
      n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? "," : "",
                            (long long)dims[i]);
  }
  if (n < size)
    snprintf(buf + n, size - n, "]");
  return buf;
}

static int32_t entry_err(char *err, size_t errlen, int32_t code,
                         const char *fmt, ...) EDDY_RT_PRINTF(4, 5);

static int32_t entry_err(char *err, size_t errlen, int32_t code,
                         const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return code;
}

int32_t eddy_rt_entry_begin(eddy_rt_ctx_t *rt, const eddy_rt_tensor_t *args,
                            int64_t num_args, eddy_rt_tensor_t *results,
                            int64_t num_results, char *err, size_t errlen) {
  if (err && errlen)
    err[0] = '\0';
  if (results)
    for (int64_t i = 0; i < num_results; i++)
      results[i] = eddy_rt_tensor_empty();
  if (!rt)
    return entry_err(err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT,
                     "the runtime context is NULL");
  if (num_args > 0 && !args)
    return entry_err(err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT,
                     "args is NULL but %lld arguments are expected",
                     (long long)num_args);
  if (num_results > 0 && !results)
    return entry_err(err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT,
                     "results is NULL but %lld results are produced",
                     (long long)num_results);
  return EDDY_RT_OK;
}

int64_t eddy_rt_entry_fp_enter(eddy_rt_ctx_t *rt) {
  uint64_t mode = rt_fp_mode();
  if (rt && eddy_rt_ctx_flush_denormals(rt) &&
      (mode & RT_FP_FLUSH) != RT_FP_FLUSH)
    rt_fp_set_mode(mode | RT_FP_FLUSH);
  return (int64_t)mode;
}

void eddy_rt_entry_fp_exit(int64_t mode) {
  // Only the flush bits go back: exception flags the call raised stay.
  uint64_t now = rt_fp_mode();
  if ((now ^ (uint64_t)mode) & RT_FP_FLUSH)
    rt_fp_set_mode((now & ~RT_FP_FLUSH) | ((uint64_t)mode & RT_FP_FLUSH));
}

int64_t eddy_rt_entry_max_iterations(eddy_rt_ctx_t *rt) {
  int64_t n = rt ? eddy_rt_ctx_max_iterations(rt) : 0;
  return n > 0 ? n : INT64_MAX;
}

static int64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t eddy_rt_entry_deadline(eddy_rt_ctx_t *rt) {
  int64_t ms = rt ? eddy_rt_ctx_timeout_ms(rt) : 0;
  if (ms <= 0 || ms > INT64_MAX / 2000000)
    return INT64_MAX;
  return monotonic_ns() + ms * 1000000;
}

void eddy_rt_entry_loop_check(eddy_rt_ctx_t *rt, int64_t iterations,
                              int64_t limit, int64_t deadline,
                              const char *where, int32_t *code, char *err,
                              size_t errlen) {
  if (!rt || *code != 0)
    return;
  int32_t c = EDDY_RT_OK;
  if (iterations >= limit)
    c = entry_err(err, errlen, EDDY_RT_ERR_RESOURCE,
                  "%s: did not finish within %lld iterations (the iteration "
                  "limit, eddy_rt_ctx_set_max_iterations)",
                  where, (long long)limit);
  else if (eddy_rt_ctx_is_cancelled(rt))
    c = entry_err(err, errlen, EDDY_RT_ERR_CANCELLED,
                  "%s: cancelled (eddy_rt_ctx_cancel) after %lld iterations",
                  where, (long long)iterations);
  else if (deadline != INT64_MAX && monotonic_ns() >= deadline)
    c = entry_err(err, errlen, EDDY_RT_ERR_CANCELLED,
                  "%s: the call ran past its time limit of %lld ms "
                  "(eddy_rt_ctx_set_timeout_ms), after %lld iterations",
                  where, (long long)eddy_rt_ctx_timeout_ms(rt),
                  (long long)iterations);
  if (c != EDDY_RT_OK)
    *code = -c;
}

int32_t eddy_rt_entry_check_arg(const eddy_rt_tensor_t *args, int64_t index,
                                const char *name, int32_t dtype, int32_t rank,
                                const int64_t *dims, char *err, size_t errlen) {
  const eddy_rt_tensor_t *t = &args[index];
  char want[512], got[512];
  rt_spec_str(dtype, rank, dims, want, sizeof want);
  if (t->struct_size != sizeof(eddy_rt_tensor_t) ||
      t->version != EDDY_RT_TENSOR_VERSION)
    return entry_err(err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT,
                     "argument %lld '%s': not an eddy_rt_tensor_t of this "
                     "version (struct_size %u, version %u)",
                     (long long)index, name, t->struct_size, t->version);
  bool ok = t->dtype == dtype && t->rank == rank;
  if (t->rank < 0 || t->rank > EDDY_RT_MAX_RANK)
    return entry_err(err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT,
                     "argument %lld '%s': expected %s, got rank %d",
                     (long long)index, name, want, t->rank);
  for (int32_t i = 0; ok && i < rank; i++)
    ok = t->dims[i] >= 0 && (dims[i] < 0 || dims[i] == t->dims[i]);
  if (!ok) {
    rt_spec_str(t->dtype, t->rank, t->dims, got, sizeof got);
    return entry_err(err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT,
                     "argument %lld '%s': expected %s, got %s",
                     (long long)index, name, want, got);
  }
  eddy_rt_status_t st = eddy_rt_tensor_validate(t, "compiled entry", name);
  if (!st && !eddy_rt_tensor_is_contiguous(t))
    st = eddy_rt_status_create(EDDY_RT_ERR_UNSUPPORTED,
                               "strided tensors are not accepted by compiled "
                               "code; pass a contiguous copy");
  if (st) {
    int32_t code = (int32_t)eddy_rt_status_code(st);
    entry_err(err, errlen, code, "argument %lld '%s': %s", (long long)index,
              name, eddy_rt_status_message(st));
    eddy_rt_status_destroy(st);
    return code;
  }
  return EDDY_RT_OK;
}

int32_t eddy_rt_entry_alloc_result(eddy_rt_ctx_t *rt, eddy_rt_tensor_t *results,
                                   int64_t index, int32_t dtype, int32_t rank,
                                   const int64_t *dims, char *err,
                                   size_t errlen) {
  // Uninitialized: the generated code writes every element.
  eddy_rt_status_t st =
      rt_alloc_tensor(rt, "compiled entry", dtype, rank, dims, &results[index]);
  if (!st)
    return EDDY_RT_OK;
  int32_t code = (int32_t)eddy_rt_status_code(st);
  entry_err(err, errlen, code, "result %lld: %s", (long long)index,
            eddy_rt_status_message(st));
  eddy_rt_status_destroy(st);
  for (int64_t i = 0; i <= index; i++)
    eddy_rt_tensor_release(&results[i]);
  return code;
}

void *eddy_rt_entry_alloc(eddy_rt_ctx_t *rt, int64_t bytes, char *err,
                          size_t errlen) {
  void *p = NULL;
  eddy_rt_status_t st = eddy_rt_alloc(rt, bytes, "compiled code", &p);
  if (!st)
    return p;
  entry_err(err, errlen, (int32_t)eddy_rt_status_code(st), "%s",
            eddy_rt_status_message(st));
  eddy_rt_status_destroy(st);
  return NULL;
}

void eddy_rt_entry_free(eddy_rt_ctx_t *rt, void *ptr, int64_t bytes) {
  eddy_rt_free(rt, ptr, bytes);
}

void eddy_rt_entry_release_results(eddy_rt_tensor_t *results,
                                   int64_t num_results) {
  for (int64_t i = 0; i < num_results; i++)
    eddy_rt_tensor_release(&results[i]);
}

void eddy_rt_entry_run_tasks(eddy_rt_ctx_t *rt, int64_t n, void *fn,
                             void *env) {
  // (Compiled code passes the task function as a plain pointer.)
  eddy_rt_task_fn task;
  memcpy(&task, &fn, sizeof task);
  eddy_rt_pool_parallel_for(eddy_rt_ctx_pool(rt), n, task, env);
}

void eddy_rt_entry_prefix_error(char *err, size_t errlen, const char *where) {
  if (!err || errlen == 0 || !where)
    return;
  size_t n = 0;
  while (n + 1 < errlen && err[n])
    n++;
  char *old = malloc(n + 1);
  if (!old)
    return; // the message stays as it is
  memcpy(old, err, n);
  old[n] = '\0';
  // "tl.get_item: index 5 ..." under "LOC: 'tl.get_item' op" drops its own
  // copy of the op name.
  const char *rest = old, *colon = strstr(old, ": ");
  if (colon && colon > old && (size_t)(colon - old) < 64) {
    char quoted[80];
    snprintf(quoted, sizeof quoted, "'%.*s' op", (int)(colon - old), old);
    if (strstr(where, quoted))
      rest = colon + 2;
  }
  snprintf(err, errlen, "%s: %s", where, rest);
  free(old);
}

int32_t eddy_rt_entry_index_error(char *err, size_t errlen, const char *what,
                                  int64_t index, int64_t size) {
  return entry_err(err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT,
                   "%s: index %lld is out of range [0, %lld)", what,
                   (long long)index, (long long)size);
}

int32_t eddy_rt_entry_dims_error(char *err, size_t errlen, const char *what,
                                 int64_t a, int64_t b) {
  return entry_err(err, errlen, EDDY_RT_ERR_INVALID_ARGUMENT,
                   "%s (%lld and %lld)", what, (long long)a, (long long)b);
}

/// TensorLists for compiled code. Lists are passed as opaque pointers; a
/// NULL list means an earlier error (already recorded), so every helper just
/// passes NULL on. `code` points at the entry's error slot: the first failure
/// stores -CODE there and writes its message to err.

void *rt_entry_list_fail(eddy_rt_status_t st, int32_t *code, char *err,
                         size_t errlen) {
  if (*code == 0) {
    *code = -(int32_t)eddy_rt_status_code(st);
    entry_err(err, errlen, 0, "%s", eddy_rt_status_message(st));
  }
  eddy_rt_status_destroy(st);
  return NULL;
}

/// True when item has exactly (dtype, rank, dims); else records an error
/// and releases item.
static bool spec_ok(eddy_rt_tensor_t *item, const char *op, int32_t dtype,
                    int32_t rank, const int64_t *dims, int32_t *code,
                    char *err, size_t errlen) {
  bool ok = item->dtype == dtype && item->rank == rank;
  for (int32_t i = 0; ok && i < rank; i++)
    ok = item->dims[i] == dims[i];
  if (!ok) {
    char want[256], got[256];
    rt_spec_str(dtype, rank, dims, want, sizeof want);
    rt_spec_str(item->dtype, item->rank, item->dims, got, sizeof got);
    eddy_rt_tensor_release(item);
    rt_entry_list_fail(eddy_rt_status_create(EDDY_RT_ERR_INVALID_ARGUMENT,
                                    "%s: expected %s, got %s", op, want, got),
              code, err, errlen);
  }
  return ok;
}

/// Copies item (then released) into out_data if it has exactly (dtype, rank,
/// dims); else records an error. True on success.
static bool copy_out(eddy_rt_tensor_t *item, const char *op, void *out_data,
                     int32_t dtype, int32_t rank, const int64_t *dims,
                     int32_t *code, char *err, size_t errlen) {
  if (!spec_ok(item, op, dtype, rank, dims, code, err, errlen))
    return false;
  int64_t n = eddy_rt_tensor_numel(item);
  size_t size = eddy_rt_dtype_size(dtype);
  if (eddy_rt_tensor_is_contiguous(item)) {
    if (n > 0)
      memcpy(out_data, item->data, (size_t)n * size);
  } else {
    for (int64_t i = 0; i < n; i++)
      memcpy((char *)out_data + (size_t)i * size,
             eddy_rt_tensor_elem_ptr(item, i), size);
  }
  eddy_rt_tensor_release(item);
  return true;
}

void *eddy_rt_entry_list_empty(eddy_rt_ctx_t *rt, int32_t dtype, int32_t rank,
                               const int64_t *dims, int64_t max_elements,
                               int32_t *code, char *err, size_t errlen) {
  // A list of tensors is a list nested 0 deep (runtime/entry_nested.c).
  return eddy_rt_entry_list_empty_nested(rt, 0, dtype, rank, dims,
                                         max_elements, code, err, errlen);
}

void *eddy_rt_entry_list_push(eddy_rt_ctx_t *rt, void *list, int32_t moved,
                              void *data, int32_t dtype, int32_t rank,
                              const int64_t *dims, int32_t *code, char *err,
                              size_t errlen) {
  if (!list)
    return NULL;
  if (!moved)
    eddy_rt_list_retain(list);
  eddy_rt_tensor_t x;
  eddy_rt_status_t st = eddy_rt_tensor_wrap(dtype, rank, dims, data, &x);
  eddy_rt_list_t *out = NULL;
  if (st) {
    eddy_rt_list_release(list);
    return rt_entry_list_fail(st, code, err, errlen);
  }
  // x is borrowed: the list copies it.
  st = eddy_rt_list_push_back(rt, list, &x, &out);
  return st ? rt_entry_list_fail(st, code, err, errlen) : out;
}

void *eddy_rt_entry_list_pop(eddy_rt_ctx_t *rt, void *list, int32_t moved,
                             void *out_data, int32_t dtype, int32_t rank,
                             const int64_t *dims, int32_t *code, char *err,
                             size_t errlen) {
  if (!list)
    return NULL;
  if (!moved)
    eddy_rt_list_retain(list);
  eddy_rt_list_t *out = NULL;
  eddy_rt_tensor_t item = eddy_rt_tensor_empty();
  eddy_rt_status_t st = eddy_rt_list_pop_back(rt, list, &out, &item);
  if (st)
    return rt_entry_list_fail(st, code, err, errlen);
  if (!copy_out(&item, "tl.pop_back", out_data, dtype, rank, dims, code, err,
                errlen)) {
    eddy_rt_list_release(out);
    return NULL;
  }
  return out;
}

void *eddy_rt_entry_list_resize(eddy_rt_ctx_t *rt, void *list, int32_t moved,
                                int64_t n, int32_t *code, char *err,
                                size_t errlen) {
  if (!list)
    return NULL;
  if (!moved)
    eddy_rt_list_retain(list);
  eddy_rt_tensor_t nt;
  eddy_rt_list_t *out = NULL;
  eddy_rt_status_t st = eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &n, &nt);
  if (st) {
    eddy_rt_list_release(list);
    return rt_entry_list_fail(st, code, err, errlen);
  }
  st = eddy_rt_list_resize(rt, list, &nt, &out);
  return st ? rt_entry_list_fail(st, code, err, errlen) : out;
}

void *eddy_rt_entry_list_add(eddy_rt_ctx_t *rt, void *list, int32_t moved,
                             const void *other, int32_t *code, char *err,
                             size_t errlen) {
  if (!list || !other)
    return NULL;
  if (!moved)
    eddy_rt_list_retain(list);
  eddy_rt_list_t *out = NULL;
  eddy_rt_status_t st = eddy_rt_list_add(rt, list, other, &out);
  return st ? rt_entry_list_fail(st, code, err, errlen) : out;
}

void *eddy_rt_entry_list_zeros_like(eddy_rt_ctx_t *rt, const void *list,
                                    int32_t *code, char *err, size_t errlen) {
  if (!list)
    return NULL;
  eddy_rt_list_t *out = NULL;
  eddy_rt_status_t st = eddy_rt_list_zeros_like(rt, list, &out);
  return st ? rt_entry_list_fail(st, code, err, errlen) : out;
}

void *eddy_rt_entry_list_scatter(eddy_rt_ctx_t *rt, void *list, int32_t moved,
                                 void *idx_data, int32_t idx_dtype, int64_t n,
                                 void *data, int32_t dtype, int32_t rank,
                                 const int64_t *dims, int32_t *code, char *err,
                                 size_t errlen) {
  if (!list)
    return NULL;
  if (!moved)
    eddy_rt_list_retain(list);
  eddy_rt_tensor_t it, x;
  eddy_rt_list_t *out = NULL;
  eddy_rt_status_t st = eddy_rt_tensor_wrap(idx_dtype, 1, &n, idx_data, &it);
  if (!st)
    st = eddy_rt_tensor_wrap(dtype, rank, dims, data, &x);
  if (st) {
    eddy_rt_list_release(list);
    return rt_entry_list_fail(st, code, err, errlen);
  }
  // x is borrowed: the list copies it.
  st = eddy_rt_list_scatter(rt, list, &it, &x, &out);
  return st ? rt_entry_list_fail(st, code, err, errlen) : out;
}

void eddy_rt_entry_list_concat(eddy_rt_ctx_t *rt, const void *list,
                               void *out_data, int32_t dtype, int32_t rank,
                               const int64_t *dims, void *out_lengths,
                               int32_t *code, char *err, size_t errlen) {
  if (!list)
    return;
  eddy_rt_tensor_t t = eddy_rt_tensor_empty(), n = eddy_rt_tensor_empty();
  eddy_rt_status_t st = eddy_rt_list_concat(rt, list, &t, &n);
  if (st) {
    rt_entry_list_fail(st, code, err, errlen);
    return;
  }
  if (n.dims[0] > 0)
    memcpy(out_lengths, n.data, (size_t)n.dims[0] * sizeof(int64_t));
  eddy_rt_tensor_release(&n);
  copy_out(&t, "tl.concat", out_data, dtype, rank, dims, code, err, errlen);
}

void *eddy_rt_entry_list_split(eddy_rt_ctx_t *rt, void *data, int32_t dtype,
                               int32_t rank, const int64_t *dims,
                               void *len_data, int32_t len_dtype, int64_t n,
                               int32_t erank, const int64_t *edims,
                               int32_t *code, char *err, size_t errlen) {
  eddy_rt_tensor_t x, lens;
  eddy_rt_elem_shape_t es;
  eddy_rt_list_t *l = NULL;
  eddy_rt_status_t st = eddy_rt_tensor_wrap(dtype, rank, dims, data, &x);
  if (!st)
    st = eddy_rt_tensor_wrap(len_dtype, 1, &n, len_data, &lens);
  if (!st && !eddy_rt_elem_shape_make(erank, edims, &es))
    st = eddy_rt_status_create(EDDY_RT_ERR_INTERNAL,
                               "tl.split: bad element rank %d", (int)erank);
  // x is borrowed: the list copies it.
  if (!st)
    st = eddy_rt_list_split(rt, &x, &lens, &es, &l);
  return st ? rt_entry_list_fail(st, code, err, errlen) : l;
}

int64_t eddy_rt_entry_list_length(const void *list) {
  return list ? eddy_rt_list_size(list) : 0;
}

void eddy_rt_entry_list_retain(void *list) {
  if (list)
    eddy_rt_list_retain(list);
}

void eddy_rt_entry_list_release(void *list) { eddy_rt_list_release(list); }

void *eddy_rt_entry_list_reserve(eddy_rt_ctx_t *rt, int32_t dtype, int32_t rank,
                                 const int64_t *dims, int64_t n, int32_t *code,
                                 char *err, size_t errlen) {
  return eddy_rt_entry_list_reserve_nested(rt, 0, dtype, rank, dims, n, code,
                                           err, errlen);
}

void *eddy_rt_entry_list_from_tensor(eddy_rt_ctx_t *rt, void *data,
                                     int32_t dtype, int32_t rank,
                                     const int64_t *dims, int32_t *code,
                                     char *err, size_t errlen) {
  eddy_rt_tensor_t x;
  eddy_rt_list_t *l = NULL;
  eddy_rt_status_t st = eddy_rt_tensor_wrap(dtype, rank, dims, data, &x);
  // x is borrowed: the list copies the items.
  if (!st)
    st = eddy_rt_list_from_tensor(rt, &x, NULL, &l);
  return st ? rt_entry_list_fail(st, code, err, errlen) : l;
}

void *eddy_rt_entry_list_from_arg(eddy_rt_ctx_t *rt, void *data,
                                  int32_t dtype, int32_t rank,
                                  const int64_t *dims, int32_t *code,
                                  char *err, size_t errlen) {
  eddy_rt_tensor_t x = eddy_rt_tensor_empty();
  eddy_rt_list_t *l = NULL;
  eddy_rt_status_t st = eddy_rt_tensor_wrap(dtype, rank, dims, data, &x);
  // The items share the argument's data through a borrowed buffer.
  if (!st)
    st = eddy_rt_buffer_borrow(rt, data,
                               eddy_rt_tensor_numel(&x) *
                                   (int64_t)eddy_rt_dtype_size(dtype),
                               "tl.from_tensor", &x.owner);
  if (!st)
    st = eddy_rt_list_from_tensor(rt, &x, NULL, &l);
  eddy_rt_buffer_release(x.owner);
  return st ? rt_entry_list_fail(st, code, err, errlen) : l;
}

void eddy_rt_entry_list_get(eddy_rt_ctx_t *rt, const void *list, int64_t index,
                            void *out_data, int32_t dtype, int32_t rank,
                            const int64_t *dims, int32_t *code, char *err,
                            size_t errlen) {
  if (!list)
    return;
  eddy_rt_tensor_t it, item = eddy_rt_tensor_empty();
  eddy_rt_status_t st = eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &index, &it);
  if (!st)
    st = eddy_rt_list_get_item(rt, list, &it, &item);
  if (st) {
    rt_entry_list_fail(st, code, err, errlen);
    return;
  }
  copy_out(&item, "tl.get_item", out_data, dtype, rank, dims, code, err,
           errlen);
}

const void *eddy_rt_entry_list_view(eddy_rt_ctx_t *rt, const void *list,
                                    int64_t index, int32_t dtype,
                                    int32_t rank, const int64_t *dims,
                                    int32_t *code, char *err, size_t errlen) {
  if (!list)
    return NULL;
  eddy_rt_tensor_t it, item = eddy_rt_tensor_empty();
  eddy_rt_status_t st = eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &index, &it);
  if (!st)
    st = eddy_rt_list_get_item(rt, list, &it, &item);
  if (st)
    return rt_entry_list_fail(st, code, err, errlen);
  if (!spec_ok(&item, "tl.get_item", dtype, rank, dims, code, err, errlen))
    return NULL;
  // An item the list holds (its reference keeps the data); an unset item
  // comes back as a fresh tensor of zeros, which the caller copies instead.
  const void *p = NULL;
  if (item.owner && !eddy_rt_buffer_is_unique(item.owner) &&
      eddy_rt_tensor_is_contiguous(&item))
    p = item.data;
  eddy_rt_tensor_release(&item);
  return p;
}

void *eddy_rt_entry_list_set(eddy_rt_ctx_t *rt, void *list, int32_t moved,
                             int64_t index, void *data, int32_t dtype,
                             int32_t rank, const int64_t *dims, int32_t *code,
                             char *err, size_t errlen) {
  if (!list)
    return NULL;
  if (!moved)
    eddy_rt_list_retain(list);
  eddy_rt_tensor_t it, x;
  eddy_rt_list_t *out = NULL;
  eddy_rt_status_t st = eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &index, &it);
  if (!st)
    st = eddy_rt_tensor_wrap(dtype, rank, dims, data, &x);
  if (st) {
    eddy_rt_list_release(list);
    return rt_entry_list_fail(st, code, err, errlen);
  }
  st = eddy_rt_list_set_item(rt, list, &it, &x, &out);
  return st ? rt_entry_list_fail(st, code, err, errlen) : out;
}

/// The first set item of a list of size > 0 (an item of the fully known
/// element shape when none is set); when the element shape is not fully
/// known and no item is set, eddy_rt_list_stack's error.
static eddy_rt_status_t stack_item_dims(eddy_rt_ctx_t *rt, const void *list,
                                        int64_t size,
                                        eddy_rt_tensor_t *item) {
  for (int64_t at = 0; at < size; at++) {
    eddy_rt_tensor_t it;
    eddy_rt_status_t st = eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &at, &it);
    if (!st)
      st = eddy_rt_list_get_item(rt, list, &it, item);
    if (!st)
      return NULL;
    // An unset item: get_item refuses it only when the element shape is not
    // fully known, and then the first set item is what counts.
    eddy_rt_status_destroy(st);
    *item = eddy_rt_tensor_empty();
  }
  return eddy_rt_list_stack(rt, list, item);
}

void eddy_rt_entry_list_dims(eddy_rt_ctx_t *rt, const void *list,
                             int32_t what, int64_t index, int32_t rank,
                             int64_t *out_dims, int32_t *code, char *err,
                             size_t errlen) {
  for (int32_t i = 0; i < rank; i++)
    out_dims[i] = 0;
  if (!list)
    return;
  eddy_rt_tensor_t item = eddy_rt_tensor_empty();
  eddy_rt_status_t st = NULL;
  int64_t size = eddy_rt_list_size(list);
  int32_t skip = 0;
  if (what == 1 && size == 0) {
    // An empty list stacks to [0] + its element shape (or fails).
    st = eddy_rt_list_stack(rt, list, &item);
  } else if (what == 1) {
    // A stack's item dims are those of its first set item, else the element
    // shape (unset items read as zeros of it), as eddy_rt_list_stack has
    // them; it checks the other items and reports a list it cannot stack.
    out_dims[0] = size;
    skip = 1;
    st = stack_item_dims(rt, list, size, &item);
  } else if (what == 2) {
    // A concatenation's dims (computed whole: the dims are its result's).
    eddy_rt_tensor_t lens = eddy_rt_tensor_empty();
    st = eddy_rt_list_concat(rt, list, &item, &lens);
    eddy_rt_tensor_release(&lens);
  } else if (index >= 0 || size > 0) {
    // Index -1 is the last item (pop_back).
    int64_t at = index >= 0 ? index : size - 1;
    eddy_rt_tensor_t it;
    st = eddy_rt_tensor_wrap(EDDY_RT_I64, 0, NULL, &at, &it);
    if (!st)
      st = eddy_rt_list_get_item(rt, list, &it, &item);
  } else {
    return; // popping an empty list: tl.pop_back reports it
  }
  if (st) {
    rt_entry_list_fail(st, code, err, errlen);
    return;
  }
  // A rank that differs is reported by the read itself (copy_out).
  if (item.rank == rank - skip)
    for (int32_t i = 0; i < item.rank; i++)
      out_dims[i + skip] = item.dims[i];
  eddy_rt_tensor_release(&item);
}

void eddy_rt_entry_list_stack(eddy_rt_ctx_t *rt, const void *list,
                              void *out_data, int32_t dtype, int32_t rank,
                              const int64_t *dims, int32_t *code, char *err,
                              size_t errlen) {
  if (!list)
    return;
  // Stacked straight into out_data, once its dims are checked.
  eddy_rt_tensor_t t = eddy_rt_tensor_empty();
  eddy_rt_status_t st = rt_list_stack_dims(list, &t.rank, t.dims);
  if (st) {
    rt_entry_list_fail(st, code, err, errlen);
    return;
  }
  t.dtype = eddy_rt_list_dtype(list);
  if (spec_ok(&t, "tl.stack", dtype, rank, dims, code, err, errlen))
    rt_list_stack_fill(list, t.rank, t.dims, out_data);
}
