/// Reading a binary GraphDef with protobuf-c.
///
/// Before protobuf-c unpacks the bytes, one pass over the wire format checks
/// them against the schema's descriptors. protobuf-c recurses once per
/// nested message with no limit, so a hostile file nesting attribute values
/// a million deep would exhaust the stack; the check bounds the depth first.
/// It also explains a rejection, which protobuf-c cannot: where the bytes
/// stop being protobuf, or which field has the wrong wire type (the usual
/// sign of another message type, such as a SavedModel).
#include "dialects/tf/tf_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct wire_check {
  const char *name; ///< file name for messages
  const uint8_t *data;
  size_t len;
} wire_check_t;

/// Reads a varint at *pos (< end); false when it runs past end or is longer
/// than 10 bytes.
static bool read_varint(const uint8_t *data, size_t *pos, size_t end,
                        uint64_t *out) {
  uint64_t v = 0;
  for (unsigned shift = 0; shift < 70; shift += 7) {
    if (*pos >= end)
      return false;
    uint8_t b = data[(*pos)++];
    if (shift < 64)
      v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *out = v;
      return true;
    }
  }
  return false;
}

static const char *wire_type_name(unsigned wt) {
  switch (wt) {
  case 0:
    return "a varint";
  case 1:
    return "a 64-bit value";
  case 2:
    return "a length-delimited value";
  case 5:
    return "a 32-bit value";
  default:
    return "an invalid wire type";
  }
}

/// The wire type a field of this type is written with when not packed.
static unsigned expected_wire_type(ProtobufCType t) {
  switch (t) {
  case PROTOBUF_C_TYPE_INT32:
  case PROTOBUF_C_TYPE_SINT32:
  case PROTOBUF_C_TYPE_UINT32:
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_BOOL:
  case PROTOBUF_C_TYPE_ENUM:
    return 0;
  case PROTOBUF_C_TYPE_SFIXED64:
  case PROTOBUF_C_TYPE_FIXED64:
  case PROTOBUF_C_TYPE_DOUBLE:
    return 1;
  case PROTOBUF_C_TYPE_SFIXED32:
  case PROTOBUF_C_TYPE_FIXED32:
  case PROTOBUF_C_TYPE_FLOAT:
    return 5;
  case PROTOBUF_C_TYPE_STRING:
  case PROTOBUF_C_TYPE_BYTES:
  case PROTOBUF_C_TYPE_MESSAGE:
    return 2;
  }
  return 2;
}

static eddy_status_t not_graphdef(const wire_check_t *wc, size_t off,
                                  const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static eddy_status_t not_graphdef(const wire_check_t *wc, size_t off,
                                  const char *fmt, ...) {
  char detail[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  return eddy_status_create_at(EDDY_ERR_INVALID_ARGUMENT, wc->name,
                               "not a TensorFlow GraphDef: at byte %zu of "
                               "%zu, %s",
                               off, wc->len, detail);
}

/// Checks the fields in [start, end) as a message of type d at depth.
static eddy_status_t check_message(const wire_check_t *wc,
                                   const ProtobufCMessageDescriptor *d,
                                   size_t start, size_t end, int depth) {
  size_t pos = start;
  while (pos < end) {
    size_t field_off = pos;
    uint64_t key;
    if (!read_varint(wc->data, &pos, end, &key))
      return not_graphdef(wc, field_off, "the data ends inside a field key");
    uint64_t field = key >> 3;
    unsigned wt = (unsigned)(key & 7);
    if (field == 0 || field > 536870911u)
      return not_graphdef(wc, field_off,
                          "a field number is out of range (not protobuf "
                          "data)");
    const ProtobufCFieldDescriptor *fd =
        protobuf_c_message_descriptor_get_field(d, (unsigned)field);
    if (fd) {
      unsigned want = expected_wire_type(fd->type);
      // Repeated scalars may also come packed (length-delimited).
      bool packed_ok = wt == 2 && fd->label == PROTOBUF_C_LABEL_REPEATED &&
                       want != 2;
      if (wt != want && !packed_ok)
        return not_graphdef(wc, field_off,
                            "field %u (%s of %s) is %s, expected %s",
                            (unsigned)field, fd->name, d->name,
                            wire_type_name(wt), wire_type_name(want));
    }
    switch (wt) {
    case 0: {
      uint64_t v;
      if (!read_varint(wc->data, &pos, end, &v))
        return not_graphdef(wc, field_off,
                            "field %u: the data ends inside a varint",
                            (unsigned)field);
      break;
    }
    case 1:
    case 5: {
      size_t n = wt == 1 ? 8 : 4;
      if (end - pos < n)
        return not_graphdef(wc, field_off,
                            "field %u: the data ends inside a fixed-size "
                            "value",
                            (unsigned)field);
      pos += n;
      break;
    }
    case 2: {
      uint64_t n;
      if (!read_varint(wc->data, &pos, end, &n) || n > end - pos)
        return not_graphdef(wc, field_off,
                            "field %u: its length runs past the end of the "
                            "data (truncated file?)",
                            (unsigned)field);
      if (fd && fd->type == PROTOBUF_C_TYPE_MESSAGE) {
        if (depth + 1 > EDDY_TF_MAX_MESSAGE_DEPTH)
          return not_graphdef(wc, field_off,
                              "messages are nested more than %d deep",
                              EDDY_TF_MAX_MESSAGE_DEPTH);
        EDDY_RETURN_IF_ERROR(check_message(
            wc, fd->descriptor, pos, pos + (size_t)n, depth + 1));
      }
      pos += (size_t)n;
      break;
    }
    default:
      return not_graphdef(wc, field_off, "field %u has %s (not protobuf "
                          "data)",
                          (unsigned)field, wire_type_name(wt));
    }
  }
  return NULL;
}

eddy_status_t eddy_tf_graphdef_unpack(const char *name, const void *data,
                                      size_t len,
                                      Tensorflow__GraphDef **out_gd) {
  *out_gd = NULL;
  wire_check_t wc = {name, data, len};
  EDDY_RETURN_IF_ERROR(check_message(&wc, &tensorflow__graph_def__descriptor,
                                     0, len, 0));
  Tensorflow__GraphDef *gd = tensorflow__graph_def__unpack(NULL, len, data);
  if (!gd)
    return eddy_status_create_at(EDDY_ERR_INVALID_ARGUMENT, name,
                                 "not a TensorFlow GraphDef: protobuf-c "
                                 "could not decode it");
  *out_gd = gd;
  return NULL;
}

void eddy_tf_graphdef_free(Tensorflow__GraphDef *gd) {
  if (gd)
    tensorflow__graph_def__free_unpacked(gd, NULL);
}

const Tensorflow__AttrValue *eddy_tf_attr_find(Tensorflow__AttrEntry **entries,
                                               size_t n, const char *key) {
  for (size_t i = n; i-- > 0;)
    if (entries[i]->key && strcmp(entries[i]->key, key) == 0)
      return entries[i]->value;
  return NULL;
}
