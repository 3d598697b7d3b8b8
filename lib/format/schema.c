/* The file schema: Lance's flattened pre-order Field list -> a tree of struct lnc_field with
 * Arrow types, plus which column each leaf reads (2.1/2.2: one column per leaf, packed
 * structs and blobs count as leaves) and the export to an ArrowSchema. */
#include "reader.h"
#include "../encoding/encoding.h" /* LNC_FSL_MAX_LEVELS: the nesting the take reads */
#include "../arrow/builder.h"
#include "../arrow/format.h"
#include "../util/error.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Fields nested deeper than this are refused: far beyond any real schema (Arrow's own readers
 * stop at 64), and it bounds every recursive walk of the field tree. */
#define LNC_SCHEMA_MAX_DEPTH 64

static char *xstrdup(const char *s) { return strdup(s ? s : ""); }

/* Returns the metadata value of key as a NUL-terminated copy in buf, or NULL. */
static const char *meta_get(Lance__File__Field *f, const char *key, char *buf, size_t cap) {
  for (size_t i = 0; i < f->n_metadata; i++) {
    Lance__File__Field__MetadataEntry *e = f->metadata[i];
    if (e->key && strcmp(e->key, key) == 0) {
      size_t n = e->value.len < cap - 1 ? e->value.len : cap - 1;
      memcpy(buf, e->value.data, n);
      buf[n] = 0;
      return buf;
    }
  }
  return NULL;
}

/* Keeps the field's metadata (the descriptor is freed after open), bounded by the protobuf's
 * own bounds; values that are not text are kept as bytes up to their first NUL. */
static int copy_metadata(struct lnc_field *fld, const Lance__File__Field *pf) {
  if (!pf->n_metadata || pf->n_metadata > INT32_MAX) return 0;
  fld->md_keys = calloc(pf->n_metadata, sizeof *fld->md_keys);
  fld->md_values = calloc(pf->n_metadata, sizeof *fld->md_values);
  if (!fld->md_keys || !fld->md_values) return LNC_ENOMEM;
  for (size_t i = 0; i < pf->n_metadata; i++) {
    const Lance__File__Field__MetadataEntry *e = pf->metadata[i];
    fld->md_keys[i] = xstrdup(e->key);
    fld->md_values[i] = strndup(e->value.data ? (const char *)e->value.data : "", e->value.len);
    fld->n_md = (int32_t)i + 1;
    if (!fld->md_keys[i] || !fld->md_values[i]) return LNC_ENOMEM;
  }
  return 0;
}

static struct lnc_field *field_new(struct lnc_file *f) {
  struct lnc_field *fld = calloc(1, sizeof *fld);
  if (!fld) return NULL;
  struct lnc_field **all = realloc(f->all_fields, (f->n_all_fields + 1) * sizeof *all);
  if (!all) {
    free(fld);
    return NULL;
  }
  f->all_fields = all;
  all[f->n_all_fields++] = fld;
  fld->column = -1;
  fld->col20 = -1;
  return fld;
}

static int add_child(struct lnc_field *parent, struct lnc_field *child) {
  struct lnc_field **c = realloc(parent->children, (parent->n_children + 1) * sizeof *c);
  if (!c) return LNC_ENOMEM;
  parent->children = c;
  c[parent->n_children++] = child;
  child->parent = parent;
  return 0;
}

static char unit_char(const char *u) {
  if (strcmp(u, "s") == 0) return 's';
  if (strcmp(u, "ms") == 0) return 'm';
  if (strcmp(u, "us") == 0) return 'u';
  if (strcmp(u, "ns") == 0) return 'n';
  return 0;
}

static int parse_logical(struct lnc_file *f, struct lnc_field *fld, const char *lt,
                         struct lnc_error *err);

/* The field stays in the tree (typed null, so the file's schema can still be exported) with
 * the reason; the children the file lists for it are kept so column numbering holds. */
static int mark_unsupported(struct lnc_field *fld, const char *why) {
  free(fld->unsupported);
  free(fld->format);
  fld->unsupported = xstrdup(why);
  fld->format = xstrdup("n");
  fld->type = LNC_AT_NULL;
  fld->byte_width = 0;
  fld->dict_index[0] = 0;
  size_t k = 0; /* a synthetic child (a fixed-size list's item) is ours, not the file's: drop it */
  for (size_t i = 0; i < fld->n_children; i++) {
    if (fld->children[i]->id != -2)
      fld->children[k++] = fld->children[i];
    else
      fld->children[i]->parent = NULL; /* out of the tree: no shape checks, no columns */
  }
  fld->n_children = k;
  return fld->unsupported && fld->format ? 0 : LNC_ENOMEM;
}

const struct lnc_field *lnc_schema_unsupported(const struct lnc_field *fld) {
  for (const struct lnc_field *x = fld; x; x = x->parent)
    if (x->unsupported) return x;
  for (size_t i = 0; i < fld->n_children; i++) {
    const struct lnc_field *u = lnc_schema_unsupported_below(fld->children[i]);
    if (u) return u;
  }
  return NULL;
}

const struct lnc_field *lnc_schema_unsupported_below(const struct lnc_field *fld) {
  if (fld->unsupported) return fld;
  for (size_t i = 0; i < fld->n_children; i++) {
    const struct lnc_field *u = lnc_schema_unsupported_below(fld->children[i]);
    if (u) return u;
  }
  return NULL;
}

/* Lance's logical type names and the Arrow format each stands for; the kind and widths
 * follow from the format (set_format), so they are written down once. Dictionary index types
 * are the integer ones among them. */
static const struct {
  const char *lt, *fmt;
} logical_types[] = {
    {"null", "n"},
    {"bool", "b"},
    {"int8", "c"},
    {"uint8", "C"},
    {"int16", "s"},
    {"uint16", "S"},
    {"int32", "i"},
    {"uint32", "I"},
    {"int64", "l"},
    {"uint64", "L"},
    {"halffloat", "e"},
    {"float", "f"},
    {"double", "g"},
    {"string", "u"},
    {"large_string", "U"},
    {"binary", "z"},
    {"large_binary", "Z"},
    {"json", "Z"},
    {"date32:day", "tdD"},
    {"date64:ms", "tdm"},
    {"time32:s", "tts"},
    {"time32:ms", "ttm"},
    {"time64:us", "ttu"},
    {"time64:ns", "ttn"},
    {"duration:s", "tDs"},
    {"duration:ms", "tDm"},
    {"duration:us", "tDu"},
    {"duration:ns", "tDn"},
    {"struct", "+s"},
    {"list", "+l"},
    {"list.struct", "+l"},
    {"large_list", "+L"},
    {"large_list.struct", "+L"},
};

/* `dict:<value>:<index>:<ordered>` (e.g. dict:string:int32:false): Lance stores the values
 * (so the field reads as its value type) and returns Dictionary<index, value>. The value
 * type may itself contain ':' (dict:decimal:128:10:2:int8:false), so split from the right. */
static int parse_dict(struct lnc_file *f, struct lnc_field *fld, const char *lt, struct lnc_error *err) {
  char buf[256];
  size_t n = strlen(lt + 5);
  if (n >= sizeof buf) goto bad;
  memcpy(buf, lt + 5, n + 1);
  char *ord = strrchr(buf, ':');
  if (!ord) goto bad;
  *ord++ = 0;
  char *idx = strrchr(buf, ':');
  if (!idx) goto bad;
  *idx++ = 0;
  fld->dict_ordered = strcmp(ord, "true") == 0;
  struct lnc_atype_info it;
  for (size_t i = 0; i < sizeof logical_types / sizeof logical_types[0]; i++)
    if (strcmp(idx, logical_types[i].lt) == 0 && lnc_arrow_parse_format(logical_types[i].fmt, &it, NULL) == 0 &&
        it.kind == LNC_AT_INT)
      strcpy(fld->dict_index, logical_types[i].fmt);
  if (!fld->dict_index[0]) goto bad;
  int rc = parse_logical(f, fld, buf, err);
  if (rc) return rc;
  if (fld->n_children || fld->type == LNC_AT_STRUCT || lnc_kind_is_list(fld->type) ||
      fld->type == LNC_AT_BOOL || fld->type == LNC_AT_NULL)
    return lnc_errf(err, LNC_EUNSUPPORTED, "field '%s': dictionary of %s values is not supported", fld->name, buf);
  return 0;
bad:
  return lnc_errf(err, LNC_EUNSUPPORTED, "field '%s': malformed dictionary logical type '%s'", fld->name, lt);
}

/* fld's format, and its kind and widths as lance.h's vocabulary reads the format: bytes per
 * value for fixed-width kinds (0 for bool, variable-width and nested), the size of a fixed
 * binary or fixed-size list. */
static int set_format(struct lnc_field *fld, const char *format, struct lnc_error *err) {
  struct lnc_atype_info t;
  int rc = lnc_arrow_parse_format(format, &t, err);
  /* The format is built from the file's logical type, so a refusal is the file's: a decimal
   * scale past what Arrow's writers produce, say. */
  if (rc) return lnc_errf(err, LNC_EUNSUPPORTED, "field '%s': unsupported type (Arrow format '%s')", fld->name, format);
  free(fld->format);
  if (!(fld->format = xstrdup(format))) return LNC_ENOMEM;
  fld->type = t.kind;
  fld->byte_width = t.kind == LNC_AT_BOOL || t.kind == LNC_AT_NULL ? 0 : (uint32_t)t.bits / 8;
  if (t.kind == LNC_AT_FIXED_BINARY || t.kind == LNC_AT_FIXED_LIST) fld->fixed_size = t.width;
  return 0;
}

/* A fixed-size list is read as one column of its innermost items: fixed-width ones (and
 * booleans, and nulls: no values, only slots), under at most LNC_FSL_MAX_LEVELS lists whose dimensions multiply to at most
 * FSL_MAX_ITEMS per value (nested ones multiply: three of 2^21 made 2^63 items per value).
 * Anything else (strings, binaries, structs) is refused here, for this field alone,
 * not by every take and describe. An inner list's parse has already checked itself. */
#define FSL_MAX_ITEMS (1u << 24)
static int fsl_servable(const struct lnc_field *fld, const char *inner_lt, struct lnc_error *err) {
  const struct lnc_field *item = fld->children[0];
  uint64_t items = (uint64_t)fld->fixed_size;
  unsigned levels = 1;
  for (;; item = item->children[0]) {
    if (items > FSL_MAX_ITEMS) /* checked after each factor (each at most 2^24): no overflow */
      return lnc_errf(err, LNC_EUNSUPPORTED, "field '%s': fixed-size lists of more than %u items per value",
                      fld->name, FSL_MAX_ITEMS);
    if (item->type != LNC_AT_FIXED_LIST) break;
    if (++levels > LNC_FSL_MAX_LEVELS)
      return lnc_errf(err, LNC_EUNSUPPORTED, "field '%s': fixed-size lists nested more than %d deep", fld->name,
                      LNC_FSL_MAX_LEVELS);
    items *= (uint64_t)item->fixed_size;
  }
  if (item->type != LNC_AT_BOOL && item->type != LNC_AT_NULL && item->byte_width == 0)
    return lnc_errf(err, LNC_EUNSUPPORTED, "field '%s': fixed-size list of %s items", fld->name, inner_lt);
  return 0;
}

/* Sets type, format and widths of fld from a Lance logical type string. Fixed-size lists
 * get a synthetic child "item" (Lance stores none). */
static int parse_logical(struct lnc_file *f, struct lnc_field *fld, const char *lt,
                         struct lnc_error *err) {
  for (size_t i = 0; i < sizeof logical_types / sizeof logical_types[0]; i++) {
    if (strcmp(lt, logical_types[i].lt) == 0) return set_format(fld, logical_types[i].fmt, err);
  }
  char buf[256];
  if (strncmp(lt, "timestamp:", 10) == 0) {
    const char *u = lt + 10, *colon = strchr(u, ':');
    if (!colon || (size_t)(colon - u) > 2) goto bad;
    char unit[3] = {0};
    memcpy(unit, u, (size_t)(colon - u));
    char uc = unit_char(unit);
    if (!uc) goto bad;
    const char *tz = colon + 1;
    snprintf(buf, sizeof buf, "ts%c:%s", uc, strcmp(tz, "-") == 0 ? "" : tz);
    return set_format(fld, buf, err);
  }
  if (strncmp(lt, "decimal:", 8) == 0) {
    int bits, p, s;
    if (sscanf(lt + 8, "%d:%d:%d", &bits, &p, &s) != 3 || (bits != 128 && bits != 256)) goto bad;
    if (bits == 128)
      snprintf(buf, sizeof buf, "d:%d,%d", p, s);
    else
      snprintf(buf, sizeof buf, "d:%d,%d,256", p, s);
    return set_format(fld, buf, err);
  }
  if (strncmp(lt, "fixed_size_binary:", 18) == 0) {
    char *end;
    long n = strtol(lt + 18, &end, 10);
    if (*end || n <= 0 || n > (1 << 30)) goto bad;
    snprintf(buf, sizeof buf, "w:%ld", n);
    return set_format(fld, buf, err);
  }
  if (strncmp(lt, "fixed_size_list:", 16) == 0) {
    const char *inner = lt + 16, *last = strrchr(lt, ':');
    if (last <= inner) goto bad;
    char *end;
    long n = strtol(last + 1, &end, 10);
    if (*end || n <= 0 || n > (1 << 24)) goto bad;
    size_t il = (size_t)(last - inner);
    if (il >= sizeof buf) goto bad;
    char inner_lt[256];
    memcpy(inner_lt, inner, il);
    inner_lt[il] = 0;
    snprintf(buf, sizeof buf, "+w:%ld", n);
    int frc = set_format(fld, buf, err);
    if (frc) return frc;
    struct lnc_field *item = field_new(f);
    if (!item) return LNC_ENOMEM;
    item->name = xstrdup("item");
    item->id = -2; /* synthetic: not in the file's field list */
    item->parent_id = fld->id;
    item->nullable = true;
    if (!item->name) return LNC_ENOMEM;
    int rc;
    if (strcmp(inner_lt, "lance.bfloat16") == 0)
      rc = parse_logical(f, item, "fixed_size_binary:2", err);
    else
      rc = parse_logical(f, item, inner_lt, err);
    /* an inner list refused names this field, the column a request asks for */
    if (rc == LNC_EUNSUPPORTED && strncmp(inner_lt, "fixed_size_list:", 16) == 0)
      return lnc_errf(err, rc, "field '%s': fixed-size list of %s items", fld->name, inner_lt);
    if (rc) return rc;
    item->logical_type = xstrdup(inner_lt);
    if ((rc = add_child(fld, item))) return rc;
    return fsl_servable(fld, inner_lt, err);
  }
  if (strncmp(lt, "dict:", 5) == 0) return parse_dict(f, fld, lt, err);
  if (strcmp(lt, "map") == 0) {
    /* Lance writes maps from file version 2.2 on, laid out as a list of entries; the 2.0
     * reader has no list path for them. Keys are not sorted (Lance's "map" says nothing). */
    if (f->v20)
      return lnc_errf(err, LNC_EUNSUPPORTED, "field '%s': a map in a %s file", fld->name, f->legacy ? "legacy" : "2.0");
    return set_format(fld, "+m", err);
  }
bad:
  return lnc_errf(err, LNC_EUNSUPPORTED, "field '%s': unknown logical type '%s'", fld->name, lt);
}

static bool is_leaf_column(const struct lnc_field *fld) {
  /* its children's columns, if it has any; a packed struct is one column whatever its children */
  if (fld->unsupported) return fld->n_children == 0 || (fld->packed && !fld->blob);
  if (fld->type == LNC_AT_STRUCT) return fld->packed || fld->blob;
  if (lnc_kind_is_list(fld->type)) return false;
  return true; /* primitives, FSL of primitives (synthetic child), binary, ... */
}

static void assign_columns(struct lnc_field *fld, int *next) {
  if (fld->id != -2 && is_leaf_column(fld)) {
    fld->column = (*next)++;
    return;
  }
  for (size_t i = 0; i < fld->n_children; i++) assign_columns(fld->children[i], next);
}

/* File version 2.0: every field in pre-order owns a column, parents included; a leaf column
 * (one that holds values) is also the field's `column`, as in 2.1, so projection and
 * assembly treat both versions alike. Children of a leaf column (packed struct members, the
 * synthetic item of a fixed-size list) own none. */
static void assign_columns20(struct lnc_field *fld, int *next) {
  if (fld->id != -2 && fld->id != -1) fld->col20 = (*next)++;
  /* A 2.0 file stores a fixed-size list as one column, whatever the fields the schema lists
   * below it (a refused list of structs keeps its item's): none of them has a column. */
  bool fsl = fld->logical_type && strncmp(fld->logical_type, "fixed_size_list:", 16) == 0;
  if (is_leaf_column(fld) || (fld->unsupported && fsl)) {
    fld->column = fld->col20;
    return;
  }
  for (size_t i = 0; i < fld->n_children; i++) assign_columns20(fld->children[i], next);
}

int lnc_schema_build(struct lnc_file *f, const Lance__File__Schema *schema, struct lnc_error *err) {
  f->root.name = xstrdup("");
  f->root.type = LNC_AT_STRUCT;
  f->root.format = xstrdup("+s");
  f->root.id = -1;
  f->root.column = -1;
  f->root.col20 = -1;
  if (!f->root.name || !f->root.format) return lnc_errf(err, LNC_ENOMEM, "out of memory");
  if (schema->n_fields == 0) return lnc_errf(err, LNC_ECORRUPT, "schema has no fields");
  if (schema->n_fields > 100000) return lnc_errf(err, LNC_ECORRUPT, "schema has %zu fields", schema->n_fields);
  /* Pre-order list; a parent precedes its children, so a stack of open parents suffices:
   * the parent of field i is the nearest earlier field whose id equals its parent_id. */
  size_t start = f->n_all_fields;
  struct lnc_field *blob_owner = NULL;
  for (size_t i = 0; i < schema->n_fields; i++) {
    Lance__File__Field *pf = schema->fields[i];
    /* the field made last (a synthetic list item included), before this one */
    struct lnc_field *prev = f->n_all_fields > start ? f->all_fields[f->n_all_fields - 1] : NULL;
    struct lnc_field *fld = field_new(f);
    if (!fld) return lnc_errf(err, LNC_ENOMEM, "out of memory");
    fld->name = xstrdup(pf->name);
    fld->id = pf->id;
    fld->parent_id = pf->parent_id;
    fld->nullable = pf->nullable;
    fld->logical_type = xstrdup(pf->logical_type);
    if (!fld->name || !fld->logical_type) return lnc_errf(err, LNC_ENOMEM, "out of memory");
    if (copy_metadata(fld, pf)) return lnc_errf(err, LNC_ENOMEM, "out of memory");
    if (pf->dictionary) {
      fld->dict_off = pf->dictionary->offset;
      fld->dict_len = pf->dictionary->length;
    }
    char mv[64];
    const char *v = meta_get(pf, "lance-encoding:packed", mv, sizeof mv);
    if (!v) v = meta_get(pf, "packed", mv, sizeof mv);
    fld->packed = v && strcasecmp(v, "true") == 0;
    v = meta_get(pf, "lance-encoding:blob", mv, sizeof mv);
    fld->blob = v && strcasecmp(v, "true") == 0;
    struct lnc_error perr = {0};
    int rc = parse_logical(f, fld, pf->logical_type ? pf->logical_type : "", &perr);
    if (rc == LNC_EUNSUPPORTED) {
      /* One field we cannot read must not sink the others: keep the reason (see
       * lnc_schema_unsupported); its columns are still counted so the others line up. */
      if ((rc = mark_unsupported(fld, perr.message))) return lnc_errf(err, rc, "out of memory");
    } else if (rc) {
      return lnc_errf(err, rc, "%s", perr.message);
    }
    struct lnc_field *parent = &f->root;
    /* Blob v2 (2.2): the descriptor children of a blob struct are written with id -1 and
     * parent_id -1, right after it; they belong to that struct, not to the top level. */
    if (pf->id == -1 && pf->parent_id == -1 && blob_owner) {
      parent = blob_owner;
      /* Lance's descriptor type: kind is required, the rest may be null. */
      fld->nullable = strcmp(fld->name, "kind") != 0;
    } else if (pf->parent_id != -1) {
      parent = NULL;
      /* In pre-order the parent is the previous field or one of its ancestors: at most 64
       * steps, where scanning back over every earlier field made a struct of 100,000
       * children quadratic. The scan stays for a list that is not in pre-order. */
      for (struct lnc_field *a = prev; a && a != &f->root && !parent; a = a->parent)
        if (a->id == pf->parent_id && a->id != -2) parent = a;
      for (size_t j = f->n_all_fields - 1; !parent && j-- > start;) {
        struct lnc_field *cand = f->all_fields[j];
        if (cand != fld && cand->id == pf->parent_id && cand->id != -2) {
          parent = cand;
          break;
        }
      }
      if (!parent)
        return lnc_errf(err, LNC_ECORRUPT, "field '%s' (id %d) names parent %d, which does not precede it",
                        fld->name, fld->id, pf->parent_id);
    }
    if ((rc = add_child(parent, fld))) return lnc_errf(err, rc, "out of memory");
    /* Bounded nesting: the walks over the tree below (shape checks, columns, export)
     * recurse, and a chain of 100,000 structs cost minutes and the stack. */
    int depth = 0;
    for (const struct lnc_field *a = parent; a && a != &f->root; a = a->parent)
      if (++depth >= LNC_SCHEMA_MAX_DEPTH)
        return lnc_errf(err, LNC_ECORRUPT, "field '%s' (id %d) is nested more than %d levels deep", fld->name, fld->id,
                        LNC_SCHEMA_MAX_DEPTH);
    if (fld->blob && fld->type == LNC_AT_STRUCT)
      blob_owner = fld;
    else if (parent != blob_owner)
      blob_owner = NULL;
  }
  /* Shape checks: lists have one child, structs at least one (unless packed/blob leaf). */
  for (size_t i = start; i < f->n_all_fields; i++) {
    struct lnc_field *fld = f->all_fields[i];
    /* Not in the tree: the item a refused fixed-size list made (Lance 2.2 writes a list of
     * structs' real item beside it), which must not sink the file. */
    if (!fld->parent) continue;
    if (lnc_schema_unsupported_below(fld) == fld) continue;
    if (lnc_kind_is_list(fld->type) && fld->n_children != 1)
      return lnc_errf(err, LNC_ECORRUPT, "list field '%s' has %zu children", fld->name, fld->n_children);
    if (fld->type == LNC_AT_MAP && (fld->children[0]->type != LNC_AT_STRUCT || fld->children[0]->n_children != 2))
      return lnc_errf(err, LNC_ECORRUPT, "map field '%s': its entries are not a struct of key and value", fld->name);
    /* Arrow's map: entries and keys never null (Lance writes them so; LanceDB refuses
     * nullable keys). Anything else would be served as a map that is not one. */
    if (fld->type == LNC_AT_MAP && (fld->children[0]->nullable || fld->children[0]->children[0]->nullable))
      return lnc_errf(err, LNC_ECORRUPT, "map field '%s': its entries or keys are nullable", fld->name);
    if (fld->type == LNC_AT_STRUCT && fld->n_children == 0)
      return lnc_errf(err, LNC_ECORRUPT, "struct field '%s' has no children", fld->name);
    if (fld->type != LNC_AT_STRUCT && !lnc_kind_is_list(fld->type) && fld->type != LNC_AT_FIXED_LIST &&
        fld->n_children)
      return lnc_errf(err, LNC_ECORRUPT, "field '%s' of type %s has children", fld->name, fld->logical_type);
  }
  /* A packed struct is read as rows of its children's bytes: children of a fixed width
   * (booleans excepted) and, in variable packed rows, strings and binaries. Others (a
   * fixed-size list, a boolean, a null) are refused here, for this field alone. */
  for (size_t i = start; i < f->n_all_fields; i++) {
    struct lnc_field *fld = f->all_fields[i];
    if (!fld->parent || !fld->packed || fld->blob || fld->type != LNC_AT_STRUCT || lnc_schema_unsupported(fld)) continue;
    for (size_t k = 0; k < fld->n_children; k++) {
      const struct lnc_field *ch = fld->children[k];
      bool bytes = lnc_kind_is_bytes(ch->type);
      if (!ch->n_children && ch->type != LNC_AT_BOOL && (ch->byte_width > 0 || bytes)) continue;
      char why[300];
      snprintf(why, sizeof why, "field '%s': packed struct with a child '%s' of type %s", fld->name, ch->name,
               ch->logical_type ? ch->logical_type : "?");
      int rc = mark_unsupported(fld, why);
      if (rc) return lnc_errf(err, rc, "out of memory");
      break;
    }
  }
  int next = 0;
  if (f->v20)
    for (size_t i = 0; i < f->root.n_children; i++) assign_columns20(f->root.children[i], &next);
  else
    assign_columns(&f->root, &next);
  return 0;
}

void lnc_schema_free(struct lnc_file *f) {
  for (size_t i = 0; i < f->n_all_fields; i++) {
    struct lnc_field *fld = f->all_fields[i];
    free(fld->name);
    free(fld->format);
    free(fld->children);
    free(fld->logical_type);
    free(fld->unsupported);
    for (int32_t k = 0; k < fld->n_md; k++) {
      free(fld->md_keys[k]);
      free(fld->md_values[k]);
    }
    free(fld->md_keys);
    free(fld->md_values);
    free(fld);
  }
  free(f->all_fields);
  free(f->root.name);
  free(f->root.format);
  free(f->root.children);
  f->all_fields = NULL;
  f->n_all_fields = 0;
}

/* A dictionary field: the index type, with the value type as its dictionary schema. */
static int export_dict(const struct lnc_field *fld, struct ArrowSchema *out, struct lnc_error *err) {
  int64_t flags = (fld->nullable ? ARROW_FLAG_NULLABLE : 0) | (fld->dict_ordered ? ARROW_FLAG_DICTIONARY_ORDERED : 0);
  if (lnc_schema_init(out, fld->dict_index, fld->name, flags, 0)) return lnc_errf(err, LNC_ENOMEM, "out of memory");
  out->dictionary = calloc(1, sizeof *out->dictionary);
  if (!out->dictionary || lnc_schema_init(out->dictionary, fld->format, "", 0, 0) ||
      (fld->n_md && lnc_schema_set_metadata(out, (const char *const *)fld->md_keys,
                                            (const char *const *)fld->md_values, fld->n_md))) {
    out->release(out);
    return lnc_errf(err, LNC_ENOMEM, "out of memory");
  }
  return 0;
}

int lnc_schema_export(const struct lnc_field *fld, struct ArrowSchema *out, struct lnc_error *err) {
  if (fld->dict_index[0]) return export_dict(fld, out, err);
  if (fld->unsupported) /* typed null, no children: what a reader of the schema can rely on */
    return lnc_schema_init(out, "n", fld->name, ARROW_FLAG_NULLABLE, 0) ? lnc_errf(err, LNC_ENOMEM, "out of memory") : 0;
  if (lnc_schema_init(out, fld->format, fld->name, fld->nullable ? ARROW_FLAG_NULLABLE : 0,
                      (int64_t)fld->n_children))
    return lnc_errf(err, LNC_ENOMEM, "out of memory");
  /* The field's metadata, as Lance's own reader returns it (Arrow field metadata). */
  if (fld->n_md && lnc_schema_set_metadata(out, (const char *const *)fld->md_keys,
                                           (const char *const *)fld->md_values, fld->n_md)) {
    out->release(out);
    return lnc_errf(err, LNC_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < fld->n_children; i++) {
    int rc = lnc_schema_export(fld->children[i], out->children[i], err);
    if (rc) {
      out->release(out);
      return rc;
    }
  }
  return 0;
}

struct lnc_field *lnc_schema_find_id(struct lnc_file *f, int32_t id) {
  /* all_fields lists every field once: schemas are small and a take names few fields, so a
   * scan beats keeping an index per file. */
  for (size_t i = 0; id >= 0 && i < f->n_all_fields; i++)
    if (f->all_fields[i]->id == id) return f->all_fields[i];
  return NULL;
}

struct lnc_field *lnc_schema_find(struct lnc_file *f, const char *path) {
  struct lnc_field *cur = &f->root;
  const char *p = path;
  while (*p) {
    const char *dot = strchr(p, '.');
    size_t n = dot ? (size_t)(dot - p) : strlen(p);
    struct lnc_field *next = NULL;
    for (size_t i = 0; i < cur->n_children; i++) {
      struct lnc_field *c = cur->children[i];
      if (strlen(c->name) == n && memcmp(c->name, p, n) == 0) {
        next = c;
        break;
      }
    }
    if (!next) {
      /* A field name may itself contain dots: try the whole remainder as one name. */
      for (size_t i = 0; i < cur->n_children; i++)
        if (strcmp(cur->children[i]->name, p) == 0) return cur->children[i];
      return NULL;
    }
    cur = next;
    if (!dot) return cur;
    p = dot + 1;
  }
  return NULL;
}
