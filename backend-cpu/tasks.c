/// The kernel plan's tasks (loops run at once: the parts of a loop the
/// row-split pass divided by rows), made into one call of the runtime's
/// thread pool on the parsed emitted module, before it is lowered
/// (outline.h, cpu_tasks_outline; docs/cpu.md, "Row-parallel loops").
///
/// The emitter writes each task's code between marker calls. Here each
/// task's ops become a function of the values they use (cpu_outline_span),
/// and the group becomes one call of
///
///   @__eddy_tasksN(%rt, values...) -> results
///     stores the values in an environment on its stack (a memref as its
///     LLVM descriptor, an index as i64), calls
///     eddy_rt_entry_run_tasks(rt, n, @__eddy_tasksN_run, env) and reads
///     the tasks' results back from the environment;
///   @__eddy_tasksN_run(env, i)
///     the pool's task function: reads task i's arguments from the
///     environment, calls it, and stores its results there.
///
/// Tasks never write what another reads (the plan's parts are independent
/// loops, and the emitter gives no part a buffer another part freed), so
/// their order does not matter. A group with a value of a type that has no
/// plain LLVM form (none in emitted code), or a task that reads another's
/// result, runs its tasks one after the other instead, in place.
#include "backend-cpu/outline.h"
#include "backend-cpu/plan.h"

#include "ir/support.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const k_cpu_task_marks[3] = {
    "__eddy_tasks_begin", "__eddy_tasks_next", "__eddy_tasks_end"};

/// A func.call of @callee.
static bool is_call_to(MlirOperation op, const char *callee) {
  if (mlirOperationIsNull(op) || !cpu_op_is(op, "func.call"))
    return false;
  MlirAttribute a = mlirOperationGetAttributeByName(op, cpu_sref("callee"));
  if (mlirAttributeIsNull(a) || !mlirAttributeIsAFlatSymbolRef(a))
    return false;
  MlirStringRef s = mlirFlatSymbolRefAttrGetValue(a);
  return s.length == strlen(callee) && memcmp(s.data, callee, s.length) == 0;
}

static eddy_status_t oom(void) {
  return eddy_status_create(EDDY_ERR_RESOURCE, "cpu backend: out of memory");
}

static void put_str(MlirStringRef s, void *user) {
  eddy_buf_append(user, s.data, s.length);
}

static void put_type(eddy_buf_t *b, MlirType t) {
  mlirTypePrint(t, put_str, b);
}

/// !llvm.ptr (the LLVM dialect's C API is not linked).
static bool is_llvm_ptr(MlirType t) {
  return mlirTypeEqual(
      t, mlirTypeParseGet(mlirTypeGetContext(t), cpu_sref("!llvm.ptr")));
}

/// How a value of type t is kept in the environment: its slot's LLVM type
/// (appended to out) and its size in 8-byte words. 0 for a type with no
/// plain LLVM form.
static int64_t slot_type(MlirType t, eddy_buf_t *out) {
  if (mlirTypeIsAMemRef(t)) {
    // The descriptor: allocated and aligned pointers, offset, sizes and
    // strides.
    int64_t r = mlirShapedTypeGetRank(t);
    if (r == 0)
      eddy_buf_puts(out, "!llvm.struct<(ptr, ptr, i64)>");
    else
      eddy_buf_printf(out,
                      "!llvm.struct<(ptr, ptr, i64, array<%lld x i64>, "
                      "array<%lld x i64>)>",
                      (long long)r, (long long)r);
    return 3 + 2 * r;
  }
  if (mlirTypeIsAIndex(t)) {
    eddy_buf_puts(out, "i64");
    return 1;
  }
  if ((mlirTypeIsAInteger(t) && mlirIntegerTypeGetWidth(t) <= 64) ||
      mlirTypeIsAF32(t) || mlirTypeIsAF64(t) || is_llvm_ptr(t)) {
    put_type(out, t);
    return 1;
  }
  return 0;
}

/// One environment slot: a value crossing into or out of the tasks.
typedef struct slot {
  MlirValue v;
  char *type;     ///< the slot's LLVM type
  int64_t offset; ///< its byte offset in the environment (8-aligned)
} slot_t;

typedef struct group {
  MlirModule module;
  MlirContext ctx;
  int id;
  int n; ///< tasks
  MlirOperation marks[CPU_MAX_TASKS + 1];
  MlirOperation calls[CPU_MAX_TASKS]; ///< one per task, once outlined
  slot_t *slots;                  ///< arguments, then results
  size_t num_args, num_slots, cap;
  eddy_ptrmap_t arg_slot; ///< value (ptr) -> slot + 1
  int64_t env_words;      ///< the environment's size in 8-byte words
} group_t;

static bool add_slot(group_t *g, MlirValue v, bool *ok) {
  if (g->num_slots == g->cap) {
    size_t cap = g->cap ? 2 * g->cap : 32;
    slot_t *p = realloc(g->slots, cap * sizeof *p);
    if (!p)
      return false;
    g->slots = p;
    g->cap = cap;
  }
  eddy_buf_t b;
  eddy_buf_init(&b);
  int64_t words = slot_type(mlirValueGetType(v), &b);
  *ok = *ok && words > 0;
  eddy_buf_putc(&b, '\0');
  g->slots[g->num_slots++] = (slot_t){v, b.data, 8 * g->env_words};
  g->env_words += words;
  return true;
}

/// `%<name> = (slot k of %env as the value's own type)`, in code.
static void emit_load(const group_t *g, eddy_buf_t *code, size_t k,
                      const char *name) {
  const slot_t *s = &g->slots[k];
  MlirType t = mlirValueGetType(s->v);
  eddy_buf_printf(code,
                  "%%p%s = llvm.getelementptr %%env[%lld] : (!llvm.ptr) -> "
                  "!llvm.ptr, i8\n",
                  name, (long long)s->offset);
  bool plain = !mlirTypeIsAMemRef(t) && !mlirTypeIsAIndex(t);
  eddy_buf_printf(code, "%%%s%s = llvm.load %%p%s : !llvm.ptr -> %s\n",
                  plain ? "" : "l", name, name, s->type);
  if (plain)
    return;
  if (mlirTypeIsAIndex(t)) {
    eddy_buf_printf(code, "%%%s = arith.index_cast %%l%s : i64 to index\n",
                    name, name);
    return;
  }
  eddy_buf_printf(code,
                  "%%%s = builtin.unrealized_conversion_cast %%l%s : %s to ",
                  name, name, s->type);
  put_type(code, t);
  eddy_buf_puts(code, "\n");
}

/// Stores %<ref> (of the slot value's type) into slot k of %env; tag names
/// the SSA values this defines.
static void emit_store(const group_t *g, eddy_buf_t *code, size_t k,
                       const char *ref, const char *tag) {
  const slot_t *s = &g->slots[k];
  MlirType t = mlirValueGetType(s->v);
  // An index or a memref is stored as its LLVM form, %s<tag>.
  bool conv = mlirTypeIsAIndex(t) || mlirTypeIsAMemRef(t);
  if (mlirTypeIsAIndex(t)) {
    eddy_buf_printf(code, "%%s%s = arith.index_cast %%%s : index to i64\n", tag,
                    ref);
  } else if (conv) {
    eddy_buf_printf(
        code, "%%s%s = builtin.unrealized_conversion_cast %%%s : ", tag, ref);
    put_type(code, t);
    eddy_buf_printf(code, " to %s\n", s->type);
  }
  eddy_buf_printf(code,
                  "%%q%s = llvm.getelementptr %%env[%lld] : (!llvm.ptr) -> "
                  "!llvm.ptr, i8\n",
                  tag, (long long)s->offset);
  eddy_buf_printf(code, "llvm.store %%%s%s, %%q%s : %s, !llvm.ptr\n",
                  conv ? "s" : "", conv ? tag : ref, tag, s->type);
}

/// The types of op's operands (or results) as `(T, T)`.
static void put_types(eddy_buf_t *b, MlirOperation op, bool results) {
  intptr_t n = results ? mlirOperationGetNumResults(op)
                       : mlirOperationGetNumOperands(op);
  eddy_buf_puts(b, "(");
  for (intptr_t i = 0; i < n; i++) {
    if (i)
      eddy_buf_puts(b, ", ");
    put_type(b, mlirValueGetType(results ? mlirOperationGetResult(op, i)
                                         : mlirOperationGetOperand(op, i)));
  }
  eddy_buf_puts(b, ")");
}

static const char *callee_of(MlirOperation call) {
  MlirAttribute a = mlirOperationGetAttributeByName(call, cpu_sref("callee"));
  return mlirFlatSymbolRefAttrGetValue(a).data;
}

/// @__eddy_tasksN_run(env, i): task i.
static void emit_run(group_t *g, eddy_buf_t *t) {
  eddy_buf_printf(t,
                  "func.func private @__eddy_tasks%d_run(%%env: !llvm.ptr, "
                  "%%i: i64) attributes {llvm.linkage = "
                  "#llvm.linkage<internal>} {\n"
                  "%%ii = arith.index_cast %%i : i64 to index\n"
                  "scf.index_switch %%ii\n",
                  g->id);
  size_t res = g->num_args;
  for (int k = 0; k < g->n; k++) {
    MlirOperation c = g->calls[k];
    eddy_buf_printf(t, "case %d {\n", k);
    intptr_t na = mlirOperationGetNumOperands(c);
    for (intptr_t i = 0; i < na; i++) {
      MlirValue v = mlirOperationGetOperand(c, i);
      size_t s = (size_t)(intptr_t)eddy_ptrmap_get(&g->arg_slot, v.ptr) - 1;
      char name[32];
      snprintf(name, sizeof name, "a%d_%ld", k, (long)i);
      emit_load(g, t, s, name);
    }
    intptr_t nr = mlirOperationGetNumResults(c);
    if (nr)
      eddy_buf_printf(t, "%%r%d:%ld = ", k, (long)nr);
    eddy_buf_printf(t, "func.call @%s(", callee_of(c));
    for (intptr_t i = 0; i < na; i++)
      eddy_buf_printf(t, "%s%%a%d_%ld", i ? ", " : "", k, (long)i);
    eddy_buf_puts(t, ") : ");
    put_types(t, c, false);
    eddy_buf_puts(t, " -> ");
    put_types(t, c, true);
    eddy_buf_puts(t, "\n");
    for (intptr_t i = 0; i < nr; i++) {
      char ref[32], tag[32];
      snprintf(ref, sizeof ref, "r%d#%ld", k, (long)i);
      snprintf(tag, sizeof tag, "r%d_%ld", k, (long)i);
      emit_store(g, t, res++, ref, tag);
    }
    eddy_buf_puts(t, "scf.yield\n}\n");
  }
  eddy_buf_puts(t, "default {\nscf.yield\n}\nfunc.return\n}\n");
}

/// @__eddy_tasksN(rt, args...) -> results: the pool runs the tasks.
static void emit_launch(group_t *g, eddy_buf_t *t) {
  eddy_buf_printf(t, "func.func private @__eddy_tasks%d(%%rt: !llvm.ptr",
                  g->id);
  for (size_t k = 0; k < g->num_args; k++) {
    eddy_buf_printf(t, ", %%a%zu: ", k);
    put_type(t, mlirValueGetType(g->slots[k].v));
  }
  eddy_buf_puts(t, ") -> (");
  for (size_t k = g->num_args; k < g->num_slots; k++) {
    if (k > g->num_args)
      eddy_buf_puts(t, ", ");
    put_type(t, mlirValueGetType(g->slots[k].v));
  }
  eddy_buf_printf(t,
                  ") attributes {llvm.linkage = #llvm.linkage<internal>} {\n"
                  "%%words = llvm.mlir.constant(%lld : i64) : i64\n"
                  "%%env = llvm.alloca %%words x i64 : (i64) -> !llvm.ptr\n",
                  (long long)g->env_words);
  for (size_t k = 0; k < g->num_args; k++) {
    char name[32];
    snprintf(name, sizeof name, "a%zu", k);
    emit_store(g, t, k, name, name);
  }
  eddy_buf_printf(t,
                  "%%f = func.constant @__eddy_tasks%d_run : (!llvm.ptr, i64) "
                  "-> ()\n"
                  "%%fp = builtin.unrealized_conversion_cast %%f : "
                  "(!llvm.ptr, i64) -> () to !llvm.ptr\n"
                  "%%n = llvm.mlir.constant(%d : i64) : i64\n"
                  "func.call @eddy_rt_entry_run_tasks(%%rt, %%n, %%fp, %%env) "
                  ": (!llvm.ptr, i64, !llvm.ptr, !llvm.ptr) -> ()\n",
                  g->id, g->n);
  for (size_t k = g->num_args; k < g->num_slots; k++) {
    char name[32];
    snprintf(name, sizeof name, "r%zu", k);
    emit_load(g, t, k, name);
  }
  eddy_buf_puts(t, "func.return");
  for (size_t k = g->num_args; k < g->num_slots; k++)
    eddy_buf_printf(t, "%s%%r%zu", k > g->num_args ? ", " : " ", k);
  if (g->num_slots > g->num_args) {
    eddy_buf_puts(t, " : ");
    for (size_t k = g->num_args; k < g->num_slots; k++) {
      if (k > g->num_args)
        eddy_buf_puts(t, ", ");
      put_type(t, mlirValueGetType(g->slots[k].v));
    }
  }
  eddy_buf_puts(t, "\n}\n");
}

/// Parses text (the group's functions, with declarations of what they call)
/// as a module and moves its functions with bodies into the group's module.
static eddy_status_t parse_into(group_t *g, eddy_buf_t *text) {
  MlirModule m =
      mlirModuleCreateParse(g->ctx, mlirStringRefCreate(text->data, text->len));
  if (mlirModuleIsNull(m))
    return eddy_status_create(EDDY_ERR_INTERNAL,
                              "cpu backend: a task launch does not parse");
  MlirBlock from = mlirModuleGetBody(m), to = mlirModuleGetBody(g->module);
  for (MlirOperation op = mlirBlockGetFirstOperation(from), next;
       !mlirOperationIsNull(op); op = next) {
    next = mlirOperationGetNextInBlock(op);
    MlirRegion r = mlirOperationGetRegion(op, 0);
    if (mlirBlockIsNull(mlirRegionGetFirstBlock(r)))
      continue; // a declaration
    mlirOperationRemoveFromParent(op);
    mlirBlockAppendOwnedOperation(to, op);
  }
  mlirModuleDestroy(m);
  return NULL;
}

/// Declarations of the tasks' functions and of the runtime's entry.
static void emit_decls(const group_t *g, eddy_buf_t *t) {
  eddy_buf_puts(t, "func.func private @eddy_rt_entry_run_tasks(!llvm.ptr, "
                   "i64, !llvm.ptr, !llvm.ptr)\n");
  for (int k = 0; k < g->n; k++) {
    eddy_buf_printf(t, "func.func private @%s", callee_of(g->calls[k]));
    put_types(t, g->calls[k], false);
    eddy_buf_puts(t, " -> ");
    put_types(t, g->calls[k], true);
    eddy_buf_puts(t, "\n");
  }
}

/// The function that holds op.
static MlirOperation parent_func(MlirOperation op) {
  while (!mlirOperationIsNull(op) && !cpu_op_is(op, "func.func"))
    op = mlirOperationGetParentOperation(op);
  return op;
}

/// Replaces the calls between the group's marks by one launch of them all.
static eddy_status_t launch(group_t *g) {
  // The arguments, each once, then the results.
  bool ok = true;
  for (int k = 0; k < g->n; k++) {
    MlirOperation c = g->calls[k];
    for (intptr_t i = 0; i < mlirOperationGetNumOperands(c); i++) {
      MlirValue v = mlirOperationGetOperand(c, i);
      if (eddy_ptrmap_get(&g->arg_slot, v.ptr))
        continue;
      if (!add_slot(g, v, &ok))
        return oom();
      eddy_ptrmap_put(&g->arg_slot, v.ptr, (void *)(intptr_t)g->num_slots);
    }
  }
  g->num_args = g->num_slots;
  // A task that reads another's result is not independent of it.
  for (int k = 0; k < g->n; k++)
    for (intptr_t i = 0; i < mlirOperationGetNumOperands(g->calls[k]); i++) {
      MlirValue v = mlirOperationGetOperand(g->calls[k], i);
      for (int j = 0; j < g->n; j++)
        ok = ok && !(mlirValueIsAOpResult(v) &&
                     mlirOperationEqual(mlirOpResultGetOwner(v), g->calls[j]));
    }
  for (int k = 0; k < g->n; k++)
    for (intptr_t i = 0; i < mlirOperationGetNumResults(g->calls[k]); i++)
      if (!add_slot(g, mlirOperationGetResult(g->calls[k], i), &ok))
        return oom();
  MlirOperation func = parent_func(g->marks[0]);
  MlirBlock entry = mlirRegionGetFirstBlock(mlirOperationGetRegion(func, 0));
  if (!ok || mlirBlockGetNumArguments(entry) < 1 ||
      !is_llvm_ptr(mlirValueGetType(mlirBlockGetArgument(entry, 0))))
    return NULL; // the tasks run one after the other, where they are
  MlirValue rt = mlirBlockGetArgument(entry, 0);

  eddy_buf_t text;
  eddy_buf_init(&text);
  emit_decls(g, &text);
  emit_run(g, &text);
  emit_launch(g, &text);
  eddy_status_t st = parse_into(g, &text);
  eddy_buf_destroy(&text);
  EDDY_RETURN_IF_ERROR(st);

  // The call, in place of the tasks' calls.
  MlirValue *ops = malloc(sizeof(MlirValue) * (g->num_args + 1));
  MlirType *types = malloc(sizeof(MlirType) * (g->num_slots + 1));
  if (!ops || !types) {
    free(ops);
    free(types);
    return oom();
  }
  ops[0] = rt;
  for (size_t k = 0; k < g->num_args; k++)
    ops[k + 1] = g->slots[k].v;
  size_t nres = g->num_slots - g->num_args;
  for (size_t k = 0; k < nres; k++)
    types[k] = mlirValueGetType(g->slots[g->num_args + k].v);
  char name[64];
  snprintf(name, sizeof name, "__eddy_tasks%d", g->id);
  MlirLocation loc = mlirOperationGetLocation(g->calls[0]);
  MlirOperationState cs = mlirOperationStateGet(cpu_sref("func.call"), loc);
  MlirNamedAttribute callee =
      mlirNamedAttributeGet(mlirIdentifierGet(g->ctx, cpu_sref("callee")),
                            mlirFlatSymbolRefAttrGet(g->ctx, cpu_sref(name)));
  mlirOperationStateAddAttributes(&cs, 1, &callee);
  mlirOperationStateAddOperands(&cs, (intptr_t)g->num_args + 1, ops);
  mlirOperationStateAddResults(&cs, (intptr_t)nres, types);
  MlirOperation call = mlirOperationCreate(&cs);
  free(ops);
  free(types);
  mlirBlockInsertOwnedOperationBefore(mlirOperationGetBlock(g->marks[g->n]),
                                      g->marks[g->n], call);
  size_t r = 0;
  for (int k = 0; k < g->n; k++) {
    MlirOperation c = g->calls[k];
    for (intptr_t i = 0; i < mlirOperationGetNumResults(c); i++, r++) {
      MlirValue from = mlirOperationGetResult(c, i);
      MlirValue to = mlirOperationGetResult(call, (intptr_t)r);
      MlirOpOperand u = mlirValueGetFirstUse(from);
      while (!mlirOpOperandIsNull(u)) {
        MlirOpOperand nu = mlirOpOperandGetNextUse(u);
        mlirOperationSetOperand(mlirOpOperandGetOwner(u),
                                mlirOpOperandGetOperandNumber(u), to);
        u = nu;
      }
    }
    mlirOperationDestroy(c);
    g->calls[k] = (MlirOperation){NULL};
  }
  return NULL;
}

/// The group whose first mark is begin: its tasks outlined and launched
/// together; the marks removed.
static eddy_status_t one_group(MlirModule module, MlirOperation begin, int id) {
  group_t g = {
      .module = module, .ctx = mlirOperationGetContext(begin), .id = id};
  eddy_ptrmap_init(&g.arg_slot);
  g.marks[0] = begin;
  int nm = 1;
  for (MlirOperation op = mlirOperationGetNextInBlock(begin);
       !mlirOperationIsNull(op) && nm <= CPU_MAX_TASKS;
       op = mlirOperationGetNextInBlock(op)) {
    if (is_call_to(op, k_cpu_task_marks[1]))
      g.marks[nm++] = op;
    else if (is_call_to(op, k_cpu_task_marks[2])) {
      g.marks[nm++] = op;
      break;
    }
  }
  eddy_status_t st = NULL;
  if (nm < 2 || !is_call_to(g.marks[nm - 1], k_cpu_task_marks[2])) {
    st = eddy_status_create(EDDY_ERR_INTERNAL,
                            "cpu backend: task marks out of order");
    goto done;
  }
  g.n = nm - 1;
  for (int k = 0; k < g.n && !st; k++) {
    MlirOperation first = mlirOperationGetNextInBlock(g.marks[k]);
    if (mlirOperationEqual(first, g.marks[k + 1])) {
      st = eddy_status_create(EDDY_ERR_INTERNAL, "cpu backend: empty task");
      break;
    }
    MlirOperation last = first;
    while (
        !mlirOperationEqual(mlirOperationGetNextInBlock(last), g.marks[k + 1]))
      last = mlirOperationGetNextInBlock(last);
    char name[64];
    snprintf(name, sizeof name, "__eddy_tasks%d_%d", id, k);
    st = cpu_outline_span(module, first, last, name, &g.calls[k]);
  }
  if (!st)
    st = launch(&g);
  for (int k = 0; k < nm; k++)
    mlirOperationDestroy(g.marks[k]);
done:
  for (size_t k = 0; k < g.num_slots; k++)
    free(g.slots[k].type);
  free(g.slots);
  eddy_ptrmap_destroy(&g.arg_slot);
  return st;
}

/// The first begin mark in op's regions (depth first), or null.
static MlirOperation find_begin(MlirOperation op) {
  for (intptr_t r = 0; r < mlirOperationGetNumRegions(op); r++)
    for (MlirBlock b = mlirRegionGetFirstBlock(mlirOperationGetRegion(op, r));
         !mlirBlockIsNull(b); b = mlirBlockGetNextInRegion(b))
      for (MlirOperation o = mlirBlockGetFirstOperation(b);
           !mlirOperationIsNull(o); o = mlirOperationGetNextInBlock(o)) {
        if (is_call_to(o, k_cpu_task_marks[0]))
          return o;
        MlirOperation in = find_begin(o);
        if (!mlirOperationIsNull(in))
          return in;
      }
  return (MlirOperation){NULL};
}

eddy_status_t cpu_tasks_outline(MlirModule module) {
  MlirOperation top = mlirModuleGetOperation(module);
  int id = 0;
  for (MlirOperation b = find_begin(top); !mlirOperationIsNull(b);
       b = find_begin(top))
    EDDY_RETURN_IF_ERROR(one_group(module, b, id++));
  // The marks' declarations.
  MlirBlock body = mlirModuleGetBody(module);
  for (MlirOperation op = mlirBlockGetFirstOperation(body), next;
       !mlirOperationIsNull(op); op = next) {
    next = mlirOperationGetNextInBlock(op);
    if (!cpu_op_is(op, "func.func"))
      continue;
    MlirAttribute s = mlirOperationGetAttributeByName(op, cpu_sref("sym_name"));
    MlirStringRef n = mlirStringAttrGetValue(s);
    for (int m = 0; m < 3; m++)
      if (n.length == strlen(k_cpu_task_marks[m]) &&
          memcmp(n.data, k_cpu_task_marks[m], n.length) == 0)
        mlirOperationDestroy(op);
  }
  return NULL;
}
