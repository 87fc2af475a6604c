/// The partition pass (lower/partition.h) and partitions run on threads of
/// one process (eddy_interp_run_local), no MPI: the structure of the
/// partitions and their control-loop state machines, and every TensorFlow
/// fixture, v1 and v2, under random placements over 2 and 3 ranks from a
/// fixed seed, bit for bit against the single-process interpreter.
#define _POSIX_C_SOURCE 200809L

#include "dialects/tf/tf.h"
#include "lower/lower.h"
#include "lower/partition.h"
#include "runtime/eval/eval.h"
#include "runtime/interp/interp.h"

#include <setjmp.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/unit/common/tf_fixtures.h"

/// Same bytes on the wire: dtype, shape and every bit of every element.
static bool same_bits(const eddy_eval_value_t *a, const eddy_eval_value_t *b) {
  eddy_buf_t x, y;
  eddy_buf_init(&x);
  eddy_buf_init(&y);
  eddy_status_t sa = eddy_interp_value_encode(a, false, &x);
  eddy_status_t sb = eddy_interp_value_encode(b, false, &y);
  bool same = !sa && !sb && x.len == y.len && memcmp(x.data, y.data, x.len) == 0;
  eddy_status_destroy(sa);
  eddy_status_destroy(sb);
  eddy_buf_destroy(&x);
  eddy_buf_destroy(&y);
  return same;
}

static int count_machines(const eddy_op_t *f, const char *frame) {
  int n = 0;
  for (eddy_op_t *op = eddy_ir_func_entry(f)->first; op; op = op->next) {
    if (!eddy_ir_op_is(op, "df.enter") || !op->loc || op->loc->line != 0 ||
        strncmp(op->loc->file->str, EDDY_PARTITION_MACHINE_LOC,
                strlen(EDDY_PARTITION_MACHINE_LOC)) != 0)
      continue;
    const eddy_attr_t *a = eddy_ir_op_attr(op, "frame_name");
    n += !frame || strcmp(a->u.str.data, frame) == 0;
  }
  return n;
}

static int count_ops(const eddy_op_t *f, const char *name) {
  int n = 0;
  for (eddy_op_t *op = eddy_ir_func_entry(f)->first; op; op = op->next)
    n += eddy_ir_op_is(op, name);
  return n;
}

/// A nested loop: the outer loop on rank 0, its one body op i + 1 on rank
/// 2, the inner loop on rank 1.
static const char nested[] =
    "module {\n"
    "  func.func @triangle(%n: tensor<i64>, %step: tensor<f64>) -> "
    "(tensor<f64>, tensor<i64>) {\n"
    "    %zero = \"core.constant\"() {value = dense<0> : tensor<i64>} : () -> "
    "tensor<i64>\n"
    "    %fzero = \"core.constant\"() {value = dense<0.0> : tensor<f64>} : () "
    "-> tensor<f64>\n"
    "    %c1 = \"core.constant\"() {value = dense<1> : tensor<i64>} : () -> "
    "tensor<i64>\n"
    "    %r:3 = \"ctl.while\"(%zero, %fzero, %zero) ({\n"
    "    ^bb0(%i: tensor<i64>, %sum: tensor<f64>, %count: tensor<i64>):\n"
    "      %more = \"core.lt\"(%i, %n) : (tensor<i64>, tensor<i64>) -> "
    "tensor<i1> loc(\"outer/less\")\n"
    "      \"ctl.condition\"(%more) : (tensor<i1>) -> ()\n"
    "    }, {\n"
    "    ^bb0(%i: tensor<i64>, %sum: tensor<f64>, %count: tensor<i64>):\n"
    "      %in:3 = \"ctl.while\"(%zero, %sum, %count) ({\n"
    "      ^bb0(%j: tensor<i64>, %s: tensor<f64>, %c: tensor<i64>):\n"
    "        %more = \"core.lt\"(%j, %i) : (tensor<i64>, tensor<i64>) -> "
    "tensor<i1> loc(\"inner/less\")\n"
    "        \"ctl.condition\"(%more) : (tensor<i1>) -> ()\n"
    "      }, {\n"
    "      ^bb0(%j: tensor<i64>, %s: tensor<f64>, %c: tensor<i64>):\n"
    "        %j2 = \"core.add\"(%j, %c1) : (tensor<i64>, tensor<i64>) -> "
    "tensor<i64> loc(\"inner/j2\")\n"
    "        %s2 = \"core.add\"(%s, %step) : (tensor<f64>, tensor<f64>) -> "
    "tensor<f64> loc(\"inner/s2\")\n"
    "        %c2 = \"core.add\"(%c, %c1) : (tensor<i64>, tensor<i64>) -> "
    "tensor<i64> loc(\"inner/c2\")\n"
    "        \"ctl.yield\"(%j2, %s2, %c2) : (tensor<i64>, tensor<f64>, "
    "tensor<i64>) -> ()\n"
    "      }) : (tensor<i64>, tensor<f64>, tensor<i64>) -> (tensor<i64>, "
    "tensor<f64>, tensor<i64>) loc(\"inner\")\n"
    "      %i2 = \"core.add\"(%i, %c1) : (tensor<i64>, tensor<i64>) -> "
    "tensor<i64> loc(\"outer/i2\")\n"
    "      \"ctl.yield\"(%i2, %in#1, %in#2) : (tensor<i64>, tensor<f64>, "
    "tensor<i64>) -> ()\n"
    "    }) : (tensor<i64>, tensor<f64>, tensor<i64>) -> (tensor<i64>, "
    "tensor<f64>, tensor<i64>) loc(\"outer\")\n"
    "    \"func.return\"(%r#1, %r#2) : (tensor<f64>, tensor<i64>) -> ()\n"
    "  }\n"
    "}\n";

typedef struct nested_run {
  eddy_ctx_t *ctx;
  eddy_module_t *m;
  eddy_op_t *func;
  eddy_op_t *parts[3];
  eddy_partition_info_t info;
  eddy_rt_ctx_t *rt;
} nested_run_t;

static void nested_open(nested_run_t *r, const eddy_placement_rule_t *rules,
                        size_t nrules, int32_t ranks) {
  memset(r, 0, sizeof(*r));
  r->ctx = eddy_ir_ctx_create();
  eddy_tf_dialect_register(r->ctx);
  eddy_status_t st =
      eddy_ir_parse_module(r->ctx, "nested", nested, strlen(nested), &r->m);
  assert_null(st);
  r->func = eddy_ir_module_lookup_func(r->m, "triangle");
  assert_null(eddy_lower_to_dataflow_func(r->func));
  eddy_placement_t p;
  eddy_placement_init(&p, ranks);
  assert_null(eddy_placement_compute(r->func, rules, nrules, NULL, 0, ranks,
                                     &p));
  st = eddy_partition_func(r->m, r->func, &p, r->parts, &r->info);
  if (st)
    fprintf(stderr, "%s\n", eddy_status_message(st));
  assert_null(st);
  eddy_placement_destroy(&p);
  assert_null(eddy_ir_verify_module(r->m));
  if (getenv("EDDY_TEST_DUMP")) {
    eddy_buf_t b;
    eddy_buf_init(&b);
    eddy_print_opts_t po = {0};
    po.locations = true;
    eddy_ir_module_print(r->m, &po, &b);
    fprintf(stderr, "%s\n", b.data);
    eddy_buf_destroy(&b);
  }
  eddy_rt_ctx_options_t ro = eddy_rt_ctx_options_default();
  assert_null(eddy_rt_ctx_create(&ro, &r->rt));
}

static void nested_close(nested_run_t *r) {
  eddy_rt_ctx_destroy(r->rt);
  eddy_ir_module_destroy(r->m);
  eddy_ir_ctx_destroy(r->ctx);
}

/// Runs the original and the partitions at n, step: same bits.
static void nested_check(nested_run_t *r, int32_t ranks, const char *n) {
  eddy_eval_value_t args[2], ref[2], got[2];
  memset(args, 0, sizeof(args));
  assert_null(eddy_eval_scalar_from_text(r->rt, EDDY_DT_I64, n, &args[0]));
  assert_null(eddy_eval_scalar_from_text(r->rt, EDDY_DT_F64, "2.5", &args[1]));
  eddy_interp_opts_t o = eddy_interp_opts_default();
  o.num_workers = 1;
  assert_null(eddy_interp_func(r->rt, r->func, &o, args, 2, ref, 2, NULL));
  eddy_interp_traffic_t tr[3];
  eddy_status_t st = eddy_interp_run_local(
      r->rt, (const eddy_op_t *const *)r->parts, ranks, &o, args, 2, got, 2,
      tr);
  if (st)
    fprintf(stderr, "%s\n", eddy_status_message(st));
  assert_null(st);
  for (int i = 0; i < 2; i++) {
    assert_true(same_bits(&ref[i], &got[i]));
    eddy_eval_value_release(&ref[i]);
    eddy_eval_value_release(&got[i]);
  }
  for (int i = 0; i < 2; i++)
    eddy_eval_value_release(&args[i]);
}

static void test_nested_machines(void **state) {
  (void)state;
  eddy_placement_rule_t rules[] = {
      {"inner*", 1}, {"outer/i2", 2}, {"*", 0}};
  nested_run_t r;
  nested_open(&r, rules, 3, 3);
  // Rank 0: the outer loop; its machine. Rank 1: the inner loop, with a
  // machine for it and one for the outer loop it sits in. Rank 2: only an
  // outer-loop op, so only an outer machine.
  // (to-dataflow names the inner frame while_0/, the outer one while_1/;
  // the inner loop is wholly on rank 1, so it needs no machine at all.)
  assert_int_equal(count_machines(r.parts[0], "while_1/"), 1);
  assert_int_equal(count_machines(r.parts[0], "while_0/"), 0);
  assert_int_equal(count_machines(r.parts[1], "while_1/"), 1);
  assert_int_equal(count_machines(r.parts[1], "while_0/"), 0);
  assert_int_equal(count_machines(r.parts[2], "while_1/"), 1);
  assert_int_equal(count_machines(r.parts[2], "while_0/"), 0);
  assert_int_equal(r.info.machines, 3);
  // Rank 0 computes the outer predicate and sends it to ranks 1 and 2;
  // rank 1 computes the inner one and needs nobody's.
  assert_int_equal(r.info.predicate_sends, 2);
  // Rank 0 returns the results; the others return nothing.
  assert_int_equal(eddy_ir_func_type(r.parts[0])->num_outputs, 2);
  assert_int_equal(eddy_ir_func_type(r.parts[1])->num_outputs, 0);
  assert_int_equal(count_ops(r.parts[2], "df.merge"), 1); // its machine's
  // Rank 2 receives for i + 1: the predicate, i and the 1 (tagged with the
  // body's iteration by a df.after on rank 0).
  assert_int_equal(count_ops(r.parts[2], "df.recv"), 3);
  nested_check(&r, 3, "4");
  nested_check(&r, 3, "0"); // zero-trip outer loop
  nested_check(&r, 3, "1"); // zero-trip inner loop in iteration 0
  nested_close(&r);
}

static void test_whole_loop_default(void **state) {
  (void)state;
  // Only the outer predicate is placed (rank 1): by default the loop goes
  // with it, whole, and rank 0 only returns what it receives.
  eddy_placement_rule_t rules[] = {{"outer/less", 1}};
  nested_run_t r;
  nested_open(&r, rules, 1, 2);
  assert_int_equal(r.info.machines, 0);
  assert_int_equal(count_ops(r.parts[0], "df.merge"), 0);
  assert_int_equal(count_ops(r.parts[0], "df.recv"), 2);
  nested_check(&r, 2, "4");
  nested_close(&r);
}

static void test_back_edge_placed_apart(void **state) {
  (void)state;
  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  eddy_tf_dialect_register(ctx);
  eddy_module_t *m = NULL;
  assert_null(eddy_ir_parse_module(ctx, "nested", nested, strlen(nested), &m));
  eddy_op_t *func = eddy_ir_module_lookup_func(m, "triangle");
  assert_null(eddy_lower_to_dataflow_func(func));
  eddy_placement_t p;
  eddy_placement_init(&p, 2);
  eddy_placement_random(func, 1, &p);
  const eddy_op_t *ni = NULL, *merge = NULL;
  for (eddy_op_t *op = eddy_ir_func_entry(func)->first; op; op = op->next)
    if (eddy_ir_op_is(op, "df.next_iteration") && !ni) {
      ni = op;
      merge = op->results[0].uses->owner;
    }
  eddy_placement_set(&p, ni, 0, true);
  eddy_placement_set(&p, merge, 1, true);
  eddy_op_t *parts[2];
  eddy_status_t st = eddy_partition_func(m, func, &p, parts, NULL);
  assert_non_null(st);
  assert_non_null(strstr(eddy_status_message(st), "back edge cannot cross"));
  eddy_status_destroy(st);
  eddy_placement_destroy(&p);
  eddy_ir_module_destroy(m);
  eddy_ir_ctx_destroy(ctx);
}

/// Two partitions that wait for each other: each rank's first op is a recv
/// of what the other sends after its own recv. Neither rank can finish, so
/// neither closes the other's rendezvous; only the time limit ends the run.
static const char mutual_wait[] =
    "module {\n"
    "  func.func @r0(%x: tensor<f32>) -> tensor<f32> {\n"
    "    %a = \"df.recv\"() {key = 1, from = 1} : () -> tensor<f32>\n"
    "    %b = \"core.add\"(%a, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
    "    \"df.send\"(%b) {key = 2, to = 1} : (tensor<f32>) -> ()\n"
    "    \"func.return\"(%b) : (tensor<f32>) -> ()\n"
    "  }\n"
    "  func.func @r1(%x: tensor<f32>) {\n"
    "    %c = \"df.recv\"() {key = 2, from = 0} : () -> tensor<f32>\n"
    "    \"df.send\"(%c) {key = 1, to = 0} : (tensor<f32>) -> ()\n"
    "    \"func.return\"() : () -> ()\n"
    "  }\n"
    "}\n";

/// A transport that loses every message.
static eddy_status_t drop_send(void *user, int32_t to, const char *key,
                               const eddy_eval_value_t *v, bool dead) {
  (void)user, (void)to, (void)key, (void)v, (void)dead;
  return NULL;
}

/// --timeout-ms holds while a worker waits for a message: a run whose recvs
/// wait forever (rank 1 never sends) ends with the time-limit error naming
/// the waiting recv, alone and with its peer on a thread, with 1 and 2
/// workers (it used to wait on the condition variable for ever).
static void test_timeout_while_recv_waits(void **state) {
  (void)state;
  eddy_ctx_t *ctx = eddy_ir_ctx_create();
  eddy_dialects_register_all(ctx);
  eddy_module_t *m = NULL;
  assert_null(eddy_ir_parse_module(ctx, "wait.eddy", mutual_wait,
                                   strlen(mutual_wait), &m));
  assert_null(eddy_ir_verify_module(m));
  eddy_rt_ctx_t *rt = NULL;
  assert_null(eddy_rt_ctx_create(NULL, &rt));
  eddy_eval_value_t arg, out;
  assert_null(eddy_eval_scalar_from_text(rt, EDDY_DT_F32, "1.5", &arg));
  const eddy_op_t *parts[2] = {eddy_ir_module_lookup_func(m, "r0"),
                               eddy_ir_module_lookup_func(m, "r1")};
  for (int32_t w = 1; w <= 2; w++) {
    eddy_interp_opts_t o = eddy_interp_opts_default();
    o.num_workers = w;
    o.timeout_ms = 250; // far past the runs' start, even under load
    // Rank 0 alone: its peer never sends and never finishes.
    eddy_interp_rendezvous_t *rv = eddy_interp_rendezvous_create();
    o.rendezvous = rv;
    o.send = drop_send;
    eddy_status_t st =
        eddy_interp_func(rt, parts[0], &o, &arg, 1, &out, 1, NULL);
    assert_non_null(st);
    assert_int_equal(eddy_status_code(st), EDDY_ERR_RESOURCE);
    assert_string_equal(eddy_status_message(st),
                        "the run took longer than its time limit of 250 ms; "
                        "'df.recv' op at wait.eddy:3:5 in the function's root "
                        "frame waits for message 1@root from rank 1");
    eddy_status_destroy(st);
    eddy_interp_rendezvous_destroy(rv);
    // Both ranks on threads, each waiting for the other.
    o.rendezvous = NULL;
    o.send = NULL;
    st = eddy_interp_run_local(rt, parts, 2, &o, &arg, 1, &out, 1, NULL);
    assert_non_null(st);
    // Whichever rank passes its limit first reports it; the other is
    // cancelled, not left to report a deadlock on the rank that failed.
    const char *msg = eddy_status_message(st);
    if (!strstr(msg, "the run took longer than its time limit of 250 ms; "
                     "'df.recv' op at wait.eddy:") ||
        !strstr(msg, "waits for message "))
      fail_msg("unexpected message: %s", msg);
    assert_int_equal(eddy_status_code(st), EDDY_ERR_RESOURCE);
    eddy_status_destroy(st);
  }
  eddy_eval_value_release(&arg);
  assert_int_equal(eddy_rt_ctx_bytes_in_use(rt), 0);
  eddy_rt_ctx_destroy(rt);
  eddy_ir_module_destroy(m);
  eddy_ir_ctx_destroy(ctx);
}

static void test_device_names(void **state) {
  (void)state;
  assert_int_equal(eddy_placement_device_rank("/job:worker/task:1/device:CPU:0"), 1);
  assert_int_equal(eddy_placement_device_rank("/task:12"), 12);
  assert_int_equal(eddy_placement_device_rank("/device:CPU:0"), -1);
  assert_int_equal(eddy_placement_device_rank(""), -1);
}

/// ---- Fixtures ------------------------------------------------------------------------

static uint64_t name_seed(const char *s) {
  uint64_t h = 20;
  for (; *s; s++)
    h = h * 131 + (unsigned char)*s;
  return h;
}

/// Over all fixtures: what the partitions held (so that the test is known to
/// have cut loops, not only run them on one rank).
static eddy_partition_info_t total;
static int64_t total_msgs;

static bool run_fixture(const char *dir, const char *name) {
  tf_fixture_run_t r;
  eddy_op_t *func;
  eddy_status_t st = tf_fixture_open_legalized(&r, dir, name, &func);
  if (!st)
    st = eddy_lower_to_dataflow_func(func);
  if (!st)
    st = eddy_ir_verify_module(r.m);
  eddy_interp_opts_t io = eddy_interp_opts_default();
  io.num_workers = 1;
  io.timeout_ms = 60000;
  size_t nres = r.mf.num_fetches;
  eddy_eval_value_t ref[64];
  memset(ref, 0, sizeof(ref));
  if (!st)
    st = eddy_interp_func(r.rt, func, &io, r.args, r.mf.num_feeds, ref, nres,
                          NULL);
  bool ok = !st;
  for (int32_t ranks = 2; ok && ranks <= 3; ranks++) {
    eddy_placement_t p;
    eddy_placement_init(&p, ranks);
    eddy_placement_random(func, name_seed(name) + (uint64_t)ranks, &p);
    eddy_op_t *parts[3];
    eddy_partition_info_t info;
    st = eddy_partition_func(r.m, func, &p, parts, &info);
    eddy_placement_destroy(&p);
    total.sends += info.sends;
    total.machines += info.machines;
    total.predicate_sends += info.predicate_sends;
    eddy_interp_traffic_t tr[3];
    memset(tr, 0, sizeof(tr));
    if (!st)
      st = eddy_ir_verify_module(r.m);
    if (!st)
      st = eddy_interp_run_local(r.rt, (const eddy_op_t *const *)parts, ranks,
                                 &io, r.args, r.mf.num_feeds, r.res, nres,
                                 tr);
    for (int32_t k = 0; k < ranks; k++)
      total_msgs += tr[k].messages;
    for (size_t i = 0; !st && i < nres; i++)
      if (!same_bits(&ref[i], &r.res[i])) {
        tf_fixtures_report("%s: %d ranks: result %zu differs\n", name, ranks,
                           i);
        ok = false;
      }
    for (size_t i = 0; i < nres; i++)
      eddy_eval_value_release(&r.res[i]);
    for (int32_t k = 0; k < ranks && !st; k++) {
      eddy_ir_op_erase(parts[k]);
    }
    ok = ok && !st;
  }
  for (size_t i = 0; i < nres; i++)
    eddy_eval_value_release(&ref[i]);
  return tf_fixture_close(&r, st, ok);
}

static void test_fixtures_partitioned(void **state) {
  (void)state;
  tf_fixtures_expect_all(__FILE__, "tests/unit/dist/test_partition.c",
                         "2,3 ranks", run_fixture);
  printf("partitions: %" PRId64 " sends (%" PRId64 " of loop predicates), "
         "%" PRId64 " state machines; %" PRId64 " messages at run time\n",
         total.sends, total.predicate_sends, total.machines, total_msgs);
  assert_true(total.machines > 100 / TF_FIXTURES_STRIDE);
  assert_true(total.predicate_sends > 100 / TF_FIXTURES_STRIDE);
  assert_true(total_msgs > total.sends);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_device_names),
      cmocka_unit_test(test_timeout_while_recv_waits),
      cmocka_unit_test(test_nested_machines),
      cmocka_unit_test(test_whole_loop_default),
      cmocka_unit_test(test_back_edge_placed_apart),
      cmocka_unit_test(test_fixtures_partitioned),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
