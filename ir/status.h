/// eddy status: the one error type of the compiler libraries.
///
/// A status is a pointer: NULL means success, anything else is an owned error
/// carrying a code, a message and an optional location. Library code never
/// prints or exits on user input; it returns a status and the caller decides.
#ifndef EDDY_IR_STATUS_H
#define EDDY_IR_STATUS_H

#include <stdarg.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum eddy_status_code {
  EDDY_OK = 0,
  EDDY_ERR_INVALID_ARGUMENT, ///< bad input from the user (file, flag, shape)
  EDDY_ERR_PARSE,            ///< malformed text
  EDDY_ERR_VERIFY,           ///< IR that breaks an invariant
  EDDY_ERR_UNSUPPORTED,      ///< valid but not (yet) handled
  EDDY_ERR_NOT_FOUND,        ///< a named thing does not exist
  EDDY_ERR_IO,               ///< file system failure
  EDDY_ERR_RESOURCE,         ///< out of memory or past a limit
  EDDY_ERR_INTERNAL,         ///< a bug in eddy
  EDDY_ERR_CANCELLED,        ///< cancelled, or past its time limit
} eddy_status_code_t;

typedef struct eddy_status_s *eddy_status_t;

/// Creates an error with a printf-style message. Never returns NULL for a
/// non-OK code (falls back to a static out-of-memory status).
eddy_status_t eddy_status_create(eddy_status_code_t code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
eddy_status_t eddy_status_createv(eddy_status_code_t code, const char *fmt,
                                  va_list ap);
/// Like eddy_status_create, with a location prefix ("file:line:col" or a
/// node name) that eddy_status_format puts before "error:".
eddy_status_t eddy_status_create_at(eddy_status_code_t code, const char *loc,
                                    const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/// Appends a note line (e.g. a caret line or "while verifying ...").
void eddy_status_append_note(eddy_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void eddy_status_destroy(eddy_status_t st);

eddy_status_code_t eddy_status_code(eddy_status_t st);
/// Borrowed; valid until the status is destroyed. "" for NULL.
const char *eddy_status_message(eddy_status_t st);
/// Borrowed location string, or NULL when none.
const char *eddy_status_location(eddy_status_t st);
/// Borrowed notes text (possibly ""), each note ending in '\n'.
const char *eddy_status_notes(eddy_status_t st);
const char *eddy_status_code_name(eddy_status_code_t code);
/// Writes "LOC: error: MESSAGE\nNOTES" to f.
void eddy_status_print(eddy_status_t st, FILE *f);

#define EDDY_RETURN_IF_ERROR(expr)                                             \
  do {                                                                         \
    eddy_status_t eddy_status_tmp_ = (expr);                                   \
    if (eddy_status_tmp_)                                                      \
      return eddy_status_tmp_;                                                 \
  } while (0)

#ifdef __cplusplus
}
#endif
#endif
