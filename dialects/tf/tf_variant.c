/// Types of TensorFlow's variant values that eddy can represent: a
/// TensorList of TensorLists (the accumulators of nested while_loops, seed
/// 000) and an Optional of one tensor (a cond inside a while_loop keeps its
/// intermediates in Optionals for the gradient).
///
/// The GraphDef types both as "variant", so the types are found from the
/// graph itself: an Optional's dtype from its OptionalFromValue /
/// OptionalGetValue nodes, and the element of a variant list from the items
/// pushed onto it: the output j of a While whose input j is an
/// EmptyTensorList / TensorListReserve of a known element dtype (an inner
/// loop's accumulator), or an Optional (through an If or directly). When the
/// graph disagrees with itself (two dtypes), nothing is guessed and the
/// importer reports the list as untyped.
#include "dialects/tf/tf_import_internal.h"

#define DT(x) TENSORFLOW__DATA_TYPE__DT_##x

typedef struct tf_scan {
  int dtype; ///< the one DT seen so far, 0 none, -1 conflicting
} tf_scan_t;

static void scan_note(tf_scan_t *sc, int dt) {
  if (sc->dtype == 0)
    sc->dtype = dt;
  else if (sc->dtype != dt)
    sc->dtype = -1;
}

static const Tensorflow__AttrValue *
node_attr(const Tensorflow__NodeDef *n, const char *name) {
  return eddy_tf_attr_find(n->attr, n->n_attr, name);
}

static int attr_type(const Tensorflow__NodeDef *n, const char *name) {
  const Tensorflow__AttrValue *v = node_attr(n, name);
  return v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_TYPE
             ? (int)v->type
             : 0;
}

/// The single dtype of a list(type) attribute; 0 otherwise.
static int attr_one_type(const Tensorflow__NodeDef *n, const char *name) {
  const Tensorflow__AttrValue *v = node_attr(n, name);
  if (!v || v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_LIST ||
      v->list->n_type != 1)
    return 0;
  return (int)v->list->type[0];
}

/// The node of defs[0..n) that ref ("node", "node:i", "node:out:i") names;
/// *out_index is the last numeric component (0 when none).
static const Tensorflow__NodeDef *find_ref(Tensorflow__NodeDef *const *defs,
                                           size_t n, const char *ref,
                                           uint32_t *out_index) {
  if (!ref || ref[0] == '^')
    return NULL;
  const char *colon = strchr(ref, ':');
  size_t len = colon ? (size_t)(colon - ref) : strlen(ref);
  const char *last = strrchr(ref, ':');
  *out_index = 0;
  if (last) {
    uint32_t v = 0;
    for (const char *p = last + 1; *p >= '0' && *p <= '9'; p++)
      v = v * 10 + (uint32_t)(*p - '0');
    *out_index = v;
  }
  for (size_t i = 0; i < n; i++) {
    const char *name = defs[i]->name;
    if (name && strlen(name) == len && strncmp(name, ref, len) == 0)
      return defs[i];
  }
  return NULL;
}

static bool op_is(const Tensorflow__NodeDef *n, const char *op) {
  return n && n->op && strcmp(n->op, op) == 0;
}

/// Optionals: what their producers and consumers say.
static void scan_optionals(Tensorflow__NodeDef *const *defs, size_t n,
                           tf_scan_t *sc) {
  for (size_t i = 0; i < n; i++) {
    const Tensorflow__NodeDef *d = defs[i];
    if (op_is(d, "OptionalFromValue")) {
      int dt = attr_one_type(d, "Toutput_types");
      scan_note(sc, dt ? dt : -1);
    } else if (op_is(d, "OptionalGetValue")) {
      int dt = attr_one_type(d, "output_types");
      scan_note(sc, dt ? dt : -1);
    }
  }
}

/// Variant lists: the items pushed or set. kind: 1 = a list of lists
/// (dtype of the inner list), 2 = a list of Optionals.
static void scan_items(Tensorflow__NodeDef *const *defs, size_t n,
                       tf_scan_t *lists, int *kinds) {
  for (size_t i = 0; i < n; i++) {
    const Tensorflow__NodeDef *d = defs[i];
    size_t item;
    if (op_is(d, "TensorListPushBack"))
      item = 1;
    else if (op_is(d, "TensorListSetItem"))
      item = 2;
    else
      continue;
    if (attr_type(d, "element_dtype") != DT(VARIANT) || d->n_input <= item)
      continue;
    uint32_t j = 0;
    const Tensorflow__NodeDef *p = find_ref(defs, n, d->input[item], &j);
    if (op_is(p, "While") || op_is(p, "StatelessWhile")) {
      uint32_t k = 0;
      const Tensorflow__NodeDef *q =
          j < p->n_input ? find_ref(defs, n, p->input[j], &k) : NULL;
      int dt = op_is(q, "EmptyTensorList") || op_is(q, "TensorListReserve")
                   ? attr_type(q, "element_dtype")
                   : 0;
      if (dt && dt != DT(VARIANT)) {
        scan_note(lists, dt);
        *kinds |= 1;
      } else {
        lists->dtype = -1; // deeper nesting, or not traceable
      }
    } else if (op_is(p, "If") || op_is(p, "StatelessIf") ||
               op_is(p, "OptionalFromValue") || op_is(p, "OptionalNone")) {
      *kinds |= 2;
    } else {
      lists->dtype = -1;
    }
  }
}

static void tf_variant_scan(tf_importer_t *im) {
  if (im->variant_scanned)
    return;
  im->variant_scanned = true;
  const Tensorflow__GraphDef *gd = im->gd;
  tf_scan_t opt = {0}, lists = {0};
  int kinds = 0;
  scan_optionals(gd->node, gd->n_node, &opt);
  scan_items(gd->node, gd->n_node, &lists, &kinds);
  for (size_t f = 0; f < im->num_funcs; f++) {
    const Tensorflow__FunctionDef *fd = im->funcs[f].fdef;
    scan_optionals(fd->node_def, fd->n_node_def, &opt);
    scan_items(fd->node_def, fd->n_node_def, &lists, &kinds);
  }
  eddy_dtype_t dt;
  if (opt.dtype > 0 && eddy_tf_dtype_to_eddy(opt.dtype, &dt))
    im->optional_type = eddy_ir_list_type_get(
        im->ctx, eddy_ir_tensor_type_get(im->ctx, dt, EDDY_RANK_UNKNOWN, NULL));
  if (kinds == 1 && lists.dtype > 0 && eddy_tf_dtype_to_eddy(lists.dtype, &dt))
    im->variant_elem = eddy_ir_list_type_get(
        im->ctx, eddy_ir_tensor_type_get(im->ctx, dt, EDDY_RANK_UNKNOWN, NULL));
  else if (kinds == 2 && lists.dtype == 0)
    im->variant_elem = im->optional_type;
}

const eddy_type_t *tf_variant_list_elem(tf_importer_t *im) {
  tf_variant_scan(im);
  return im->variant_elem;
}

const eddy_type_t *tf_optional_type(tf_importer_t *im) {
  tf_variant_scan(im);
  return im->optional_type;
}
