/// The tf dialect and the TensorFlow GraphDef importer.
///
/// Import is 1:1: every TensorFlow node becomes one op "tf.<OpName>" with the
/// node's attributes under their TensorFlow names, located at the node name;
/// every FunctionDef the graph uses becomes a func.func. Lowering to core,
/// ctl and tl is a later step (legalize-tf, functionalize). See
/// docs/import.md for the conventions (types, attributes, control edges,
/// v1 loops).
#ifndef EDDY_DIALECTS_TF_TF_H
#define EDDY_DIALECTS_TF_TF_H

#include "ir/ir.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The tf dialect. It allows unknown ops, so any "tf.X" parses and verifies;
/// its table holds the ops whose structure later passes rely on (the v1
/// control-flow primitives, the functional control-flow and call ops, Const,
/// NoOp). tf.Merge has EDDY_TRAIT_BACKEDGE: an input may be a tf.NextIteration
/// result defined later in the block, the back edge of a v1 loop.
extern const eddy_dialect_t eddy_tf_dialect;

/// Registers tf and the dialects imported IR uses (core, ctl, tl, df).
void eddy_tf_dialect_register(eddy_ctx_t *ctx);

/// Options of an import. Zero-initialized options are the defaults.
typedef struct eddy_tf_import_opts {
  /// Placeholder node names that become the arguments of the graph's
  /// function, in this order. NULL/0: every Placeholder, in node order.
  const char *const *feeds;
  size_t num_feeds;
  /// Tensors ("node" or "node:i") that become its results, in this order.
  /// NULL/0: every output of every sink (a node with outputs whose outputs no
  /// node reads), in node order.
  const char *const *fetches;
  size_t num_fetches;
  /// Name of the function made from the graph; NULL means "main".
  const char *func_name;
  /// Import only the nodes the fetches depend on (through data and control
  /// inputs); by default every node is imported.
  bool prune;
} eddy_tf_import_opts_t;

/// Reads a binary GraphDef file and imports it into a new module (owned by
/// the caller, in ctx's arena). Registers the dialects it needs. opts may be
/// NULL. Errors name the file and the node or function at fault; on error
/// *out_module is NULL and nothing is left allocated but the context's
/// arena.
eddy_status_t eddy_tf_import_graphdef(eddy_ctx_t *ctx, const char *path,
                                      const eddy_tf_import_opts_t *opts,
                                      eddy_module_t **out_module);

/// The same for a GraphDef already in memory (len bytes at data, borrowed);
/// name is used in diagnostics in place of the file name.
eddy_status_t eddy_tf_import_graphdef_bytes(eddy_ctx_t *ctx, const char *name,
                                            const void *data, size_t len,
                                            const eddy_tf_import_opts_t *opts,
                                            eddy_module_t **out_module);

/// The `device` field of every node of the GraphDef at path that has one,
/// graph nodes first, then the nodes of its library functions: calls
/// fn(user, node name, device) in that order (distributed placement,
/// lower/partition.h).
eddy_status_t eddy_tf_graphdef_devices(const char *path,
                                       void (*fn)(void *user,
                                                  const char *node,
                                                  const char *device),
                                       void *user);

#ifdef __cplusplus
}
#endif
#endif
