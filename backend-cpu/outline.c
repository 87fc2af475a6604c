/// Outlining of a large emitted function into parts, before it is
/// lowered. The emitter writes a whole program as one function, which is
/// what LLVM optimizes best while it is small; but LLVM's register
/// allocator, GVN, jump threading and loop rotation grow faster than
/// linearly with a function's size, and a program of thousands of kernels
/// (the gradient of a long composition of special functions, a long
/// unrolled chain) then takes minutes to compile. Past a size, each run of
/// consecutive ops of a bounded size becomes a private noinline function
/// called in its place (an op too large for one part is split inside its
/// regions), so that LLVM works on many functions of bounded size, as XLA's
/// CPU backend emits a function per fusion.
///
/// A part takes the values its ops use but do not define as arguments
/// (constants stay where they are and are copied into each part that uses
/// them, so they still fold) and returns those of its results that later
/// ops use. Stack slots stay in the caller's frame (the emitter allocates
/// them all in the function's entry block, which no part takes) and are
/// passed as memrefs.
#include "backend-cpu/outline.h"

#include "ir/support.h"

#include <mlir-c/BuiltinAttributes.h>
#include <mlir-c/BuiltinTypes.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct count {
  size_t ops;
  bool alloca;        ///< holds a stack allocation (never outlined)
  bool kernels_whole; ///< an scf.parallel counts as one op
} count_t;

static MlirWalkResult count_op(MlirOperation op, void *user) {
  count_t *c = user;
  c->ops++;
  if (c->kernels_whole && cpu_op_is(op, "scf.parallel"))
    return MlirWalkResultSkip;
  if (cpu_op_is(op, "memref.alloca") || cpu_op_is(op, "llvm.alloca") ||
      cpu_op_is(op, "memref.alloca_scope"))
    c->alloca = true;
  return MlirWalkResultAdvance;
}

static count_t count(MlirOperation op, bool kernels_whole) {
  count_t c = {0, false, kernels_whole};
  mlirOperationWalk(op, count_op, &c, MlirWalkPreOrder);
  return c;
}

/// The ops of one block being outlined, in order.
typedef struct range {
  MlirBlock block;
  MlirOperation *ops;
  size_t n, cap;
  size_t size;       ///< nested ops in all
  eddy_ptrmap_t set; ///< the ops (as keys)
} range_t;

/// Whether op is one of the range's ops or nested in one.
static bool in_range(const range_t *r, MlirOperation op) {
  for (; !mlirOperationIsNull(op); op = mlirOperationGetParentOperation(op))
    if (mlirBlockEqual(mlirOperationGetBlock(op), r->block))
      return eddy_ptrmap_has(&r->set, op.ptr);
  return false;
}

/// Whether v is defined inside the range (by one of its ops or an op nested
/// in one, or as an argument of a block nested in one).
static bool defined_in_range(const range_t *r, MlirValue v) {
  if (mlirValueIsAOpResult(v))
    return in_range(r, mlirOpResultGetOwner(v));
  MlirBlock b = mlirBlockArgumentGetOwner(v);
  return !mlirBlockEqual(b, r->block) &&
         in_range(r, mlirBlockGetParentOperation(b));
}

/// Ops copied into an outlined function rather than passed to it.
static bool is_constant_like(MlirOperation op) {
  return mlirOperationGetNumOperands(op) == 0 &&
         mlirOperationGetNumRegions(op) == 0 &&
         mlirOperationGetNumResults(op) == 1 &&
         (cpu_op_is(op, "arith.constant") || cpu_op_is(op, "llvm.mlir.constant") ||
          cpu_op_is(op, "llvm.mlir.addressof") || cpu_op_is(op, "llvm.mlir.zero") ||
          cpu_op_is(op, "llvm.mlir.undef") || cpu_op_is(op, "memref.get_global"));
}

/// A growable array of values.
typedef struct values {
  MlirValue *v;
  size_t n, cap;
} values_t;

static bool values_push(values_t *a, MlirValue v) {
  if (a->n == a->cap) {
    size_t cap = a->cap ? 2 * a->cap : 16;
    MlirValue *p = realloc(a->v, cap * sizeof *p);
    if (!p)
      return false;
    a->v = p;
    a->cap = cap;
  }
  a->v[a->n++] = v;
  return true;
}

typedef struct rewire {
  const range_t *r;
  MlirBlock body;      ///< the new function's block
  MlirOperation first; ///< copied constants go before it
  MlirLocation loc;
  eddy_ptrmap_t map; ///< outer value -> its argument or copy (as ptr)
  values_t args;     ///< the outer values passed, in argument order
  bool failed;       ///< out of memory
} rewire_t;

static MlirWalkResult rewire(MlirOperation op, void *user) {
  rewire_t *w = user;
  intptr_t n = mlirOperationGetNumOperands(op);
  for (intptr_t i = 0; i < n; i++) {
    MlirValue v = mlirOperationGetOperand(op, i);
    if (defined_in_range(w->r, v))
      continue;
    void *got = eddy_ptrmap_get(&w->map, v.ptr);
    if (!got) {
      MlirValue inner;
      if (mlirValueIsAOpResult(v) &&
          is_constant_like(mlirOpResultGetOwner(v))) {
        MlirOperation c = mlirOperationClone(mlirOpResultGetOwner(v));
        mlirBlockInsertOwnedOperationBefore(w->body, w->first, c);
        inner = mlirOperationGetResult(c, 0);
      } else {
        if (!values_push(&w->args, v)) {
          w->failed = true;
          return MlirWalkResultInterrupt;
        }
        inner = mlirBlockAddArgument(w->body, mlirValueGetType(v), w->loc);
      }
      eddy_ptrmap_put(&w->map, v.ptr, (void *)inner.ptr);
      got = (void *)inner.ptr;
    }
    mlirOperationSetOperand(op, i, (MlirValue){got});
  }
  return MlirWalkResultAdvance;
}

static MlirNamedAttribute named(MlirContext ctx, const char *name,
                                MlirAttribute a) {
  return mlirNamedAttributeGet(mlirIdentifierGet(ctx, cpu_sref(name)), a);
}

static eddy_status_t oom(void) {
  return eddy_status_create(EDDY_ERR_RESOURCE, "cpu backend: out of memory");
}

/// The results of the range's ops used after it.
static bool escaping(const range_t *r, values_t *out) {
  for (size_t k = 0; k < r->n; k++) {
    intptr_t nres = mlirOperationGetNumResults(r->ops[k]);
    for (intptr_t i = 0; i < nres; i++) {
      MlirValue v = mlirOperationGetResult(r->ops[k], i);
      for (MlirOpOperand u = mlirValueGetFirstUse(v); !mlirOpOperandIsNull(u);
           u = mlirOpOperandGetNextUse(u))
        if (!in_range(r, mlirOpOperandGetOwner(u))) {
          if (!values_push(out, v))
            return false;
          break;
        }
    }
  }
  return true;
}

/// Moves the range's ops into a new function @name appended to module and
/// calls it where they were.
static eddy_status_t outline_range(MlirModule module, const range_t *r,
                                   const char *name, MlirOperation *out_call) {
  MlirOperation x = r->ops[0];
  MlirContext ctx = mlirOperationGetContext(x);
  MlirLocation loc = mlirOperationGetLocation(x);
  MlirOperation next = mlirOperationGetNextInBlock(r->ops[r->n - 1]);
  values_t res = {0};
  rewire_t w = {.r = r, .loc = loc};
  MlirType *types = NULL;
  eddy_status_t st = NULL;
  if (!escaping(r, &res) || !(types = malloc(sizeof(MlirType) * (res.n + 1)))) {
    st = oom();
    goto done;
  }
  for (size_t i = 0; i < res.n; i++)
    types[i] = mlirValueGetType(res.v[i]);

  // The function, with an empty signature for now, and its return.
  w.body = mlirBlockCreate(0, NULL, NULL);
  MlirRegion region = mlirRegionCreate();
  mlirRegionAppendOwnedBlock(region, w.body);
  MlirOperationState fs = mlirOperationStateGet(cpu_sref("func.func"), loc);
  MlirNamedAttribute fattrs[] = {
      named(ctx, "sym_name", mlirStringAttrGet(ctx, cpu_sref(name))),
      named(ctx, "sym_visibility", mlirStringAttrGet(ctx, cpu_sref("private"))),
      named(ctx, "function_type",
            mlirTypeAttrGet(mlirFunctionTypeGet(ctx, 0, NULL, 0, NULL))),
      named(ctx, "passthrough",
            mlirAttributeParseGet(ctx, cpu_sref("[\"noinline\"]"))),
      named(ctx, "llvm.linkage",
            mlirAttributeParseGet(ctx, cpu_sref("#llvm.linkage<internal>"))),
  };
  mlirOperationStateAddAttributes(&fs, 5, fattrs);
  mlirOperationStateAddOwnedRegions(&fs, 1, &region);
  MlirOperation fn = mlirOperationCreate(&fs);
  mlirBlockAppendOwnedOperation(mlirModuleGetBody(module), fn);
  MlirOperationState rs = mlirOperationStateGet(cpu_sref("func.return"), loc);
  mlirOperationStateAddOperands(&rs, (intptr_t)res.n, res.v);
  MlirOperation ret = mlirOperationCreate(&rs);
  mlirBlockAppendOwnedOperation(w.body, ret);
  w.first = ret;

  // The call where the ops were; outside, their results are the call's.
  // (Its operands are set once the arguments are known.)
  MlirOperationState cs = mlirOperationStateGet(cpu_sref("func.call"), loc);
  MlirNamedAttribute callee =
      named(ctx, "callee", mlirFlatSymbolRefAttrGet(ctx, cpu_sref(name)));
  mlirOperationStateAddAttributes(&cs, 1, &callee);
  mlirOperationStateAddResults(&cs, (intptr_t)res.n, types);
  MlirOperation call = mlirOperationCreate(&cs);
  if (mlirOperationIsNull(next))
    mlirBlockAppendOwnedOperation(r->block, call);
  else
    mlirBlockInsertOwnedOperationBefore(r->block, next, call);
  for (size_t i = 0; i < res.n; i++) {
    MlirValue c = mlirOperationGetResult(call, (intptr_t)i);
    MlirOpOperand u = mlirValueGetFirstUse(res.v[i]);
    while (!mlirOpOperandIsNull(u)) {
      MlirOpOperand nu = mlirOpOperandGetNextUse(u);
      MlirOperation owner = mlirOpOperandGetOwner(u);
      if (!mlirOperationEqual(owner, ret) && !in_range(r, owner))
        mlirOperationSetOperand(owner, mlirOpOperandGetOperandNumber(u), c);
      u = nu;
    }
  }

  // The ops move; their outer operands become arguments (or copies of
  // constants). The range's set still names them (their block is checked
  // before they move).
  for (size_t k = 0; k < r->n; k++)
    mlirOperationWalk(r->ops[k], rewire, &w, MlirWalkPreOrder);
  if (w.failed) {
    st = oom();
    goto done;
  }
  for (size_t k = 0; k < r->n; k++)
    mlirOperationMoveBefore(r->ops[k], ret);
  mlirOperationSetOperands(call, (intptr_t)w.args.n, w.args.v);
  MlirType *atypes = malloc(sizeof(MlirType) * (w.args.n + 1));
  if (!atypes) {
    st = oom();
    goto done;
  }
  for (size_t i = 0; i < w.args.n; i++)
    atypes[i] = mlirValueGetType(w.args.v[i]);
  mlirOperationSetAttributeByName(
      fn, cpu_sref("function_type"),
      mlirTypeAttrGet(mlirFunctionTypeGet(ctx, (intptr_t)w.args.n, atypes,
                                          (intptr_t)res.n, types)));
  free(atypes);
  if (out_call)
    *out_call = call;
done:
  eddy_ptrmap_destroy(&w.map);
  free(w.args.v);
  free(res.v);
  free(types);
  return st;
}

typedef struct walk {
  MlirModule module;
  const char *fname;
  size_t part_ops, max_ops;
  bool kernels_whole;
  int next;
  range_t r;
} walk_t;

/// Outlines the range gathered so far (when it is worth a call).
static eddy_status_t flush(walk_t *w) {
  eddy_status_t st = NULL;
  if (w->r.n > 0 && w->r.size >= w->part_ops / 8) {
    char name[256];
    snprintf(name, sizeof name, "%s_part%d", w->fname, w->next++);
    st = outline_range(w->module, &w->r, name, NULL);
  }
  w->r.n = 0;
  w->r.size = 0;
  eddy_ptrmap_clear(&w->r.set);
  return st;
}

static eddy_status_t outline_block(walk_t *w, MlirBlock b);

/// Splits block b into ranges of about part_ops ops, looking inside ops of
/// more than max_ops.
static eddy_status_t outline_block(walk_t *w, MlirBlock b) {
  MlirOperation op = mlirBlockGetFirstOperation(b);
  w->r.block = b;
  while (!mlirOperationIsNull(op)) {
    MlirOperation next = mlirOperationGetNextInBlock(op);
    if (mlirOperationIsNull(next))
      break; // the terminator stays
    if (is_constant_like(op)) { // stays: a part that uses it copies it
      op = next;
      continue;
    }
    count_t c = count(op, w->kernels_whole);
    intptr_t nreg = mlirOperationGetNumRegions(op);
    if (c.alloca || c.ops > w->max_ops) {
      EDDY_RETURN_IF_ERROR(flush(w));
      for (intptr_t i = 0; c.ops > w->max_ops && i < nreg; i++) {
        MlirRegion reg = mlirOperationGetRegion(op, i);
        for (MlirBlock ib = mlirRegionGetFirstBlock(reg); !mlirBlockIsNull(ib);
             ib = mlirBlockGetNextInRegion(ib))
          EDDY_RETURN_IF_ERROR(outline_block(w, ib));
      }
      w->r.block = b;
    } else {
      if (w->r.n == w->r.cap) {
        size_t cap = w->r.cap ? 2 * w->r.cap : 64;
        MlirOperation *p = realloc(w->r.ops, cap * sizeof *p);
        if (!p)
          return oom();
        w->r.ops = p;
        w->r.cap = cap;
      }
      w->r.ops[w->r.n++] = op;
      eddy_ptrmap_put(&w->r.set, op.ptr, (void *)1);
      w->r.size += c.ops;
      if (w->r.size >= w->part_ops)
        EDDY_RETURN_IF_ERROR(flush(w));
    }
    op = next;
  }
  return flush(w);
}

eddy_status_t eddy_cpu_outline(MlirModule module, size_t fn_ops,
                               size_t part_ops, size_t max_ops,
                               bool kernels_whole) {
  MlirBlock top = mlirModuleGetBody(module);
  // The functions present now (outlining appends more).
  size_t n = 0;
  for (MlirOperation op = mlirBlockGetFirstOperation(top);
       !mlirOperationIsNull(op); op = mlirOperationGetNextInBlock(op))
    n++;
  MlirOperation op = mlirBlockGetFirstOperation(top);
  eddy_status_t st = NULL;
  for (size_t i = 0; i < n && !st; i++) {
    MlirOperation next = mlirOperationGetNextInBlock(op);
    if (cpu_op_is(op, "func.func") && mlirOperationGetNumRegions(op) == 1 &&
        count(op, kernels_whole).ops >= fn_ops) {
      MlirAttribute sym = mlirOperationGetAttributeByName(op, cpu_sref("sym_name"));
      MlirStringRef s = mlirStringAttrGetValue(sym);
      char fname[200];
      snprintf(fname, sizeof fname, "__eddy_%.*s", (int)s.length, s.data);
      walk_t w = {.module = module,
                  .fname = fname,
                  .part_ops = part_ops,
                  .max_ops = max_ops,
                  .kernels_whole = kernels_whole};
      eddy_ptrmap_init(&w.r.set);
      MlirRegion reg = mlirOperationGetRegion(op, 0);
      for (MlirBlock b = mlirRegionGetFirstBlock(reg);
           !st && !mlirBlockIsNull(b); b = mlirBlockGetNextInRegion(b))
        st = outline_block(&w, b);
      eddy_ptrmap_destroy(&w.r.set);
      free(w.r.ops);
    }
    op = next;
  }
  return st;
}

eddy_status_t cpu_outline_span(MlirModule module, MlirOperation first,
                               MlirOperation last, const char *name,
                               MlirOperation *out_call) {
  range_t r = {.block = mlirOperationGetBlock(first)};
  eddy_ptrmap_init(&r.set);
  eddy_status_t st = NULL;
  for (MlirOperation op = first;; op = mlirOperationGetNextInBlock(op)) {
    if (r.n == r.cap) {
      size_t cap = r.cap ? 2 * r.cap : 64;
      MlirOperation *p = realloc(r.ops, cap * sizeof *p);
      if (!p) {
        st = oom();
        break;
      }
      r.ops = p;
      r.cap = cap;
    }
    r.ops[r.n++] = op;
    eddy_ptrmap_put(&r.set, op.ptr, (void *)1);
    if (mlirOperationEqual(op, last))
      break;
  }
  if (!st)
    st = outline_range(module, &r, name, out_call);
  eddy_ptrmap_destroy(&r.set);
  free(r.ops);
  return st;
}
