/// Lowering of imported TensorFlow graphs (the tf dialect) to eddy's own
/// dialects: functionalize raises v1 control flow (Enter/Merge/Switch/
/// NextIteration/Exit frames and Switch/Merge diamonds) to ctl.while and
/// ctl.if; legalize-tf replaces every tf op by core, ctl and tl ops. See
/// docs/import.md.
#ifndef EDDY_LOWER_TF_TF_LOWER_H
#define EDDY_LOWER_TF_TF_LOWER_H

#include "ir/ir.h"
#include "ir/pass.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Rewrites every function of m that is not only a callee of a functional tf
/// op (While, If, a call...) into core/ctl/tl ops; callees are inlined into
/// ctl regions and then removed from the module. A tf op it cannot lower is
/// an error listing every such op with its node names.
eddy_status_t eddy_tf_legalize(eddy_module_t *m);

/// Raises v1 control flow in every function of m: each loop frame becomes a
/// ctl.while (nested frames nested loops), each Switch/Merge diamond a
/// ctl.if. The ops inside stay tf ops (legalize-tf lowers them). A graph
/// that cannot be raised is an error naming the nodes. The df primitives
/// (to-dataflow's output) are raised the same way, so that
/// functionalize(to-dataflow(f)) prints as f (docs/lowering.md).
eddy_status_t eddy_tf_functionalize(eddy_module_t *m);

/// Maps the v1 control-flow ops of every function of m to the df
/// primitives in place (Switch, Merge, Enter, Exit, NextIteration and
/// LoopCond to df.switch ... df.loop_cond): the graph stays a dataflow
/// graph, for the interpreter.
eddy_status_t eddy_tf_v1_to_dataflow(eddy_module_t *m);

/// eddy_tf_v1_to_dataflow, then legalize-tf keeping the df ops and the
/// control tokens (df.control, df.after): a v1 graph becomes a df graph of
/// core/tl ops that the interpreter runs without functionalize. Functional
/// control flow (While, If) still becomes ctl ops (lower them with
/// to-dataflow).
eddy_status_t eddy_tf_legalize_dataflow(eddy_module_t *m);

/// Calls fn(name, user) for every TensorFlow op eddy imports and lowers
/// (names without "tf."), sorted, each once: Placeholder, the v1 control
/// flow that functionalize raises, and every op legalize-tf lowers
/// (functional control flow and calls included). docs/import.md lists them
/// (`eddy import --list-ops`).
void eddy_tf_supported_ops_each(void (*fn)(const char *name, void *user),
                                void *user);

/// The passes "legalize-tf" and "functionalize".
extern const eddy_pass_t eddy_tf_pass_legalize;
extern const eddy_pass_t eddy_tf_pass_functionalize;

/// Registers both passes in ctx (and the tf dialect they read).
void eddy_tf_lower_passes_register(eddy_ctx_t *ctx);

#ifdef __cplusplus
}
#endif
#endif
