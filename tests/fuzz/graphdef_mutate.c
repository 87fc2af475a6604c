/// A structure-aware mutator for the graphdef fuzz target
/// (docs/reliability.md, "Mutating GraphDefs as graphs").
///
/// Byte flips mostly break a GraphDef's protobuf framing, so most of what
/// they make is refused by the parser, before eddy's importer has seen a
/// node. This mutator parses the input as a GraphDef (dialects/tf/proto),
/// changes it as a graph, and serializes it again: nodes dropped,
/// duplicated (under their own name too), reordered; inputs rewired to
/// other nodes' outputs or control edges, dropped or added; ops replaced by
/// another node's or by a control-flow op; attributes copied from another
/// node, dropped, or set to edge values (dtypes, ints, shapes, a tensor's
/// dtype or shape, a function name); functions dropped from the library or
/// their signatures cut. The graph's nodes or one function's body is the
/// list mutated. The result stays a well-formed protobuf, so the importer,
/// functionalize and legalize-tf see wrong graphs rather than wrong bytes.
#define _POSIX_C_SOURCE 200809L

#include "tests/fuzz/fuzz.h"

#include "graph.pb-c.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mut {
  uint64_t rng;
  Tensorflow__GraphDef *g;
  Tensorflow__NodeDef ***nodes; ///< the list mutated: the graph's or a body's
  size_t *num_nodes;
} mut_t;

static uint64_t next(mut_t *m) { return eddy_fuzz_rng(&m->rng); }

static size_t below(mut_t *m, size_t n) { return n ? next(m) % n : 0; }

/// Sets a string field that protobuf-c unpacked (or left at its default).
static bool set_str(char **field, const char *s) {
  char *copy = strdup(s);
  if (!copy)
    return false;
  if (*field && *field != protobuf_c_empty_string)
    free(*field);
  *field = copy;
  return true;
}

/// A deep copy of a message, through its bytes; NULL on out of memory.
static void *copy_msg(const void *msg) {
  const ProtobufCMessage *src = msg;
  size_t n = protobuf_c_message_get_packed_size(src);
  uint8_t *buf = malloc(n ? n : 1);
  if (!buf)
    return NULL;
  protobuf_c_message_pack(src, buf);
  ProtobufCMessage *c =
      protobuf_c_message_unpack(src->descriptor, NULL, n, buf);
  free(buf);
  return c;
}

static Tensorflow__NodeDef *some_node(mut_t *m) {
  return *m->num_nodes ? (*m->nodes)[below(m, *m->num_nodes)] : NULL;
}

/// An input reference to another node of the list: a name, an output of
/// it, its control edge, or (in a function) a copy of an input some node
/// has, which has the function's own form ("arg", "node:out:0").
static bool some_input(mut_t *m, char *out, size_t cap) {
  Tensorflow__NodeDef *n = some_node(m);
  if (!n)
    return false;
  switch (below(m, 5)) {
  case 0:
    snprintf(out, cap, "^%s", n->name);
    break;
  case 1:
    snprintf(out, cap, "%s:%zu", n->name, below(m, 3));
    break;
  case 2:
  case 3:
    if (n->n_input) {
      snprintf(out, cap, "%s", n->input[below(m, n->n_input)]);
      break;
    }
    // fall through
  default:
    snprintf(out, cap, "%s", n->name);
    break;
  }
  return true;
}

/// ---- Nodes -----------------------------------------------------------------

static bool drop_node(mut_t *m) {
  size_t n = *m->num_nodes;
  if (n < 2)
    return false;
  size_t i = below(m, n);
  tensorflow__node_def__free_unpacked((*m->nodes)[i], NULL);
  memmove(&(*m->nodes)[i], &(*m->nodes)[i + 1], (n - i - 1) * sizeof(void *));
  (*m->num_nodes)--;
  return true;
}

static bool dup_node(mut_t *m) {
  Tensorflow__NodeDef *n = some_node(m);
  if (!n)
    return false;
  Tensorflow__NodeDef **more =
      realloc(*m->nodes, (*m->num_nodes + 1) * sizeof *more);
  if (!more)
    return false;
  *m->nodes = more;
  Tensorflow__NodeDef *c = copy_msg(n);
  if (!c)
    return false;
  if (below(m, 3)) { // a new name; else a duplicate name
    char name[256];
    snprintf(name, sizeof name, "%.200s_dup%" PRIu64, n->name, next(m) % 1000);
    set_str(&c->name, name);
  }
  (*m->nodes)[(*m->num_nodes)++] = c;
  return true;
}

static bool swap_nodes(mut_t *m) {
  size_t n = *m->num_nodes;
  if (n < 2)
    return false;
  size_t i = below(m, n), j = below(m, n);
  Tensorflow__NodeDef *t = (*m->nodes)[i];
  (*m->nodes)[i] = (*m->nodes)[j];
  (*m->nodes)[j] = t;
  return true;
}

static bool rewire(mut_t *m) {
  Tensorflow__NodeDef *n = some_node(m);
  char in[320];
  if (!n || !n->n_input || !some_input(m, in, sizeof in))
    return false;
  return set_str(&n->input[below(m, n->n_input)], in);
}

static bool drop_input(mut_t *m) {
  Tensorflow__NodeDef *n = some_node(m);
  if (!n || !n->n_input)
    return false;
  size_t i = below(m, n->n_input);
  if (n->input[i] != protobuf_c_empty_string)
    free(n->input[i]);
  memmove(&n->input[i], &n->input[i + 1],
          (n->n_input - i - 1) * sizeof(char *));
  n->n_input--;
  return true;
}

static bool add_input(mut_t *m) {
  Tensorflow__NodeDef *n = some_node(m);
  char in[320];
  if (!n || !some_input(m, in, sizeof in))
    return false;
  char **more = realloc(n->input, (n->n_input + 1) * sizeof *more);
  if (!more)
    return false;
  n->input = more;
  // data inputs go before the control inputs, as TensorFlow writes them;
  // now and then after them.
  size_t at = n->n_input;
  while (at > 0 && n->input[at - 1][0] == '^' && below(m, 4))
    at--;
  char *s = strdup(in);
  if (!s)
    return false;
  memmove(&n->input[at + 1], &n->input[at], (n->n_input - at) * sizeof(char *));
  n->input[at] = s;
  n->n_input++;
  return true;
}

static bool change_op(mut_t *m) {
  static const char *const ops[] = {"Switch",
                                    "Merge",
                                    "Enter",
                                    "Exit",
                                    "NextIteration",
                                    "LoopCond",
                                    "Identity",
                                    "IdentityN",
                                    "While",
                                    "StatelessWhile",
                                    "If",
                                    "StatelessIf",
                                    "PartitionedCall",
                                    "StatefulPartitionedCall",
                                    "NoOp",
                                    "Const",
                                    "Placeholder",
                                    "TensorListReserve",
                                    "TensorListPushBack",
                                    "TensorListStack",
                                    "TensorArrayV3",
                                    "StackPushV2",
                                    "Add",
                                    "MatMul"};
  Tensorflow__NodeDef *n = some_node(m), *o = some_node(m);
  if (!n)
    return false;
  return set_str(&n->op, below(m, 2) && o
                             ? o->op
                             : ops[below(m, sizeof ops / sizeof *ops)]);
}

/// ---- Attributes ------------------------------------------------------------

static Tensorflow__AttrEntry *some_attr(mut_t *m, Tensorflow__NodeDef *n) {
  return n && n->n_attr ? n->attr[below(m, n->n_attr)] : NULL;
}

/// Node n's attribute takes a copy of another node's value (of the same
/// name now and then, or of any).
static bool copy_attr(mut_t *m) {
  Tensorflow__NodeDef *n = some_node(m), *o = some_node(m);
  Tensorflow__AttrEntry *dst = some_attr(m, n), *src = NULL;
  if (!dst || !o)
    return false;
  for (size_t k = 0; k < o->n_attr && !src; k++)
    if (strcmp(o->attr[k]->key, dst->key) == 0 && below(m, 2))
      src = o->attr[k];
  if (!src)
    src = some_attr(m, o);
  if (!src || src == dst || !src->value)
    return false;
  Tensorflow__AttrValue *v = copy_msg(src->value);
  if (!v)
    return false;
  if (dst->value)
    tensorflow__attr_value__free_unpacked(dst->value, NULL);
  dst->value = v;
  return true;
}

static bool drop_attr(mut_t *m) {
  Tensorflow__NodeDef *n = some_node(m);
  if (!n || !n->n_attr)
    return false;
  size_t i = below(m, n->n_attr);
  tensorflow__attr_entry__free_unpacked(n->attr[i], NULL);
  memmove(&n->attr[i], &n->attr[i + 1], (n->n_attr - i - 1) * sizeof(void *));
  n->n_attr--;
  return true;
}

static int64_t edge_int(mut_t *m) {
  static const int64_t v[] = {-1,
                              0,
                              1,
                              2,
                              3,
                              64,
                              65,
                              -2,
                              INT32_MAX,
                              INT32_MIN,
                              (int64_t)1 << 32,
                              INT64_MAX,
                              INT64_MIN,
                              (int64_t)1 << 40};
  return v[below(m, sizeof v / sizeof *v)];
}

static Tensorflow__DataType edge_dtype(mut_t *m) {
  static const int v[] = {0,  1,  2,  3,  4,  5,  6,   7,   8,   9,   10, 14,
                          17, 19, 20, 21, 22, 23, 101, 103, 121, 999, -1};
  return (Tensorflow__DataType)v[below(m, sizeof v / sizeof *v)];
}

static void tweak_shape(mut_t *m, Tensorflow__TensorShapeProto *s) {
  if (!s)
    return;
  if (s->n_dim && below(m, 4)) {
    s->dim[below(m, s->n_dim)]->size = edge_int(m);
  } else if (s->n_dim && below(m, 2)) {
    s->n_dim--; // one dim fewer
    protobuf_c_message_free_unpacked(&s->dim[s->n_dim]->base, NULL);
  } else {
    s->unknown_rank = !s->unknown_rank;
  }
}

/// One attribute of a node set to an edge value of its own kind.
static bool tweak_attr(mut_t *m) {
  Tensorflow__NodeDef *n = some_node(m);
  Tensorflow__AttrEntry *e = some_attr(m, n);
  if (!e || !e->value)
    return false;
  Tensorflow__AttrValue *v = e->value;
  switch (v->value_case) {
  case TENSORFLOW__ATTR_VALUE__VALUE_I:
    v->i = edge_int(m);
    return true;
  case TENSORFLOW__ATTR_VALUE__VALUE_B:
    v->b = !v->b;
    return true;
  case TENSORFLOW__ATTR_VALUE__VALUE_F: {
    static const float f[] = {0.0f,    -1.0f,       1e30f,
                              -1e-30f, 1.0f / 0.0f, 0.0f / 0.0f};
    v->f = f[below(m, sizeof f / sizeof *f)];
    return true;
  }
  case TENSORFLOW__ATTR_VALUE__VALUE_TYPE:
    v->type = edge_dtype(m);
    return true;
  case TENSORFLOW__ATTR_VALUE__VALUE_SHAPE:
    tweak_shape(m, v->shape);
    return true;
  case TENSORFLOW__ATTR_VALUE__VALUE_TENSOR:
    if (!v->tensor)
      return false;
    if (below(m, 2))
      v->tensor->dtype = edge_dtype(m);
    else
      tweak_shape(m, v->tensor->tensor_shape);
    return true;
  case TENSORFLOW__ATTR_VALUE__VALUE_FUNC: {
    Tensorflow__FunctionDefLibrary *lib = m->g->library;
    if (!v->func || !lib || !lib->n_function)
      return false;
    Tensorflow__FunctionDef *f = lib->function[below(m, lib->n_function)];
    return f->signature && set_str(&v->func->name, f->signature->name);
  }
  case TENSORFLOW__ATTR_VALUE__VALUE_LIST:
    if (v->list && v->list->n_type) {
      v->list->type[below(m, v->list->n_type)] = edge_dtype(m);
      return true;
    }
    if (v->list && v->list->n_i) {
      v->list->i[below(m, v->list->n_i)] = edge_int(m);
      return true;
    }
    if (v->list && v->list->n_shape) {
      tweak_shape(m, v->list->shape[below(m, v->list->n_shape)]);
      return true;
    }
    return false;
  default:
    return false;
  }
}

/// ---- The library -----------------------------------------------------------

static bool drop_function(mut_t *m) {
  Tensorflow__FunctionDefLibrary *lib = m->g->library;
  if (!lib || !lib->n_function)
    return false;
  size_t i = below(m, lib->n_function);
  tensorflow__function_def__free_unpacked(lib->function[i], NULL);
  memmove(&lib->function[i], &lib->function[i + 1],
          (lib->n_function - i - 1) * sizeof(void *));
  lib->n_function--;
  // the list mutated may have been that function's body
  m->nodes = &m->g->node;
  m->num_nodes = &m->g->n_node;
  return true;
}

/// A function's signature loses an argument or a result.
static bool cut_signature(mut_t *m) {
  Tensorflow__FunctionDefLibrary *lib = m->g->library;
  if (!lib || !lib->n_function)
    return false;
  Tensorflow__OpDef *s = lib->function[below(m, lib->n_function)]->signature;
  if (!s)
    return false;
  size_t *count = below(m, 2) ? &s->n_input_arg : &s->n_output_arg;
  Tensorflow__OpDef__ArgDef **args =
      count == &s->n_input_arg ? s->input_arg : s->output_arg;
  if (!*count)
    return false;
  (*count)--;
  protobuf_c_message_free_unpacked(&args[*count]->base, NULL);
  return true;
}

/// ---- Entry -----------------------------------------------------------------

size_t eddy_fuzz_mutate(uint8_t *data, size_t size, size_t max_size,
                        uint64_t seed) {
  Tensorflow__GraphDef *g = tensorflow__graph_def__unpack(NULL, size, data);
  if (!g)
    return 0;
  mut_t m = {.rng = seed, .g = g, .nodes = &g->node, .num_nodes = &g->n_node};
  Tensorflow__FunctionDefLibrary *lib = g->library;
  if (lib && lib->n_function && below(&m, 2)) { // a function's body
    Tensorflow__FunctionDef *f = lib->function[below(&m, lib->n_function)];
    m.nodes = &f->node_def;
    m.num_nodes = &f->n_node_def;
  }
  bool (*const kinds[])(mut_t *) = {
      drop_node,  dup_node,   swap_nodes,    rewire,       rewire,
      drop_input, add_input,  change_op,     copy_attr,    drop_attr,
      tweak_attr, tweak_attr, drop_function, cut_signature};
  size_t nk = sizeof kinds / sizeof *kinds;
  bool changed = false;
  // one to three mutations; a kind that does not apply tries another
  for (size_t k = 0, want = 1 + below(&m, 3), tries = 0; k < want && tries < 16;
       tries++)
    if (kinds[below(&m, nk)](&m)) {
      changed = true;
      k++;
    }
  size_t n = 0;
  if (changed) {
    n = tensorflow__graph_def__get_packed_size(g);
    if (n <= max_size)
      tensorflow__graph_def__pack(g, data);
    else
      n = 0;
  }
  tensorflow__graph_def__free_unpacked(g, NULL);
  return n;
}
