/// eddy IR: SSA values, ops with nested regions, interned types and
/// attributes, and the op-definition tables that dialects register.
///
/// Memory: every IR object (op, value, block, region, type, attribute,
/// identifier, location) lives in arenas owned by the context and is freed
/// when the context is destroyed. Erasing an op unlinks it; it is never freed
/// one by one. Types, attributes and identifiers are interned, so equality is
/// pointer equality.
///
/// The structs below are visible so that passes can read them directly. Read
/// them freely; change them only through the functions in this header, which
/// keep use lists and parent links consistent.
#ifndef EDDY_IR_IR_H
#define EDDY_IR_IR_H

#include "ir/status.h"
#include "ir/support.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct eddy_ctx eddy_ctx_t;
typedef struct eddy_type eddy_type_t;
typedef struct eddy_attr eddy_attr_t;
typedef struct eddy_ident eddy_ident_t;
typedef struct eddy_loc eddy_loc_t;
typedef struct eddy_op_def eddy_op_def_t;
typedef struct eddy_dialect eddy_dialect_t;
typedef struct eddy_op eddy_op_t;
typedef struct eddy_value eddy_value_t;
typedef struct eddy_use eddy_use_t;
typedef struct eddy_block eddy_block_t;
typedef struct eddy_region eddy_region_t;
typedef struct eddy_module eddy_module_t;

/// ===========================================================================
/// Context
/// ===========================================================================

/// Owned. Registers the builtin dialect (builtin.module, func.func,
/// func.return). Returns NULL only on out of memory.
eddy_ctx_t *eddy_ir_ctx_create(void);
void eddy_ir_ctx_destroy(eddy_ctx_t *ctx);
/// The arena that holds all IR of this context (borrowed).
eddy_arena_t *eddy_ir_ctx_arena(eddy_ctx_t *ctx);

/// Extension slots: other libraries (the pass registry, later the runtime
/// caches) keep per-context state here instead of in globals. key is a
/// static string compared by content. set_ext replaces an existing entry
/// (running its destructor); dtor (may be NULL) runs at context destroy.
void *eddy_ir_ctx_get_ext(const eddy_ctx_t *ctx, const char *key);
void eddy_ir_ctx_set_ext(eddy_ctx_t *ctx, const char *key, void *value,
                         void (*dtor)(void *value));

/// Interned identifier (op and attribute names, symbol names).
struct eddy_ident {
  const char *str; ///< NUL-terminated
  size_t len;
  uint64_t hash;
};
const eddy_ident_t *eddy_ir_ident_get(eddy_ctx_t *ctx, const char *s,
                                      size_t len);
const eddy_ident_t *eddy_ir_ident_cstr(eddy_ctx_t *ctx, const char *s);

/// Source location: a file position (line >= 1) or a name (line == 0), e.g.
/// the TensorFlow node an op was imported from.
struct eddy_loc {
  const eddy_ident_t *file; ///< file name, or the name for a name location
  uint32_t line;            ///< 1-based; 0 for a name location
  uint32_t col;             ///< 1-based
};
const eddy_loc_t *eddy_ir_loc_file(eddy_ctx_t *ctx, const char *file,
                                   uint32_t line, uint32_t col);
const eddy_loc_t *eddy_ir_loc_name(eddy_ctx_t *ctx, const char *name);
/// Appends "file:line:col" or "node 'name'" (or "<unknown>" for NULL).
void eddy_ir_loc_format(const eddy_loc_t *loc, eddy_buf_t *out);

/// ===========================================================================
/// Types
/// ===========================================================================

typedef enum eddy_dtype {
  EDDY_DT_F16,
  EDDY_DT_BF16,
  EDDY_DT_F32,
  EDDY_DT_F64,
  EDDY_DT_I1,
  EDDY_DT_I8,
  EDDY_DT_I32,
  EDDY_DT_I64,
  EDDY_DT_COUNT_,
} eddy_dtype_t;

/// "f32", "i1", ...
const char *eddy_dtype_name(eddy_dtype_t dt);
/// Parses a dtype name; false when unknown.
bool eddy_dtype_from_name(const char *s, size_t len, eddy_dtype_t *out);
/// Bytes per element in memory (i1 takes one byte).
size_t eddy_dtype_size(eddy_dtype_t dt);
bool eddy_dtype_is_float(eddy_dtype_t dt);
/// i8/i32/i64 (not i1).
bool eddy_dtype_is_int(eddy_dtype_t dt);
float eddy_f16_to_f32(uint16_t h);
uint16_t eddy_f32_to_f16(float f); ///< round to nearest even
float eddy_bf16_to_f32(uint16_t h);
uint16_t eddy_f32_to_bf16(float f); ///< round to nearest even

typedef enum eddy_type_kind {
  EDDY_TYPE_TENSOR, ///< tensor<4x?xf32>; rank 0 is a scalar: tensor<f32>
  EDDY_TYPE_LIST,   ///< !tl.list<tensor<?x4xf32>>; lists may nest
  EDDY_TYPE_TOKEN,  ///< !df.token: a control-only edge
  EDDY_TYPE_FUNC,   ///< (tensor<f32>) -> (tensor<f32>); for func.func
} eddy_type_kind_t;

#define EDDY_DIM_DYNAMIC ((int64_t)-1)
#define EDDY_RANK_UNKNOWN ((int32_t)-1) ///< tensor<*xf32>

struct eddy_type {
  eddy_type_kind_t kind;
  eddy_dtype_t dtype;   ///< TENSOR
  int32_t rank;         ///< TENSOR; EDDY_RANK_UNKNOWN when unranked
  const int64_t *dims;  ///< TENSOR; rank entries, EDDY_DIM_DYNAMIC if unknown
  const eddy_type_t *elem; ///< LIST: the element type (a tensor or a list)
  const eddy_type_t *const *inputs;  ///< FUNC
  const eddy_type_t *const *outputs; ///< FUNC
  uint32_t num_inputs, num_outputs;  ///< FUNC
  uint64_t hash;
};

/// All type constructors intern: the same arguments give the same pointer.
/// dims may be NULL when rank is 0 or EDDY_RANK_UNKNOWN. Dims must be >= 0 or
/// EDDY_DIM_DYNAMIC (asserted).
const eddy_type_t *eddy_ir_tensor_type_get(eddy_ctx_t *ctx, eddy_dtype_t dt,
                                           int32_t rank, const int64_t *dims);
const eddy_type_t *eddy_ir_scalar_type_get(eddy_ctx_t *ctx, eddy_dtype_t dt);
/// elem must be a tensor or a list type (nested loops accumulate into lists
/// of lists).
const eddy_type_t *eddy_ir_list_type_get(eddy_ctx_t *ctx,
                                         const eddy_type_t *elem);
const eddy_type_t *eddy_ir_token_type_get(eddy_ctx_t *ctx);
const eddy_type_t *eddy_ir_func_type_get(eddy_ctx_t *ctx,
                                         const eddy_type_t *const *inputs,
                                         size_t num_inputs,
                                         const eddy_type_t *const *outputs,
                                         size_t num_outputs);
/// The same tensor type with another dtype (shape kept).
const eddy_type_t *eddy_ir_type_with_dtype(eddy_ctx_t *ctx,
                                           const eddy_type_t *t,
                                           eddy_dtype_t dt);

bool eddy_ir_type_is_tensor(const eddy_type_t *t);
bool eddy_ir_type_is_scalar(const eddy_type_t *t); ///< rank-0 tensor
/// Ranked with no dynamic dim.
bool eddy_ir_type_is_static(const eddy_type_t *t);
/// Element count of a static tensor type; -1 when not static or on overflow.
int64_t eddy_ir_type_num_elements(const eddy_type_t *t);
/// Two types could describe the same runtime value: same kind and dtype,
/// ranks equal (or one unknown), each dim equal or one dynamic; lists
/// compare their element types the same way.
bool eddy_ir_type_is_compatible(const eddy_type_t *a, const eddy_type_t *b);
/// The most refined type compatible with both (static dims win); NULL when
/// they are not compatible.
const eddy_type_t *eddy_ir_type_refine(eddy_ctx_t *ctx, const eddy_type_t *a,
                                       const eddy_type_t *b);
/// The least refined type covering both (dims that differ become dynamic,
/// ranks that differ become unknown); NULL when kinds or dtypes differ. Used
/// for loop values whose shape changes across iterations.
const eddy_type_t *eddy_ir_type_generalize(eddy_ctx_t *ctx,
                                           const eddy_type_t *a,
                                           const eddy_type_t *b);
/// Appends the textual form ("tensor<4x?xf32>").
void eddy_ir_type_print(const eddy_type_t *t, eddy_buf_t *out);

/// ===========================================================================
/// Attributes
/// ===========================================================================

typedef enum eddy_attr_kind {
  EDDY_ATTR_INT,    ///< 3 : i64
  EDDY_ATTR_FLOAT,  ///< 1.5 : f32
  EDDY_ATTR_BOOL,   ///< true
  EDDY_ATTR_STRING, ///< "text"
  EDDY_ATTR_TYPE,   ///< tensor<f32>
  EDDY_ATTR_ARRAY,  ///< [1 : i64, "a"]
  EDDY_ATTR_DENSE,  ///< dense<[1.0, 2.0]> : tensor<2xf32>
  EDDY_ATTR_SYMBOL, ///< @name (a function)
} eddy_attr_kind_t;

struct eddy_attr {
  eddy_attr_kind_t kind;
  eddy_dtype_t dtype;      ///< INT, FLOAT
  const eddy_type_t *type; ///< TYPE: the type; DENSE: a static tensor type
  union {
    int64_t i;   ///< INT
    double f;    ///< FLOAT (f16/bf16/f32 values are exactly representable)
    bool b;      ///< BOOL
    struct {
      const char *data; ///< NUL-terminated, may contain NULs before len
      size_t len;
    } str;       ///< STRING, SYMBOL
    struct {
      const eddy_attr_t *const *elems;
      size_t len;
    } array;     ///< ARRAY
    struct {
      const void *data; ///< little-endian elements, row major; i1 as bytes
      size_t nbytes;    ///< element size when splat, else whole tensor
      bool splat;       ///< one element repeated over the whole shape
    } dense;     ///< DENSE
  } u;
  uint64_t hash;
};

/// Integer attribute of an integer dtype (i1..i64); the value is truncated
/// to the dtype's width.
const eddy_attr_t *eddy_ir_int_attr_get(eddy_ctx_t *ctx, int64_t v,
                                        eddy_dtype_t dt);
/// Float attribute; the value is rounded to the dtype.
const eddy_attr_t *eddy_ir_float_attr_get(eddy_ctx_t *ctx, double v,
                                          eddy_dtype_t dt);
const eddy_attr_t *eddy_ir_bool_attr_get(eddy_ctx_t *ctx, bool v);
const eddy_attr_t *eddy_ir_string_attr_get(eddy_ctx_t *ctx, const char *s,
                                           size_t len);
const eddy_attr_t *eddy_ir_type_attr_get(eddy_ctx_t *ctx,
                                         const eddy_type_t *t);
const eddy_attr_t *eddy_ir_array_attr_get(eddy_ctx_t *ctx,
                                          const eddy_attr_t *const *elems,
                                          size_t len);
/// [v0 : i64, v1 : i64, ...]
const eddy_attr_t *eddy_ir_i64_array_attr_get(eddy_ctx_t *ctx,
                                              const int64_t *v, size_t len);
const eddy_attr_t *eddy_ir_symbol_attr_get(eddy_ctx_t *ctx, const char *s,
                                           size_t len);
/// Dense tensor constant. type must be a static tensor type; nbytes must be
/// num_elements * dtype size (asserted). Stored as a splat when all elements
/// are equal, so equal contents intern to the same attribute.
const eddy_attr_t *eddy_ir_dense_attr_get(eddy_ctx_t *ctx,
                                          const eddy_type_t *type,
                                          const void *data, size_t nbytes);
/// Splat constant: elem points at one element of the type's dtype.
const eddy_attr_t *eddy_ir_dense_splat_attr_get(eddy_ctx_t *ctx,
                                                const eddy_type_t *type,
                                                const void *elem);
/// Element i of a dense attribute converted to double / int64 (floats
/// truncate toward zero for the int accessor; i1 gives 0 or 1).
double eddy_ir_dense_attr_f64(const eddy_attr_t *a, int64_t i);
int64_t eddy_ir_dense_attr_i64(const eddy_attr_t *a, int64_t i);
/// Builds a dense attribute of `type` from doubles / int64s converted to its
/// dtype (n must equal the element count, or 1 for a splat).
const eddy_attr_t *eddy_ir_dense_attr_from_f64(eddy_ctx_t *ctx,
                                               const eddy_type_t *type,
                                               const double *v, size_t n);
const eddy_attr_t *eddy_ir_dense_attr_from_i64(eddy_ctx_t *ctx,
                                               const eddy_type_t *type,
                                               const int64_t *v, size_t n);
/// For an ARRAY of INTs: copies up to cap values into out, returns the array
/// length, or -1 when the attribute is not an array of integers.
int64_t eddy_ir_attr_as_i64_array(const eddy_attr_t *a, int64_t *out,
                                  size_t cap);
/// Appends the textual form.
void eddy_ir_attr_print(const eddy_attr_t *a, eddy_buf_t *out);

typedef struct eddy_named_attr {
  const eddy_ident_t *name;
  const eddy_attr_t *value;
} eddy_named_attr_t;

/// ===========================================================================
/// Op definitions and dialects
/// ===========================================================================

enum {
  EDDY_TRAIT_PURE = 1u << 0,        ///< no side effects: may be CSE'd, dropped, hoisted
  EDDY_TRAIT_ELEMENTWISE = 1u << 1, ///< result element i depends on operand elements i
  EDDY_TRAIT_BROADCAST = 1u << 2,   ///< operands broadcast numpy-style
  EDDY_TRAIT_COMMUTATIVE = 1u << 3,
  EDDY_TRAIT_TERMINATOR = 1u << 4,  ///< must be last in its block
  EDDY_TRAIT_CONSTANT = 1u << 5,    ///< has a `value` attribute, no operands
  EDDY_TRAIT_ISOLATED = 1u << 6,    ///< regions may not use values from above
  EDDY_TRAIT_BACKEDGE = 1u << 7,    ///< operands may be defined after the op in
                                    ///< the same block (a dataflow back edge,
                                    ///< df.merge); its verifier says which
  EDDY_TRAIT_SINGLE_BLOCK = 1u << 8,///< each region has exactly one block
};

#define EDDY_VARIADIC ((int16_t)-1)

/// Describes one attribute an op accepts. Attributes whose name contains a
/// '.' (e.g. "tf.device") are discardable and accepted on any op.
typedef struct eddy_attr_spec {
  const char *name;
  eddy_attr_kind_t kind;
  bool optional;
} eddy_attr_spec_t;

/// What a shape function sees: the op's would-be operands and attributes.
/// Also used while building, before the op exists (then op is NULL).
typedef struct eddy_infer_ctx {
  eddy_ctx_t *ctx;
  const eddy_op_def_t *def;
  const eddy_type_t *const *operand_types;
  size_t num_operands;
  const eddy_named_attr_t *attrs; ///< sorted by name
  size_t num_attrs;
  const eddy_loc_t *loc;
  const eddy_op_t *op; ///< NULL while building
  /* output, filled with eddy_ir_infer_push */
  const eddy_type_t **results;
  size_t num_results, cap_results;
} eddy_infer_ctx_t;

/// Appends one inferred result type. ic->results grows with realloc: whoever
/// set up the infer ctx releases it with free() (eddy_ir_op_create does).
void eddy_ir_infer_push(eddy_infer_ctx_t *ic, const eddy_type_t *t);
/// Attribute lookup for shape functions (NULL when absent).
const eddy_attr_t *eddy_ir_infer_attr(const eddy_infer_ctx_t *ic,
                                      const char *name);
/// An error located at the op being inferred: "'NAME' op MESSAGE".
eddy_status_t eddy_ir_infer_error(const eddy_infer_ctx_t *ic, const char *fmt,
                                  ...) __attribute__((format(printf, 2, 3)));

/// One folded result: either a constant (attr, a DENSE attribute of the
/// result's type) or an existing value that replaces the result.
typedef struct eddy_fold_result {
  const eddy_attr_t *attr;
  eddy_value_t *value;
} eddy_fold_result_t;

typedef struct eddy_fold_ctx {
  eddy_ctx_t *ctx;
  eddy_op_t *op;
  /// For each operand: its DENSE constant when defined by a constant-like
  /// op, else NULL.
  const eddy_attr_t *const *operand_consts;
  eddy_fold_result_t *results; ///< op->num_results entries, zeroed
} eddy_fold_ctx_t;

struct eddy_op_def {
  const char *name;       ///< "core.add"
  int16_t num_operands;   ///< exact count, or EDDY_VARIADIC
  int16_t min_operands;   ///< minimum when variadic
  int16_t num_results;    ///< exact count, or EDDY_VARIADIC
  int16_t num_regions;    ///< exact count
  uint32_t traits;        ///< EDDY_TRAIT_*
  const eddy_attr_spec_t *attrs; ///< terminated by {NULL}; may be NULL
  /// Op-specific checks beyond counts, attributes and the shape function
  /// (region signatures, operand dtypes...). May be NULL.
  eddy_status_t (*verify)(const eddy_op_t *op);
  /// Shape function: pushes one type per result. NULL when result types
  /// cannot be derived from operands (they must then be given when building
  /// and are checked by verify).
  eddy_status_t (*infer)(eddy_infer_ctx_t *ic);
  /// Constant folding / simplification; true when it produced results.
  /// May be NULL.
  bool (*fold)(eddy_fold_ctx_t *fc);
  /// A number the dialect library gives its ops, by which the parts of eddy
  /// that handle ops one by one index their tables (eddy_opcode_t in
  /// dialects/dialects.h); 0 for an op without one.
  uint16_t opcode;
  const eddy_dialect_t *dialect; ///< set at registration
};

struct eddy_dialect {
  const char *name;          ///< "core"
  const eddy_op_def_t *ops;  ///< table
  size_t num_ops;
  /// When true, ops "name.anything" not in the table are accepted with no
  /// checks (the tf dialect keeps unknown TensorFlow ops this way).
  bool allow_unknown_ops;
};

/// Registers a dialect (the table must outlive the context). Idempotent.
void eddy_ir_ctx_register_dialect(eddy_ctx_t *ctx, const eddy_dialect_t *d);
/// Finds the definition for an op name; for a dialect that allows unknown
/// ops, creates a permissive definition on first use. NULL when unknown.
const eddy_op_def_t *eddy_ir_ctx_lookup_op(eddy_ctx_t *ctx, const char *name,
                                           size_t len);
/// Calls fn for every registered op definition (in registration order).
void eddy_ir_ctx_each_op_def(eddy_ctx_t *ctx,
                             void (*fn)(const eddy_op_def_t *def, void *user),
                             void *user);

/// ===========================================================================
/// Values, ops, blocks, regions
/// ===========================================================================

struct eddy_use {
  eddy_value_t *value; ///< the value used
  eddy_op_t *owner;    ///< the op using it
  uint32_t index;      ///< operand index in owner
  eddy_use_t *next, *prev; ///< in value->uses
};

struct eddy_value {
  const eddy_type_t *type;
  eddy_op_t *def;      ///< defining op, or NULL for a block argument
  eddy_block_t *block; ///< owning block for a block argument, else NULL
  uint32_t index;      ///< result index or argument index
  eddy_use_t *uses;    ///< head of the use list
};

struct eddy_op {
  eddy_ctx_t *ctx;
  const eddy_op_def_t *def;
  const eddy_ident_t *name; ///< def->name interned
  eddy_use_t *operands;
  uint32_t num_operands, cap_operands;
  eddy_value_t *results;
  uint32_t num_results;
  eddy_named_attr_t *attrs; ///< sorted by name string
  uint32_t num_attrs;
  eddy_region_t *regions;
  uint32_t num_regions;
  eddy_block_t *block;      ///< parent block, NULL when detached
  eddy_op_t *prev, *next;   ///< siblings in block
  const eddy_loc_t *loc;
  uint64_t scratch;         ///< free for the current pass to use
};

struct eddy_block {
  eddy_region_t *region;    ///< parent
  eddy_block_t *prev, *next;
  eddy_value_t **args;
  uint32_t num_args, cap_args;
  eddy_op_t *first, *last;
};

struct eddy_region {
  eddy_op_t *parent;
  eddy_block_t *first, *last;
};

/// Everything needed to create an op.
typedef struct eddy_op_state {
  const char *name;
  eddy_value_t *const *operands;
  size_t num_operands;
  const eddy_named_attr_t *attrs; ///< any order; sorted on creation
  size_t num_attrs;
  /// Result types; when NULL they are inferred with the op's shape function
  /// (an error if it has none).
  const eddy_type_t *const *result_types;
  size_t num_results;
  size_t num_regions; ///< regions are created empty
  const eddy_loc_t *loc;
} eddy_op_state_t;

/// Creates a detached op. Fails on an unknown op name, a duplicate attribute
/// or when inference is needed and fails. Counts are checked by the verifier,
/// not here, so that broken IR can be built in tests.
eddy_status_t eddy_ir_op_create(eddy_ctx_t *ctx, const eddy_op_state_t *st,
                                eddy_op_t **out_op);
/// Result i / operand i accessors (bounds asserted).
eddy_value_t *eddy_ir_op_result(eddy_op_t *op, size_t i);
eddy_value_t *eddy_ir_op_operand(const eddy_op_t *op, size_t i);
/// Replaces operand i, updating use lists.
void eddy_ir_op_set_operand(eddy_op_t *op, size_t i, eddy_value_t *v);
/// Replaces the whole operand list.
void eddy_ir_op_set_operands(eddy_op_t *op, eddy_value_t *const *vals,
                             size_t n);
/// Sets the type of result i (shape inference refines types in place).
void eddy_ir_value_set_type(eddy_value_t *v, const eddy_type_t *t);

const eddy_attr_t *eddy_ir_op_attr(const eddy_op_t *op, const char *name);
/// Sets or replaces an attribute (keeps the list sorted).
void eddy_ir_op_set_attr(eddy_op_t *op, const char *name,
                         const eddy_attr_t *value);
/// True when it was present.
bool eddy_ir_op_remove_attr(eddy_op_t *op, const char *name);
/// Convenience getters: the attribute's value, or dflt when absent or of
/// another kind.
int64_t eddy_ir_op_attr_int(const eddy_op_t *op, const char *name,
                            int64_t dflt);
bool eddy_ir_op_attr_bool(const eddy_op_t *op, const char *name, bool dflt);
double eddy_ir_op_attr_float(const eddy_op_t *op, const char *name,
                             double dflt);

bool eddy_ir_op_is(const eddy_op_t *op, const char *name);
bool eddy_ir_op_has_trait(const eddy_op_t *op, uint32_t trait);
/// The op that owns the region holding this op (NULL at top level).
eddy_op_t *eddy_ir_op_parent_op(const eddy_op_t *op);
/// True when `ancestor` is op itself or contains it in a region.
bool eddy_ir_op_is_ancestor(const eddy_op_t *ancestor, const eddy_op_t *op);
/// Error located at the op: "LOC: error: 'NAME' op MESSAGE".
eddy_status_t eddy_ir_op_error(const eddy_op_t *op, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/// Unlinks op from its block and drops its operand uses and those of every
/// op nested in its regions. Results must be unused (asserted).
void eddy_ir_op_erase(eddy_op_t *op);
/// Unlinks op from its block, keeping uses (for moving it elsewhere).
void eddy_ir_op_remove(eddy_op_t *op);
/// Insert a detached op.
void eddy_ir_op_insert_before(eddy_op_t *op, eddy_op_t *before);
void eddy_ir_op_insert_after(eddy_op_t *op, eddy_op_t *after);
void eddy_ir_op_append(eddy_op_t *op, eddy_block_t *block);
/// Move an attached op (remove + insert).
void eddy_ir_op_move_before(eddy_op_t *op, eddy_op_t *before);

bool eddy_ir_value_has_uses(const eddy_value_t *v);
size_t eddy_ir_value_num_uses(const eddy_value_t *v);
/// Redirects every use of `from` to `to`.
void eddy_ir_value_replace_all_uses(eddy_value_t *from, eddy_value_t *to);
/// The block that defines v (the def op's block, or the arg's block).
eddy_block_t *eddy_ir_value_block(const eddy_value_t *v);

eddy_block_t *eddy_ir_region_add_block(eddy_region_t *r);
/// The region's first block (NULL when empty).
eddy_block_t *eddy_ir_region_entry(const eddy_region_t *r);
eddy_value_t *eddy_ir_block_add_arg(eddy_block_t *b, const eddy_type_t *t);
/// Removes argument i; it must be unused (asserted). Later args renumber.
void eddy_ir_block_erase_arg(eddy_block_t *b, size_t i);
/// Last op of the block (its terminator in well-formed IR) or NULL.
eddy_op_t *eddy_ir_block_terminator(const eddy_block_t *b);
/// The op owning the region of this block.
eddy_op_t *eddy_ir_block_parent_op(const eddy_block_t *b);

/// ===========================================================================
/// Builder
/// ===========================================================================

/// Insertion point: before `before`, or at the end of `block` when before is
/// NULL.
typedef struct eddy_builder {
  eddy_ctx_t *ctx;
  eddy_block_t *block;
  eddy_op_t *before;
  const eddy_loc_t *loc; ///< used when a state has no loc
} eddy_builder_t;

void eddy_ir_builder_init(eddy_builder_t *b, eddy_ctx_t *ctx);
void eddy_ir_builder_set_end(eddy_builder_t *b, eddy_block_t *block);
void eddy_ir_builder_set_before(eddy_builder_t *b, eddy_op_t *op);
void eddy_ir_builder_set_after(eddy_builder_t *b, eddy_op_t *op);
/// Creates an op at the insertion point.
eddy_status_t eddy_ir_build(eddy_builder_t *b, const eddy_op_state_t *st,
                            eddy_op_t **out_op);
/// Shorthand for an op with inferred result types and no regions; returns
/// result 0 in *out_value (or NULL for ops with no results, or on error).
/// out_value may point into `operands`: it is written after the op is built.
eddy_status_t eddy_ir_build_simple(eddy_builder_t *b, const char *name,
                                   eddy_value_t *const *operands,
                                   size_t num_operands,
                                   const eddy_named_attr_t *attrs,
                                   size_t num_attrs, eddy_value_t **out_value);
/// Builds a core.constant holding `value` (a DENSE attribute).
eddy_status_t eddy_ir_build_constant(eddy_builder_t *b,
                                     const eddy_attr_t *value,
                                     eddy_value_t **out_value);
/// Named attribute shorthand.
eddy_named_attr_t eddy_ir_named_attr(eddy_ctx_t *ctx, const char *name,
                                     const eddy_attr_t *value);

/// ===========================================================================
/// Walking and cloning
/// ===========================================================================

typedef enum eddy_walk_result {
  EDDY_WALK_ADVANCE,   ///< go on (into regions, in pre-order)
  EDDY_WALK_SKIP,      ///< pre-order: do not enter this op's regions
  EDDY_WALK_INTERRUPT, ///< stop the whole walk
} eddy_walk_result_t;

typedef eddy_walk_result_t (*eddy_walk_fn_t)(eddy_op_t *op, void *user);

/// Visits root and every nested op, parents before children. fn must not
/// erase the op it is given.
eddy_walk_result_t eddy_ir_walk_pre(eddy_op_t *root, eddy_walk_fn_t fn,
                                    void *user);
/// Children before parents; fn may erase the op it is given.
eddy_walk_result_t eddy_ir_walk_post(eddy_op_t *root, eddy_walk_fn_t fn,
                                     void *user);

/// Deep copy of op (regions included), detached. Operands found as keys in
/// map are replaced by the mapped value; the others are kept. Each original
/// result and nested block argument / result is mapped to its copy in map.
eddy_op_t *eddy_ir_op_clone(const eddy_op_t *op, eddy_ptrmap_t *map);
/// Appends copies of src's blocks to dst, mapping values as above.
void eddy_ir_region_clone_into(const eddy_region_t *src, eddy_region_t *dst,
                               eddy_ptrmap_t *map);

/// ===========================================================================
/// Modules and functions
/// ===========================================================================

/// A module is a builtin.module op with one region of one block holding
/// func.func ops.
struct eddy_module {
  eddy_ctx_t *ctx;
  eddy_op_t *op;
};

/// Owned handle (the IR itself lives in the context arena).
eddy_module_t *eddy_ir_module_create(eddy_ctx_t *ctx, const eddy_loc_t *loc);
void eddy_ir_module_destroy(eddy_module_t *m);
eddy_block_t *eddy_ir_module_body(const eddy_module_t *m);
/// The func.func named `name`, or NULL.
eddy_op_t *eddy_ir_module_lookup_func(const eddy_module_t *m,
                                      const char *name);

/// Creates `func.func @name` with an entry block whose arguments have the
/// input types, appended to the module. Fails if the name is taken.
eddy_status_t eddy_ir_func_create(eddy_module_t *m, const char *name,
                                  const eddy_type_t *const *inputs,
                                  size_t num_inputs,
                                  const eddy_type_t *const *outputs,
                                  size_t num_outputs, const eddy_loc_t *loc,
                                  eddy_op_t **out_func);
const char *eddy_ir_func_name(const eddy_op_t *func);
/// The function's FUNC type.
const eddy_type_t *eddy_ir_func_type(const eddy_op_t *func);
/// Updates the declared result types (after shape inference).
void eddy_ir_func_set_type(eddy_op_t *func, const eddy_type_t *fty);
eddy_block_t *eddy_ir_func_entry(const eddy_op_t *func);
/// The name of argument / result i from the optional `arg_names` /
/// `result_names` attributes (arrays of strings, one per input / result;
/// the TensorFlow importer sets them to the Placeholders and fetches), or
/// NULL when the function has none. Messages and generated headers use
/// them; without them an argument is called by its position (`arg0`).
const char *eddy_ir_func_arg_name(const eddy_op_t *func, size_t i);
const char *eddy_ir_func_result_name(const eddy_op_t *func, size_t i);
/// Argument i's name, or "argN" written into buf (size bytes).
const char *eddy_ir_func_arg_label(const eddy_op_t *func, size_t i, char *buf,
                                   size_t size);
/// The argument that the text name[0..len) names: a name of arg_names, or
/// the position written arg3, %arg3 or 3 (returned even when past the last
/// argument: the caller says so); -1 when it is none of these.
int64_t eddy_ir_func_arg_index(const eddy_op_t *func, const char *name,
                               size_t len);
/// Sets attr ("arg_names" or "result_names") to the n names.
void eddy_ir_func_set_names(eddy_op_t *func, const char *attr,
                            const char *const *names, size_t n);

/// ===========================================================================
/// Text, verification
/// ===========================================================================

typedef struct eddy_print_opts {
  bool locations; ///< append loc(...) to every op
} eddy_print_opts_t;

/// Appends the module's text. print(parse(text)) == text for printed text.
void eddy_ir_module_print(const eddy_module_t *m, const eddy_print_opts_t *o,
                          eddy_buf_t *out);
/// Appends one op (with its regions) in generic form, numbering values
/// locally; for debugging and diagnostics.
void eddy_ir_op_print(const eddy_op_t *op, const eddy_print_opts_t *o,
                      eddy_buf_t *out);

/// Parses a module. filename is used in diagnostics, which have the form
/// "file:line:col: error: MESSAGE" followed by the source line and a caret.
eddy_status_t eddy_ir_parse_module(eddy_ctx_t *ctx, const char *filename,
                                   const char *text, size_t len,
                                   eddy_module_t **out_module);
/// Reads and parses a file ("-" reads standard input).
eddy_status_t eddy_ir_parse_file(eddy_ctx_t *ctx, const char *path,
                                 eddy_module_t **out_module);

/// Checks op and everything nested: counts, attributes, shape functions,
/// op verifiers, terminators, single-block regions, isolation, SSA
/// dominance (across regions; graph regions excepted).
eddy_status_t eddy_ir_verify_op(const eddy_op_t *op);
eddy_status_t eddy_ir_verify_module(const eddy_module_t *m);

#ifdef __cplusplus
}
#endif
#endif
