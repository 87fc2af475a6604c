/// Runtime status objects: a code and a malloc'd message.
#include "runtime/rt_internal.h"

#include <stdio.h>
#include <stdlib.h>

struct eddy_rt_status_s {
  eddy_rt_code_t code;
  char *message;
};

// Returned when the status itself cannot be allocated; never freed.
static struct eddy_rt_status_s rt_status_oom = {
    EDDY_RT_ERR_RESOURCE, (char *)"out of memory while reporting an error"};

static eddy_rt_status_t rt_status_createv(eddy_rt_code_t code,
                                          const char *prefix, const char *fmt,
                                          va_list ap) {
  eddy_rt_status_t st = malloc(sizeof(*st));
  if (!st)
    return &rt_status_oom;
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  size_t plen = prefix ? strlen(prefix) + 2 : 0;
  if (n < 0)
    n = 0;
  st->message = malloc(plen + (size_t)n + 1);
  if (!st->message) {
    free(st);
    return &rt_status_oom;
  }
  if (prefix) {
    memcpy(st->message, prefix, plen - 2);
    memcpy(st->message + plen - 2, ": ", 2);
  }
  vsnprintf(st->message + plen, (size_t)n + 1, fmt, ap);
  st->code = code == EDDY_RT_OK ? EDDY_RT_ERR_INTERNAL : code;
  return st;
}

eddy_rt_status_t eddy_rt_status_create(eddy_rt_code_t code, const char *fmt,
                                       ...) {
  va_list ap;
  va_start(ap, fmt);
  eddy_rt_status_t st = rt_status_createv(code, NULL, fmt, ap);
  va_end(ap);
  return st;
}

eddy_rt_status_t rt_err(eddy_rt_code_t code, const char *op, const char *fmt,
                        ...) {
  va_list ap;
  va_start(ap, fmt);
  eddy_rt_status_t st = rt_status_createv(code, op, fmt, ap);
  va_end(ap);
  return st;
}

eddy_rt_status_t rt_err_dtype(const char *op, const char *what, int32_t dtype,
                              const char *expected) {
  return rt_err(EDDY_RT_ERR_INVALID_ARGUMENT, op,
                "%s has dtype %s; expected %s", what,
                eddy_rt_dtype_name(dtype), expected);
}

void eddy_rt_status_destroy(eddy_rt_status_t st) {
  if (!st || st == &rt_status_oom)
    return;
  free(st->message);
  free(st);
}

eddy_rt_code_t eddy_rt_status_code(eddy_rt_status_t st) {
  return st ? st->code : EDDY_RT_OK;
}

const char *eddy_rt_status_message(eddy_rt_status_t st) {
  return st ? st->message : "";
}
