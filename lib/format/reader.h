/* Internal model of an opened Lance data file: footer, schema as a field tree, columns and
 * pages with their decoded layouts. Built once by lnc_file_open (format/file.c), read by
 * the layout decoders and the take path. Everything here is owned by struct lnc_file. */
#ifndef LNC_FORMAT_READER_H
#define LNC_FORMAT_READER_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "../lance.h"
#include "../io/io.h"
#include "lance/encodings21.pb-c.h"
#include "lance/file.pb-c.h"
#include "lance/file2.pb-c.h"

/* Unpacks a protobuf message read from a file (pbdepth.c): NULL when it does not parse or
 * nests deeper than LNC_PB_MAX_DEPTH messages (protobuf-c recurses per level with no bound).
 * Freed with the message type's free_unpacked. */
#define LNC_PB_MAX_DEPTH 64
void *lnc_pb_unpack(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t len);

/* Arrow type of a field, as far as the reader needs to know it. */

struct lnc_field {
  char *name;
  int32_t id, parent_id;
  enum lnc_atype type; /* the Arrow kind of format (lance.h's vocabulary) */
  char *format;        /* Arrow C format string, e.g. "i", "tsu:UTC", "+w:128" */
  bool nullable;
  uint32_t byte_width; /* fixed-width leaves: bytes per value (0 for bool and var-width) */
  int32_t fixed_size;  /* FIXED_LIST / FIXED_BINARY size */
  bool packed;         /* lance-encoding:packed struct: one column for the whole struct */
  bool blob;           /* lance-encoding:blob */
  int column;          /* column index read by this field if it is a column leaf, else -1 */
  struct lnc_field *parent;
  struct lnc_field **children;
  size_t n_children;
  char *logical_type; /* as stored, for inspect */
  char dict_index[4]; /* logical type dict:<value>:<index>:<ordered>: the Arrow format of the
                            index type ("i", "C", ...), else ""; type/format above describe the
                            values, which is how Lance stores the field */
  bool dict_ordered;
  char *unsupported;           /* why this field (and its subtree) cannot be served, else NULL: the
                            file still opens, other fields are served, takes naming it fail */
  int col20;                   /* file version 2.0: the column this field owns (every field has one,
                            parents included; packed/blob children none), else -1 */
  char **md_keys, **md_values; /* the field's metadata as stored (lance-encoding:*, ARROW:*,
                                  user keys), exported as Arrow field metadata like Lance */
  int32_t n_md;
  int64_t dict_off, dict_len; /* legacy files: where a dictionary field's values are
                                 (Field.dictionary: position and count), else 0 */
};

enum lnc_layout_kind { LNC_LAYOUT_MINIBLOCK = 1,
                       LNC_LAYOUT_CONSTANT,
                       LNC_LAYOUT_FULLZIP,
                       LNC_LAYOUT_BLOB,
                       LNC_LAYOUT_V20 /* file version 2.0: an ArrayEncoding tree (layout/v20.c) */ };

struct lnc_page {
  uint64_t row_start, rows;
  uint32_t n_buffers;
  uint64_t *buf_off, *buf_len;
  Lance__Encodings21__PageLayout *layout; /* parsed page layout (protobuf-c owned); 2.1/2.2 */
  /* File version 2.0: the page's ArrayEncoding as read, in its Any (format-owned until the
   * layout floor parses it at open and frees it), then the layout's own state for the page
   * (layout/v20.c), freed with free_enc20. */
  Lance__File__V2__AnyMessage *enc20_any;
  void *enc20;
  void (*free_enc20)(struct lnc_page *pg);
  enum lnc_layout_kind kind;
  void *state; /* layout-specific search-cache state, built on first use */
  void (*free_state)(void *);
  size_t state_bytes;        /* bytes the state holds, for accounting */
  uint64_t leg_pos, leg_len; /* legacy files: the page table's entry as stored (what length
                                counts depends on the field's type, docs/legacy-format.md) */
  uint32_t n_chunks;         /* mini-block chunks, once the state is built (for reports) */
};

struct lnc_column {
  int prep_code; /* eager preparation failed: code and message for takes */
  char *prep_msg;
  uint32_t n_pages;
  struct lnc_page *pages;
  struct lnc_field *leaf; /* the field this column stores */
};

struct lnc_file {
  char *name;
  /* Where its bytes are read from (lib/io): descriptors or an object, and the size. The
   * file owns what src holds (closes its descriptors, frees its object); src.name is name. */
  struct lnc_source src;
  int dir_fd; /* the directory holding the file (for blob sidecars), or -1 (an object) */
  dev_t dev;
  ino_t ino;
  int64_t mtime_ns;
  uint16_t major, minor; /* 2.0 files (footer 0.3) are stored as 2.0 */
  bool v20;              /* file version 2.0: ArrayEncoding pages, a column per field */
  bool legacy;           /* file version 0.1/0.2 (footer major 0, minor < 3): read as 2.0 is,
                            a column per field with one page per batch (format/legacy.c);
                            v20 is set too */
  uint64_t num_rows;
  uint64_t meta_bytes; /* bytes of metadata read at open (for cache accounting) */
  uint32_t n_columns;
  struct lnc_column *columns;
  struct lnc_field root;         /* a struct; children = top-level fields */
  struct lnc_field **all_fields; /* every field, pre-order, for freeing and lookup */
  size_t n_all_fields;
};

/* What this floor reads of a data file: footer, metadata, schema, columns and their pages'
 * buffers and layouts, checked; a 2.0 page's ArrayEncoding is left for the layout floor. The
 * public lnc_file_open* (layout/open.c) are these plus the layout floor's pass. _source opens
 * the file whose bytes src serves (src consumed in every case); name for messages. */
int lnc_format_open_path(const char *path, lnc_file **out, struct lnc_error *err);
int lnc_format_open_fd(int fd, const char *name, lnc_file **out, struct lnc_error *err);
int lnc_format_open_source(struct lnc_s3_source *src, const char *name, lnc_file **out,
                           struct lnc_error *err);

/* Legacy files (format/legacy.c): opens the file whose footer (the last 16 bytes) says
 * version 0.1/0.2: metadata, embedded schema, page table, columns. */
int lnc_legacy_open(struct lnc_file *f, struct lnc_error *err);
/* What a legacy page of fld holds per value, in bits: fixed-width values, booleans (1),
 * dictionary keys, fixed-size binaries and fixed-size lists (all their items); 0 for
 * strings/binaries, lists, structs and nulls, whose pages are read by their own rules. */
uint64_t lnc_legacy_value_bits(const struct lnc_field *fld);

/* Schema: builds f->root from a FileDescriptor schema and assigns column indices. */
int lnc_schema_build(struct lnc_file *f, const Lance__File__Schema *schema, struct lnc_error *err);
void lnc_schema_free(struct lnc_file *f);
/* Fills an ArrowSchema for field (recursively). */
int lnc_schema_export(const struct lnc_field *field, struct ArrowSchema *out, struct lnc_error *err);
/* The field, an ancestor or a descendant of fld that cannot be served (unsupported type or
 * column), or NULL; _below looks only at fld and its descendants. */
const struct lnc_field *lnc_schema_unsupported(const struct lnc_field *fld);
const struct lnc_field *lnc_schema_unsupported_below(const struct lnc_field *fld);
/* Finds a field by dotted path ("a", "s.b"); NULL when absent. */
struct lnc_field *lnc_schema_find(struct lnc_file *f, const char *path);
/* The field with Lance field id `id` (how a dataset names a data file's fields), else NULL;
 * negative ids (the root, fields we make up) are never found. */
struct lnc_field *lnc_schema_find_id(struct lnc_file *f, int32_t id);

#endif
