/// Builds GraphDefs in memory for the tf unit tests: nodes, attributes and
/// library functions as protobuf-c structs, packed to bytes for the
/// importer. Everything is allocated through the builder and freed by
/// gb_free.
#ifndef EDDY_TESTS_UNIT_TF_TF_TEST_UTIL_H
#define EDDY_TESTS_UNIT_TF_TF_TEST_UTIL_H

#include "dialects/tf/tf_internal.h"

#include <stdlib.h>
#include <string.h>

#define GB_MAX_ALLOCS 4096
#define GB_MAX_NODES 128

typedef struct gb {
  void *allocs[GB_MAX_ALLOCS];
  size_t num_allocs;
  Tensorflow__GraphDef g;
  Tensorflow__FunctionDefLibrary lib;
} gb_t;

static inline void *gb_alloc(gb_t *b, size_t n) {
  void *p = calloc(1, n ? n : 1);
  if (!p || b->num_allocs == GB_MAX_ALLOCS)
    abort();
  b->allocs[b->num_allocs++] = p;
  return p;
}

static inline char *gb_str(gb_t *b, const char *s) {
  char *p = gb_alloc(b, strlen(s) + 1);
  memcpy(p, s, strlen(s));
  return p;
}

static inline void gb_init(gb_t *b) {
  memset(b, 0, sizeof *b);
  tensorflow__graph_def__init(&b->g);
  tensorflow__function_def_library__init(&b->lib);
  b->g.node = gb_alloc(b, GB_MAX_NODES * sizeof(Tensorflow__NodeDef *));
}

static inline void gb_free(gb_t *b) {
  for (size_t i = 0; i < b->num_allocs; i++)
    free(b->allocs[i]);
  b->num_allocs = 0;
}

/// A node appended to *list (capacity GB_MAX_NODES); inputs is a
/// comma-separated list ("x,y:1,^z") or "".
static inline Tensorflow__NodeDef *gb_node_in(gb_t *b,
                                              Tensorflow__NodeDef **list,
                                              size_t *n, const char *name,
                                              const char *op,
                                              const char *inputs) {
  if (*n == GB_MAX_NODES)
    abort();
  Tensorflow__NodeDef *nd = gb_alloc(b, sizeof *nd);
  tensorflow__node_def__init(nd);
  nd->name = gb_str(b, name);
  nd->op = gb_str(b, op);
  nd->attr = gb_alloc(b, 32 * sizeof(Tensorflow__AttrEntry *));
  nd->input = gb_alloc(b, 32 * sizeof(char *));
  const char *p = inputs;
  while (p && *p) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    char *in = gb_alloc(b, len + 1);
    memcpy(in, p, len);
    nd->input[nd->n_input++] = in;
    p = comma ? comma + 1 : NULL;
  }
  list[(*n)++] = nd;
  return nd;
}

static inline Tensorflow__NodeDef *gb_node(gb_t *b, const char *name,
                                           const char *op,
                                           const char *inputs) {
  return gb_node_in(b, b->g.node, &b->g.n_node, name, op, inputs);
}

static inline void gb_attr(gb_t *b, Tensorflow__NodeDef *nd, const char *key,
                           Tensorflow__AttrValue *v) {
  Tensorflow__AttrEntry *e = gb_alloc(b, sizeof *e);
  tensorflow__attr_entry__init(e);
  e->key = gb_str(b, key);
  e->value = v;
  nd->attr[nd->n_attr++] = e;
}

static inline Tensorflow__AttrValue *gb_value(gb_t *b,
                                              Tensorflow__AttrValue__ValueCase c) {
  Tensorflow__AttrValue *v = gb_alloc(b, sizeof *v);
  tensorflow__attr_value__init(v);
  v->value_case = c;
  return v;
}

static inline Tensorflow__AttrValue *gb_type(gb_t *b, int dt) {
  Tensorflow__AttrValue *v = gb_value(b, TENSORFLOW__ATTR_VALUE__VALUE_TYPE);
  v->type = dt;
  return v;
}

static inline Tensorflow__AttrValue *gb_int(gb_t *b, int64_t i) {
  Tensorflow__AttrValue *v = gb_value(b, TENSORFLOW__ATTR_VALUE__VALUE_I);
  v->i = i;
  return v;
}

static inline Tensorflow__AttrValue *gb_string(gb_t *b, const char *s) {
  Tensorflow__AttrValue *v = gb_value(b, TENSORFLOW__ATTR_VALUE__VALUE_S);
  v->s.data = (uint8_t *)gb_str(b, s);
  v->s.len = strlen(s);
  return v;
}

static inline Tensorflow__AttrValue *gb_func(gb_t *b, const char *name) {
  Tensorflow__AttrValue *v = gb_value(b, TENSORFLOW__ATTR_VALUE__VALUE_FUNC);
  v->func = gb_alloc(b, sizeof *v->func);
  tensorflow__name_attr_list__init(v->func);
  v->func->name = gb_str(b, name);
  return v;
}

static inline Tensorflow__TensorShapeProto *gb_shape_proto(gb_t *b,
                                                           const int64_t *dims,
                                                           size_t n) {
  Tensorflow__TensorShapeProto *s = gb_alloc(b, sizeof *s);
  tensorflow__tensor_shape_proto__init(s);
  s->dim = gb_alloc(b, (n + 1) * sizeof *s->dim);
  for (size_t i = 0; i < n; i++) {
    s->dim[i] = gb_alloc(b, sizeof **s->dim);
    tensorflow__tensor_shape_proto__dim__init(s->dim[i]);
    s->dim[i]->size = dims[i];
  }
  s->n_dim = n;
  return s;
}

static inline Tensorflow__AttrValue *gb_shape(gb_t *b, const int64_t *dims,
                                              size_t n) {
  Tensorflow__AttrValue *v = gb_value(b, TENSORFLOW__ATTR_VALUE__VALUE_SHAPE);
  v->shape = gb_shape_proto(b, dims, n);
  return v;
}

static inline Tensorflow__AttrValue *gb_type_list(gb_t *b, const int *dts,
                                                  size_t n) {
  Tensorflow__AttrValue *v = gb_value(b, TENSORFLOW__ATTR_VALUE__VALUE_LIST);
  v->list = gb_alloc(b, sizeof *v->list);
  tensorflow__attr_value__list_value__init(v->list);
  v->list->type = gb_alloc(b, (n + 1) * sizeof *v->list->type);
  for (size_t i = 0; i < n; i++)
    v->list->type[i] = dts[i];
  v->list->n_type = n;
  return v;
}

/// A scalar constant tensor of dtype dt holding v (float or int dtypes).
static inline Tensorflow__AttrValue *gb_scalar(gb_t *b, int dt, double v) {
  Tensorflow__AttrValue *a = gb_value(b, TENSORFLOW__ATTR_VALUE__VALUE_TENSOR);
  Tensorflow__TensorProto *t = gb_alloc(b, sizeof *t);
  tensorflow__tensor_proto__init(t);
  t->dtype = dt;
  if (dt == TENSORFLOW__DATA_TYPE__DT_FLOAT) {
    t->float_val = gb_alloc(b, sizeof(float));
    t->float_val[0] = (float)v;
    t->n_float_val = 1;
  } else {
    t->int_val = gb_alloc(b, sizeof(int32_t));
    t->int_val[0] = (int32_t)v;
    t->n_int_val = 1;
  }
  a->tensor = t;
  return a;
}

/// A Const node of dtype dt with a scalar value.
static inline Tensorflow__NodeDef *gb_const(gb_t *b, const char *name, int dt,
                                            double v, const char *inputs) {
  Tensorflow__NodeDef *nd = gb_node(b, name, "Const", inputs);
  gb_attr(b, nd, "dtype", gb_type(b, dt));
  gb_attr(b, nd, "value", gb_scalar(b, dt, v));
  return nd;
}

/// A node with attribute T = dt (none when dt < 0).
static inline Tensorflow__NodeDef *gb_op(gb_t *b, const char *name,
                                         const char *op, const char *inputs,
                                         int dt) {
  Tensorflow__NodeDef *nd = gb_node(b, name, op, inputs);
  if (dt >= 0)
    gb_attr(b, nd, "T", gb_type(b, dt));
  return nd;
}

static inline Tensorflow__NodeDef *gb_placeholder(gb_t *b, const char *name,
                                                  int dt, const int64_t *dims,
                                                  size_t rank) {
  Tensorflow__NodeDef *nd = gb_node(b, name, "Placeholder", "");
  gb_attr(b, nd, "dtype", gb_type(b, dt));
  gb_attr(b, nd, "shape", gb_shape(b, dims, rank));
  return nd;
}

static inline Tensorflow__OpDef__ArgDef *gb_arg(gb_t *b, const char *name,
                                                int dt) {
  Tensorflow__OpDef__ArgDef *a = gb_alloc(b, sizeof *a);
  tensorflow__op_def__arg_def__init(a);
  a->name = gb_str(b, name);
  a->type = dt;
  return a;
}

/// A library function with the given input and output args (names and
/// dtypes); add nodes with gb_fnode and results with gb_ret.
static inline Tensorflow__FunctionDef *gb_function(gb_t *b, const char *name,
                                                   const char *const *ins,
                                                   const int *in_dts,
                                                   size_t nin,
                                                   const char *const *outs,
                                                   const int *out_dts,
                                                   size_t nout) {
  if (!b->lib.function) {
    b->lib.function = gb_alloc(b, 16 * sizeof(Tensorflow__FunctionDef *));
    b->g.library = &b->lib;
  }
  Tensorflow__FunctionDef *f = gb_alloc(b, sizeof *f);
  tensorflow__function_def__init(f);
  f->signature = gb_alloc(b, sizeof *f->signature);
  tensorflow__op_def__init(f->signature);
  f->signature->name = gb_str(b, name);
  f->signature->input_arg = gb_alloc(b, (nin + 1) * sizeof(void *));
  for (size_t i = 0; i < nin; i++)
    f->signature->input_arg[i] = gb_arg(b, ins[i], in_dts[i]);
  f->signature->n_input_arg = nin;
  f->signature->output_arg = gb_alloc(b, (nout + 1) * sizeof(void *));
  for (size_t i = 0; i < nout; i++)
    f->signature->output_arg[i] = gb_arg(b, outs[i], out_dts[i]);
  f->signature->n_output_arg = nout;
  f->node_def = gb_alloc(b, GB_MAX_NODES * sizeof(Tensorflow__NodeDef *));
  f->ret = gb_alloc(b, 16 * sizeof(Tensorflow__StringEntry *));
  b->lib.function[b->lib.n_function++] = f;
  return f;
}

static inline Tensorflow__NodeDef *gb_fnode(gb_t *b, Tensorflow__FunctionDef *f,
                                            const char *name, const char *op,
                                            const char *inputs, int dt) {
  Tensorflow__NodeDef *nd =
      gb_node_in(b, f->node_def, &f->n_node_def, name, op, inputs);
  if (dt >= 0)
    gb_attr(b, nd, "T", gb_type(b, dt));
  return nd;
}

static inline void gb_ret(gb_t *b, Tensorflow__FunctionDef *f, const char *key,
                          const char *value) {
  Tensorflow__StringEntry *e = gb_alloc(b, sizeof *e);
  tensorflow__string_entry__init(e);
  e->key = gb_str(b, key);
  e->value = gb_str(b, value);
  f->ret[f->n_ret++] = e;
}

/// The packed GraphDef (freed with the builder).
static inline uint8_t *gb_pack(gb_t *b, size_t *len) {
  *len = tensorflow__graph_def__get_packed_size(&b->g);
  uint8_t *data = gb_alloc(b, *len);
  tensorflow__graph_def__pack(&b->g, data);
  return data;
}

#endif
