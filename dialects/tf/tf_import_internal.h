/// The GraphDef importer's state, shared by the driver (tf_import.c: the
/// library, the pre-pass, functions, feeds and fetches) and the graph
/// builder (tf_graph.c: one graph body's nodes to ops). Not installed.
#ifndef EDDY_DIALECTS_TF_TF_IMPORT_INTERNAL_H
#define EDDY_DIALECTS_TF_TF_IMPORT_INTERNAL_H

#include "dialects/tf/tf_internal.h"

#include <string.h>

/// One FunctionDef of the library.
typedef struct tf_func {
  const Tensorflow__FunctionDef *fdef;
  const char *name;
  int visit;      ///< pre-pass: 0 not seen, 1 on the call path, 2 done
  bool importing; ///< its body is being built
  eddy_op_t *func; ///< the func.func once imported
} tf_func_t;

typedef struct tf_importer {
  eddy_ctx_t *ctx;
  const char *file; ///< for diagnostics
  const Tensorflow__GraphDef *gd;
  const eddy_tf_import_opts_t *opts;
  eddy_module_t *module;
  eddy_arena_t *arena; ///< the importer's own memory, freed at the end
  tf_func_t *funcs;
  size_t num_funcs;
  eddy_ptrmap_t func_by_name; ///< interned name -> tf_func_t
  int depth; ///< functions being imported inside each other
  /// tf_variant.c: the variant types found so far, by NodeDef output or
  /// function argument (a key being traced maps to itself).
  eddy_ptrmap_t variant_types;
} tf_importer_t;

/// An input of a node, resolved.
typedef struct tf_edge {
  int32_t src;  ///< node index; for a function argument, -1 - arg index
  uint32_t out; ///< flat output index of src
  bool control; ///< "^src"
  bool back;    ///< NextIteration -> Merge: the back edge of a v1 loop
} tf_edge_t;

typedef struct tf_node {
  const Tensorflow__NodeDef *def;
  const eddy_tf_op_info_t *info; ///< NULL when the op calls callee
  tf_func_t *callee;             ///< a library function called by name
  /// Outputs, grouped by output argument (for "node:arg:i" inputs).
  uint32_t num_outs;
  uint32_t num_out_args;
  const char **out_arg_names;
  uint32_t *out_arg_start, *out_arg_len;
  tf_edge_t *edges; ///< data inputs in order, then control inputs
  uint32_t num_edges, num_data;
  bool keep; ///< imported (false when pruned away)
  int32_t feed; ///< argument index when fed, else -1
  /* Built: */
  eddy_op_t *op;
  eddy_value_t **outs; ///< num_outs values that consumers read
  eddy_value_t *token; ///< its control output, made on first use
} tf_node_t;

/// One graph body: the GraphDef's nodes or a FunctionDef's.
typedef struct tf_body {
  tf_importer_t *im;
  tf_func_t *fn; ///< NULL for the main graph
  Tensorflow__NodeDef **defs;
  size_t num_nodes;
  tf_node_t *nodes;
  eddy_ptrmap_t node_by_name; ///< interned name -> (uintptr_t)(index + 1)
  eddy_ptrmap_t arg_by_name;  ///< functions: arg name -> (index + 1)
  eddy_value_t **args;
  size_t num_args;
  eddy_op_t *func;
  eddy_builder_t b;
} tf_body_t;

/// The node's attribute name, or NULL.
static inline const Tensorflow__AttrValue *tf_node_attr(const tf_node_t *nd,
                                                        const char *name) {
  return eddy_tf_attr_find(nd->def->attr, nd->def->n_attr, name);
}

static inline bool tf_node_is(const tf_node_t *nd, const char *op) {
  return strcmp(nd->def->op, op) == 0;
}

/// The value an edge carries (the node output or function argument; the
/// node must be built).
static inline eddy_value_t *tf_edge_value(const tf_body_t *bd,
                                          const tf_edge_t *e) {
  if (e->src < 0)
    return bd->args[-1 - e->src];
  return bd->nodes[e->src].outs[e->out];
}

/// ---- tf_graph.c, tf_build.c ----

/// Sets up bd for defs (not yet indexed); releases with tf_body_destroy.
void tf_body_init(tf_body_t *bd, tf_importer_t *im, tf_func_t *fn,
                  Tensorflow__NodeDef **defs, size_t n);
void tf_body_destroy(tf_body_t *bd);
/// Indexes the nodes by name (duplicates and nameless nodes are errors);
/// every node starts kept.
eddy_status_t tf_body_index(tf_body_t *bd);
/// For each kept node: finds its op's table entry or library function, lays
/// out its outputs and resolves its inputs. For a function, bd->args and
/// arg_by_name must be set first.
eddy_status_t tf_body_resolve(tf_body_t *bd);
/// The node named name, or NULL.
tf_node_t *tf_body_find(tf_body_t *bd, const char *name, size_t len);
/// The kept nodes in topological order, back edges excepted, ties broken by
/// node order so that the IR follows the GraphDef where it can. The order
/// lives in the importer's arena.
eddy_status_t tf_body_topo_order(tf_body_t *bd, uint32_t **out_order,
                                 size_t *out_n);
/// Builds the ops of every kept node into bd->func's entry block, in
/// topological order (back edges excepted), then closes the back edges.
eddy_status_t tf_body_build(tf_body_t *bd);
/// Resolves a tensor reference as inputs spell it ("node", "node:i", and in
/// functions "arg" and "node:out_arg:i") to its built value.
eddy_status_t tf_body_lookup_value(tf_body_t *bd, const char *ref,
                                   const char *what, eddy_value_t **out);

/// Diagnostics located at the file, a function and/or a node:
/// "FILE: function 'F': node 'N'".
eddy_status_t tf_error(const tf_body_t *bd, const tf_node_t *nd,
                       eddy_status_code_t code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/// Re-locates an error from a helper (which has no location), prefixing
/// its message with prefix (may be ""). Consumes inner.
eddy_status_t tf_error_wrap(const tf_body_t *bd, const tf_node_t *nd,
                            const char *prefix, eddy_status_t inner);

/// ---- tf_variant.c ----

/// The type of output `out` of node nd of body bd, whose dtype is variant,
/// as the graph says it (TensorFlow does not record it): an Optional (a
/// list of at most one element) of what OptionalFromValue wraps, or of
/// what the other branch of the If returns for an OptionalNone; a list of
/// element_dtype variant of the items pushed onto it (lists of lists,
/// lists of Optionals); through While, If, Identity, list updates and
/// calls. NULL when the graph does not say.
const eddy_type_t *tf_variant_type(tf_body_t *bd, const tf_node_t *nd,
                                   uint32_t out);

/// What function bd's argument i, of dtype variant, is taken to be by the
/// nodes that read it: an Optional of the type an OptionalGetValue of it
/// says (followed into the branches of Ifs it is passed to). NULL when no
/// reader says. Where a branch-dependent Optional reaches a gradient
/// branch, this is the branch's own type, which its caller's may not be.
const eddy_type_t *tf_variant_arg_expected(tf_body_t *bd, size_t i);

/// ---- tf_import.c ----

/// The library function called name, or NULL.
tf_func_t *tf_importer_find_func(tf_importer_t *im, const char *name);
/// Imports fn (once) with argument types from the caller (arg_types may
/// hold NULLs, or be NULL, where the caller knows nothing); *out is its
/// func.func.
eddy_status_t tf_import_function(tf_importer_t *im, tf_func_t *fn,
                                 const eddy_type_t *const *arg_types,
                                 size_t num_args, eddy_op_t **out);

#endif
