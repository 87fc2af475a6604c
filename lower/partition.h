/// Distributed execution, compile-time half: where each op of a df function
/// runs (a placement over ranks), and the partition pass that splits the
/// function into one df function per rank. Cut edges become df.send /
/// df.recv pairs; every rank that holds part of a loop gets a control-loop
/// state machine for it, driven by the loop predicate that the rank
/// computing it sends to every other partition of the loop (the
/// "Implementation of Control Flow in TensorFlow" note, "distributed while
/// loop"; the EuroSys 2018 paper on dynamic control flow). docs/distributed.md
/// describes the rules; runtime/interp runs the partitions.
#ifndef EDDY_LOWER_PARTITION_H
#define EDDY_LOWER_PARTITION_H

#include "ir/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Ranks at most (a placement or --placement naming more is an error).
#define EDDY_PARTITION_MAX_RANKS 1024

/// The rank of each op of a df function's body. Ops with no operands and
/// df.enter ops are not placed: each rank that uses one gets its own copy.
typedef struct eddy_placement {
  int32_t num_ranks;
  eddy_ptrmap_t rank;   ///< op -> rank + 1
  eddy_ptrmap_t given;  ///< op -> 1 when the user chose the rank
} eddy_placement_t;

void eddy_placement_init(eddy_placement_t *p, int32_t num_ranks);
void eddy_placement_destroy(eddy_placement_t *p);
/// given: the rank comes from the user (a device field, --placement), so a
/// constraint it breaks is an error rather than a silent move.
void eddy_placement_set(eddy_placement_t *p, const eddy_op_t *op,
                        int32_t rank, bool given);
/// The op's rank, or -1 when it has none.
int32_t eddy_placement_get(const eddy_placement_t *p, const eddy_op_t *op);

/// One rule: ops whose location name matches pattern (`*` matches any run
/// of characters, the rest literally) run on rank.
typedef struct eddy_placement_rule {
  char *pattern;
  int32_t rank;
} eddy_placement_rule_t;

/// Reads a --placement file: one `PATTERN RANK` per line, `#` comments and
/// blank lines ignored. Errors name the file and line.
eddy_status_t eddy_placement_rules_read(const char *path,
                                        eddy_placement_rule_t **out_rules,
                                        size_t *out_n);
void eddy_placement_rules_free(eddy_placement_rule_t *rules, size_t n);

/// The rank of a TensorFlow device name: `/job:J/task:T/...` gives T
/// (`/task:T` anywhere in it); -1 when it names no task (an empty device).
int32_t eddy_placement_device_rank(const char *device);

/// Places every op of func (a df function): first the rules (the first
/// whose pattern matches the op's location name), then the devices (rules
/// with exact node names: a location name matches when it equals the node
/// name or ends with "/NAME"), then the defaults: an op inside a loop goes
/// where the loop's first placed op went, else where the loop's first
/// df.enter's input was computed, so that by default a whole loop runs on
/// one rank; any other op goes where its first operand was computed, else to
/// rank 0. Ranks out of [0, num_ranks) are errors naming the rule or node.
eddy_status_t eddy_placement_compute(const eddy_op_t *func,
                                     const eddy_placement_rule_t *rules,
                                     size_t num_rules,
                                     const eddy_placement_rule_t *devices,
                                     size_t num_devices, int32_t num_ranks,
                                     eddy_placement_t *p);

/// Every placeable op of func on a rank drawn from seed (splitmix64), for
/// tests: loops cut anywhere.
void eddy_placement_random(const eddy_op_t *func, uint64_t seed,
                           eddy_placement_t *p);

/// What the partition pass made.
typedef struct eddy_partition_info {
  int64_t sends, recvs;      ///< df.send / df.recv ops over all ranks
  int64_t machines;          ///< control-loop state machines over all ranks
  int64_t predicate_sends;   ///< of the sends: loop predicates broadcast
} eddy_partition_info_t;

/// Location name prefix of the ops of a control-loop state machine
/// ("machine while_0/").
#define EDDY_PARTITION_MACHINE_LOC "machine "

/// Splits func (a verified df function; ctl lowered by to-dataflow) into
/// p->num_ranks functions "<func>.rank<R>" appended to m, out_funcs[R]
/// (room for num_ranks). Each takes func's arguments; rank 0's returns
/// func's results, the others return nothing. A df.next_iteration goes to
/// its df.merge's rank (an error naming both when the user placed them
/// apart). func is left unchanged. info may be NULL.
eddy_status_t eddy_partition_func(eddy_module_t *m, const eddy_op_t *func,
                                  const eddy_placement_t *p,
                                  eddy_op_t **out_funcs,
                                  eddy_partition_info_t *info);

#ifdef __cplusplus
}
#endif
#endif
