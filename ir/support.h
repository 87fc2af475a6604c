/// Small data structures shared by every part of eddy: an arena, a pointer
/// hash map, a growable byte buffer, and checked size arithmetic.
#ifndef EDDY_IR_SUPPORT_H
#define EDDY_IR_SUPPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// ---- Arena -----------------------------------------------------------------
/// Bump allocator. Memory is released all at once by reset or destroy.
typedef struct eddy_arena eddy_arena_t;

/// Owned; NULL on out of memory.
eddy_arena_t *eddy_arena_create(void);
void eddy_arena_destroy(eddy_arena_t *a);
/// Frees every allocation but keeps the first chunk for reuse.
void eddy_arena_reset(eddy_arena_t *a);
/// Zero-initialized, 16-byte aligned. Aborts on out of memory (the IR cannot
/// continue without memory; sizes from user input are checked before this).
void *eddy_arena_alloc(eddy_arena_t *a, size_t size);
/// Copies n bytes into the arena (n may be 0; then returns a valid pointer).
void *eddy_arena_dup(eddy_arena_t *a, const void *p, size_t n);
/// NUL-terminated copy of s[0..n).
char *eddy_arena_strndup(eddy_arena_t *a, const char *s, size_t n);
/// Bytes handed out so far (for statistics and tests).
size_t eddy_arena_bytes_used(const eddy_arena_t *a);

/// ---- Pointer map -----------------------------------------------------------
/// Open-addressing hash map from non-NULL pointers to pointers. Used for value
/// maps in clone, CSE tables and the like. Malloc-backed; destroy to free.
typedef struct eddy_ptrmap {
  void **keys;
  void **vals;
  size_t cap; ///< power of two or 0
  size_t len;
} eddy_ptrmap_t;

void eddy_ptrmap_init(eddy_ptrmap_t *m);
void eddy_ptrmap_destroy(eddy_ptrmap_t *m);
void eddy_ptrmap_clear(eddy_ptrmap_t *m);
/// Inserts or overwrites.
void eddy_ptrmap_put(eddy_ptrmap_t *m, const void *key, void *val);
/// NULL when absent.
void *eddy_ptrmap_get(const eddy_ptrmap_t *m, const void *key);
bool eddy_ptrmap_has(const eddy_ptrmap_t *m, const void *key);

/// ---- Byte buffer -----------------------------------------------------------
/// Growable NUL-terminated string; malloc-backed.
typedef struct eddy_buf {
  char *data; ///< always NUL-terminated once anything was appended
  size_t len;
  size_t cap;
} eddy_buf_t;

void eddy_buf_init(eddy_buf_t *b);
void eddy_buf_destroy(eddy_buf_t *b);
void eddy_buf_clear(eddy_buf_t *b);
void eddy_buf_append(eddy_buf_t *b, const char *s, size_t n);
void eddy_buf_puts(eddy_buf_t *b, const char *s);
void eddy_buf_putc(eddy_buf_t *b, char c);
void eddy_buf_printf(eddy_buf_t *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/// Detaches the string (caller frees with free()); the buffer becomes empty.
char *eddy_buf_take(eddy_buf_t *b);

/// ---- Checked arithmetic -----------------------------------------------------
/// Store a*b (a+b) in *out and return true; return false on overflow.
bool eddy_checked_mul_i64(int64_t a, int64_t b, int64_t *out);
bool eddy_checked_add_i64(int64_t a, int64_t b, int64_t *out);

/// FNV-1a style hash helpers used for interning.
uint64_t eddy_hash_bytes(const void *p, size_t n, uint64_t seed);
uint64_t eddy_hash_combine(uint64_t h, uint64_t v);

#ifdef __cplusplus
}
#endif
#endif
