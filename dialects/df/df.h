/// The df dialect: TensorFlow's dataflow control-flow primitives (switch,
/// merge, enter, exit, next_iteration, loop_cond) and control-only edges
/// (df.control, df.after over !df.token). See docs/dialects/df.md.
#ifndef EDDY_DIALECTS_DF_DF_H
#define EDDY_DIALECTS_DF_DF_H

#include "ir/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const eddy_dialect_t eddy_df_dialect;

/// Frame attributes of a df.enter.
typedef struct eddy_df_enter_attrs {
  const char *frame_name; ///< required, borrowed
  bool is_constant;
  int64_t parallel_iterations; ///< <= 0 means the default, 10
} eddy_df_enter_attrs_t;

/// Creates "df.enter"(data) with the given frame attributes (all three are
/// set on the op). out_value receives its result.
eddy_status_t eddy_df_build_enter(eddy_builder_t *b, eddy_value_t *data,
                                  const eddy_df_enter_attrs_t *attrs,
                                  eddy_value_t **out_value);

/// Creates "df.merge"(inputs...) with result types inferred from the
/// inputs. To close a loop, build it with a placeholder input and set that
/// operand to the df.next_iteration result once it exists.
eddy_status_t eddy_df_build_merge(eddy_builder_t *b,
                                  eddy_value_t *const *inputs, size_t n,
                                  eddy_op_t **out_op);

#ifdef __cplusplus
}
#endif
#endif
