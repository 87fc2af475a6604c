/// Internals of the IR core shared by the files of ir/ (not a public API).
#ifndef EDDY_IR_IR_INTERNAL_H
#define EDDY_IR_IR_INTERNAL_H

#include "ir/ir.h"

/// Open-addressing set of interned objects; each slot keeps the object's
/// hash so that growing never needs to look inside the objects.
typedef struct eddy_intern_set {
  void **items;
  uint64_t *hashes;
  size_t cap; ///< power of two or 0
  size_t len;
} eddy_intern_set_t;

typedef bool (*eddy_intern_eq_fn)(const void *item, const void *key);

/// Returns the interned object equal to key, or NULL.
void *eddy_intern_find(const eddy_intern_set_t *s, uint64_t hash,
                       eddy_intern_eq_fn eq, const void *key);
/// Adds an object known to be absent.
void eddy_intern_add(eddy_intern_set_t *s, uint64_t hash, void *item);
void eddy_intern_destroy(eddy_intern_set_t *s);

struct eddy_ctx {
  eddy_arena_t *arena;
  eddy_intern_set_t idents, locs, types, attrs;
  /// Registered dialects, in registration order.
  const eddy_dialect_t **dialects;
  size_t num_dialects, cap_dialects;
  /// Arena copies of registered op definitions (with `dialect` set), in
  /// registration order.
  const eddy_op_def_t **defs;
  size_t num_defs, cap_defs;
  /// Interned op name -> definition (permissive definitions included).
  eddy_ptrmap_t op_map;
  /// Extension slots (eddy_ir_ctx_get_ext / set_ext), in insertion order.
  struct eddy_ctx_ext {
    const char *key;
    void *value;
    void (*dtor)(void *value);
  } *exts;
  size_t num_exts, cap_exts;
  /// Owned by ir/pass.c: its registry, created on first use and released
  /// by pass_state_destroy when the context is destroyed.
  void *pass_state;
  void (*pass_state_destroy)(void *state);
};

/// Registers builtin.module, func.func and func.return (ir/builtin.c).
void eddy_ir_builtin_register(eddy_ctx_t *ctx);

/// Grows a pointer array stored in the arena to hold at least `need`
/// entries, copying the old contents.
void **eddy_ir_arena_grow_ptrs(eddy_arena_t *a, void **old, uint32_t len,
                               uint32_t *cap, uint32_t need);

#endif
