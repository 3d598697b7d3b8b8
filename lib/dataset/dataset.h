/* Internal types of lib/dataset: version discovery, the parsed manifest, deletion vectors and
 * the offset → (fragment, physical row) map. The public handle (struct lnc_dataset) is built
 * from these in open.c and is immutable after open, except for lazily opened data files. */
#ifndef LNC_DATASET_DATASET_H
#define LNC_DATASET_DATASET_H
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../lance.h"
#include "lance/table.pb-c.h"

/* ---- versions.c --------------------------------------------------------------------- */
enum lnc_ds_naming { LNC_DS_NAMING_V1 = 1,
                     LNC_DS_NAMING_V2 = 2 };

struct lnc_ds_version {
  uint64_t version;
  enum lnc_ds_naming naming;
};

/* Parses one `_versions/` entry name: 1 and *out set for a manifest name, 0 for anything else
 * (detached versions, hints, temporary files). */
int lnc_ds_parse_manifest_name(const char *name, struct lnc_ds_version *out);
/* Formats the manifest file name of a version in a naming scheme into buf (>= 32 bytes). */
void lnc_ds_manifest_name(const struct lnc_ds_version *v, char *buf, size_t cap);
/* Lists the manifests in the `_versions` directory (descriptor vfd, not consumed), sorted by
 * version ascending; *out is malloc'd (NULL when none). `what` names the dataset in errors. */
int lnc_ds_list_versions(int vfd, const char *what, struct lnc_ds_version **out, size_t *n,
                         struct lnc_error *err);
/* By version ascending (one version in both namings: V1 first), as every listing returns them. */
void lnc_ds_sort_versions(struct lnc_ds_version *vs, size_t n);

/* ---- dirio.c: where a dataset's files are --------------------------------------------- */
struct lnc_s3_mount;
/* A local directory, or the objects below a key prefix of an object-store mount. */
struct lnc_ds_loc {
  int fd;                        /* the dataset directory, or -1 */
  const struct lnc_s3_mount *s3; /* with fd -1: the mount (borrowed; it outlives the handle) */
  char *prefix;                  /* the dataset's path below the mount, "" or ending in '/' */
};
/* Closes the directory and frees the prefix; loc is then {.fd = -1}. */
void lnc_ds_loc_close(struct lnc_ds_loc *loc);
/* The manifests under `_versions/`, as lnc_ds_list_versions. */
int lnc_ds_loc_versions(const struct lnc_ds_loc *loc, const char *what,
                        struct lnc_ds_version **out, size_t *n, struct lnc_error *err);
/* A whole file (rel below the dataset), as lnc_ds_read_file. */
int lnc_ds_loc_read(const struct lnc_ds_loc *loc, const char *rel, size_t limit, const char *what,
                    uint8_t **out, size_t *len, struct lnc_error *err);
/* Picks `want` (0 = the latest) from the listing; LNC_ENOTFOUND naming what exists. */
int lnc_ds_pick_version(const struct lnc_ds_version *vs, size_t n, uint64_t want,
                        const char *what, struct lnc_ds_version *out, struct lnc_error *err);

/* ---- bases.c: base paths, files below another directory (shallow clones) -------------- */
/* A manifest's base path as this handle reads it: where its files are opened from while the
 * dataset opens (loc, closed by lnc_ds_detach_dir) and its path as the engine names it (dir:
 * below the engine's root or a mount; an absolute path without an engine). */
struct lnc_ds_base {
  uint32_t id;
  bool used; /* some file names it: only those are resolved (loc, dir) */
  struct lnc_ds_loc loc;
  char *dir; /* malloc'd; NULL when not used */
  /* In the handle's manifest. is_dataset_root: its data files are below <base>/data/ (else
   * directly below it), its deletion files below <base>/_deletions/. */
  const Lance__Table__BasePath *pb;
};
/* Whether a data / deletion file names a base path (table.proto: presence through a oneof,
 * as id 0 is a base). */
#define LNC_DS_DF_HAS_BASE(df)  ((df)->base_case == LANCE__TABLE__DATA_FILE__BASE_BASE_ID)
#define LNC_DS_DEL_HAS_BASE(df) ((df)->base_case == LANCE__TABLE__DELETION_FILE__BASE_BASE_ID)
/* Turns a base path (an absolute local path, file://…, s3://…) into a location the opener may
 * read and its engine path (*dir, malloc'd); LNC_EACCES where it may not read. */
struct lnc_ds_resolver {
  int (*resolve)(void *ctx, const char *uri, struct lnc_ds_loc *loc, char **dir, struct lnc_error *err);
  void *ctx;
};
/* The manifest's base paths: ids unique, paths not empty, every base id of a data or deletion
 * file listed, deletion files only below a dataset root. LNC_ECORRUPT naming what is wrong. */
int lnc_ds_bases_check(const Lance__Table__Manifest *m, const char *what, struct lnc_error *err);
/* A local base path (absolute, or a file:// URL) normalised into abs (lnc_abs_path); else
 * LNC_ECORRUPT (LNC_EUNSUPPORTED for another store's URL) naming it. For the resolvers. */
int lnc_ds_base_local(const char *uri, char *abs, size_t cap, struct lnc_error *err);
/* At open: ds->bases sorted by id, those a file names resolved by res (NULL: a local path
 * opened as named, an object store refused). Errors name the base path. */
int lnc_ds_bases_open(lnc_dataset *ds, const struct lnc_ds_resolver *res, struct lnc_error *err);
void lnc_ds_bases_detach(lnc_dataset *ds); /* closes their descriptors */
void lnc_ds_bases_free(lnc_dataset *ds);
size_t lnc_ds_bases_memory(const lnc_dataset *ds);
/* Where data file df is read from while the dataset opens: *loc, and rel below it
 * ("data/<path>", or "<path>" below a base that is not a dataset root). */
int lnc_ds_file_where(const lnc_dataset *ds, const Lance__Table__DataFile *df, const struct lnc_ds_loc **loc,
                      char *rel, size_t cap, struct lnc_error *err);
/* The engine path of the base data file df is below, NULL for the dataset's own files (for
 * messages). */
const char *lnc_ds_file_base_dir(const lnc_dataset *ds, const Lance__Table__DataFile *df);
/* The dataset whose _deletions/ holds df (NULL df: the handle's own). */
const struct lnc_ds_loc *lnc_ds_deletion_loc(const lnc_dataset *ds, const Lance__Table__DeletionFile *df);
/* Data file df as the engine names it, for the dataset at engine path dir: "<dir>/data/<path>"
 * or below its base's dir. */
int lnc_ds_file_engine_path(const lnc_dataset *ds, const char *dir, const Lance__Table__DataFile *df, char *buf,
                            size_t cap, struct lnc_error *err);

/* ---- tags.c: _refs/tags/<name>.json ------------------------------------------------- */
/* Whether tag is a name Lance allows for a ref (so also a safe file name). */
bool lnc_ds_tag_name_ok(const char *tag);
/* A tag file's version (src,len; `what` names it in errors): LNC_ECORRUPT when it is not one,
 * LNC_EUNSUPPORTED for a tag of another branch. */
int lnc_ds_tag_parse(const uint8_t *src, size_t len, const char *what, uint64_t *version, struct lnc_error *err);
/* Reads tag `tag` of the dataset at loc (`name` in messages): LNC_EINVAL for a name Lance
 * would not allow, LNC_ENOTFOUND when there is no such tag. */
int lnc_ds_read_tag(const struct lnc_ds_loc *loc, const char *name, const char *tag, uint64_t *version,
                    struct lnc_error *err);

/* ---- manifest.c --------------------------------------------------------------------- */
/* Parses a whole manifest file image (src,len): the 16-byte tail, the length-prefixed
 * protobuf, then checks what a reader relies on (feature flags, fragments, data files,
 * deletion files). The result is freed with lance__table__manifest__free_unpacked(m, NULL). */
int lnc_ds_manifest_parse(const uint8_t *src, size_t len, const char *what,
                          Lance__Table__Manifest **out, struct lnc_error *err);
/* Reader feature flags lanced understands; any other bit makes a dataset unreadable. 16 is
 * base paths (bases.c). */
#define LNC_DS_FLAG_STABLE_ROW_IDS 2u /* Lance's reader feature flag: row ids are not addresses */
#define LNC_DS_KNOWN_READER_FLAGS  (1u | 2u | 4u | 8u | 16u | 32u)

/* ---- deletion_arrow.c / deletion_roaring.c / deletion.c --------------------------- */
/* Deleted physical rows of one fragment as runs [start, start + len): sorted, disjoint and
 * not touching (adjacent runs are merged); before = rows deleted in the runs before this one.
 * Runs rather than one entry per row because a Roaring run container deletes 65,536 rows in
 * 4 bytes: a 115 KB bitmap expanded row by row was 3 GB. Row counts fit 32 bits (a
 * fragment holds at most 2^32 - 1 rows). */
struct lnc_ds_delrun {
  uint32_t start, len, before;
};
struct lnc_ds_deletions {
  struct lnc_ds_delrun *runs; /* malloc'd */
  size_t nruns;
  uint64_t n; /* rows deleted */
};
/* Appends rows [start, start + len) to d; start must not be below the last run's start. A
 * range overlapping or touching the last run extends it. 0, LNC_ENOMEM, or LNC_ERANGE (a run
 * of 2^32 rows or more). */
int lnc_ds_del_add(struct lnc_ds_deletions *d, uint32_t start, uint32_t len);
/* Arrow IPC file with one non-null uint32 column (Lance's ARROW_ARRAY deletion files). The
 * values are returned as stored (unsorted, possibly repeated); *out is malloc'd. More than
 * max_values values (the fragment's row count) is corrupt, checked before allocating. */
int lnc_ds_read_arrow_u32(const uint8_t *src, size_t len, const char *what, uint64_t max_values,
                          uint32_t **out, size_t *n, struct lnc_error *err);
/* Portable Roaring bitmap serialization (Lance's BITMAP deletion files), as runs (*out
 * zeroed first, its runs malloc'd; nothing to free on failure). */
int lnc_ds_read_roaring(const uint8_t *src, size_t len, const char *what, uint64_t max_values,
                        struct lnc_ds_deletions *out, struct lnc_error *err);
/* `_deletions/<fragment>-<read_version>-<id>.<arrow|bin>` for a deletion file. */
void lnc_ds_deletion_path(uint64_t fragment_id, const Lance__Table__DeletionFile *df, char *buf,
                          size_t cap);
/* Reads and checks one fragment's deletion file (relative to the dataset dir fd): rows below
 * physical_rows, count equal to num_deleted_rows when recorded. */
int lnc_ds_load_deletions(const struct lnc_ds_loc *loc, const char *what, uint64_t fragment_id,
                          uint64_t physical_rows, const Lance__Table__DeletionFile *df,
                          struct lnc_ds_deletions *out, struct lnc_error *err);

/* ---- rowmap.c ----------------------------------------------------------------------- */
struct lnc_ds_rowmap {
  size_t nfrag;
  uint64_t *live_start;               /* nfrag + 1 entries: live rows before fragment i; [nfrag] = total */
  const struct lnc_ds_deletions *del; /* nfrag entries, borrowed */
};
/* Live rank k of a fragment → physical row, skipping deleted rows. k < live rows. */
uint64_t lnc_ds_live_to_physical(const struct lnc_ds_deletions *d, uint64_t k);
/* Row address (fragment id << 32 | physical row) → (fragment index, physical row):
 * LNC_ENOTFOUND, naming the address and `version`, for a fragment the version does not have,
 * a row past the fragment's end, or a deleted row. */
int lnc_ds_addr_lookup(const struct lnc_dataset *ds, uint64_t addr, size_t *frag, uint64_t *row,
                       struct lnc_error *err);
/* The stable row id index of a flag-2 version (nothing otherwise), built at open once the
 * deletion vectors are loaded. A damaged or unreadable sequence is kept in ds->rowid_err for
 * the lookups below to answer (offset takes still work); 0 or LNC_ENOMEM. */
int lnc_ds_rowids_build(struct lnc_dataset *ds);
/* Stable row id → row address; LNC_ENOTFOUND naming it when no live row has it. */
int lnc_ds_rowid_lookup(const struct lnc_dataset *ds, uint64_t rid, uint64_t *addr, struct lnc_error *err);
/* A live row's address → its stable row id. */
int lnc_ds_rowid_of(const struct lnc_dataset *ds, uint64_t addr, uint64_t *rid, struct lnc_error *err);
size_t lnc_ds_rowids_memory(const struct lnc_dataset *ds);
/* One fragment's RowIdSequence bytes → the row id of each of its `rows` physical rows into
 * values[rows]; LNC_ECORRUPT when it does not parse or holds another count of ids (for the
 * unit tests and fuzz_rowids). */
int lnc_ds_rowids_decode(const uint8_t *p, size_t len, uint64_t rows, uint64_t *values, struct lnc_error *err);
/* ds->by_id, built once the fragments are (open.c). */
int lnc_ds_index_fragments(struct lnc_dataset *ds, struct lnc_error *err);
/* Global live offset → (fragment index, physical row); LNC_ERANGE past the end. */
int lnc_ds_rowmap_lookup(const struct lnc_ds_rowmap *m, uint64_t offset, size_t *frag,
                         uint64_t *row, struct lnc_error *err);

/* ---- open.c: the public handle ------------------------------------------------------ */
struct lnc_ds_datafile {
  const Lance__Table__DataFile *pb;
  pthread_mutex_t lock; /* guards file: an lnc_file serves one thread at a time */
  lnc_file *file;       /* opened on first take */
  int32_t *tops;        /* the top-level fields it holds part of, sorted (fields.c): malloc'd, */
  size_t ntops;         /* or (tops_borrowed) its own field list when that is exactly them, or */
  bool tops_borrowed;   /* an earlier data file's tops when it lists the same fields */
};
/* A manifest field by id (fields.c). */
struct lnc_ds_fref {
  int32_t id;
  int32_t top; /* its top-level ancestor's id (itself at top level), -1 if none */
  bool leaf;   /* no field names it as parent */
  const Lance__File__Field *f;
};

/* Live rows rid..rid+len-1 are at addresses addr..addr+len-1 (stable row ids, rowids.c). */
struct lnc_ds_idrun {
  uint64_t rid, addr;
  uint64_t len;
};

struct lnc_ds_fid {
  uint64_t id;   /* the fragment's id */
  uint32_t frag; /* its index in frags */
};

struct lnc_ds_fragment {
  const Lance__Table__DataFragment *pb;
  struct lnc_ds_datafile *files;
  size_t nfiles;
  struct lnc_ds_deletions del;
};

struct lnc_dataset {
  struct lnc_ds_loc loc;     /* where its files are (owned) */
  struct lnc_ds_base *bases; /* the manifest's base paths, sorted by id (bases.c) */
  size_t nbases;
  char *name; /* for messages */
  struct lnc_ds_version version;
  Lance__Table__Manifest *m;
  struct lnc_ds_fragment *frags;
  struct lnc_ds_deletions *dels; /* nfrag entries (also in frags[i].del), for the rowmap */
  size_t nfrag;
  struct lnc_ds_rowmap map;
  struct lnc_ds_fid *by_id; /* fragments sorted by id (a row address names the id) */
  /* Stable row ids (flag 2, rowids.c): runs sorted by id and by address; or why not. */
  struct lnc_ds_idrun *idruns, *idruns_addr;
  size_t nidruns;
  struct lnc_error rowid_err;
  uint64_t physical_rows;
  size_t manifest_bytes; /* size of the manifest file, for lnc_ds_memory */
  int32_t *spread;       /* top-level struct fields spread over data files (spread.c) */
  size_t nspread;
  struct lnc_ds_fref *fidx; /* the manifest's fields sorted by id (fields.c) */
  size_t nfidx;
  const struct lnc_ds_fref **fdense; /* by id when the ids are dense, else NULL */
  size_t nfdense;
};

/* Opens a version of the dataset at loc (its descriptor and prefix consumed in every case);
 * `name` names it in messages; res (may be NULL) resolves its base paths (bases.c). What
 * lnc_dataset_open_fd does after opening the directory. */
int lnc_ds_open_at(struct lnc_ds_loc loc, const char *name, uint64_t version, const struct lnc_ds_resolver *res,
                   lnc_dataset **out, struct lnc_error *err);
/* Approximate heap bytes the handle holds (manifest, deletion vectors, fragment tables), for
 * memory budgets. */
size_t lnc_ds_memory(const lnc_dataset *ds);
/* For a version cached by the engine, whose data files are opened through the engine by path
 * and whose deletions are loaded: closes the directory descriptor, so a cached version holds
 * none (the engine's descriptor bound counts only its files). Afterwards only takes through a
 * reader and lnc_ds_describe_json_at work. */
void lnc_ds_detach_dir(lnc_dataset *ds);
/* lnc_dataset_describe_json with the versions listed from loc (NULL or fd -1 without a
 * mount: none listed). */
int lnc_ds_describe_json_at(const lnc_dataset *ds, const struct lnc_ds_loc *loc, struct lnc_buf *out,
                            struct lnc_error *err);
/* Total data files over all fragments (for per-file side tables of callers). */
size_t lnc_ds_num_files(const lnc_dataset *ds);

/* ---- fields.c: the schema by field id ------------------------------------------------ */
/* At open, after the fragments' data files are set up: ds->fidx / fdense and every data
 * file's tops. */
int lnc_ds_index_fields(lnc_dataset *ds, struct lnc_error *err);
/* The manifest's field `id` with its top-level ancestor, NULL when there is none. */
const struct lnc_ds_fref *lnc_ds_fref(const lnc_dataset *ds, int32_t id);
/* Whether a data file lists a field of top-level field `top` (itself or one beneath it). */
bool lnc_ds_file_holds_top(const struct lnc_ds_datafile *df, int32_t top);
/* Heap bytes of the index and the tops, for lnc_ds_memory. */
size_t lnc_ds_fields_memory(const lnc_dataset *ds);

/* ---- spread.c: struct columns spread over several data files of a fragment ----------- */
/* Lists in ds->spread the top-level struct fields that some fragment holds in two data files
 * or more, or in one that lacks some of its children (2.2 sub-column adds). At open. */
int lnc_ds_spread_find(lnc_dataset *ds, struct lnc_error *err);
/* Whether top-level field `top` is in that list. */
bool lnc_ds_spread_is(const lnc_dataset *ds, int32_t top);
/* One data file's piece of a struct in a fragment's take: logical row r of the merged struct
 * is logical row base + r of a (borrowed). */
struct lnc_ds_piece {
  const struct ArrowSchema *s;
  const struct ArrowArray *a;
  uint64_t base;
};
/* The n-row struct of type `target` (the manifest's, projected) from a fragment's pieces in
 * data-file order, as Lance merges them: children matched by name, one held by several pieces
 * merged again when a struct else taken from the first, masked by that piece's validity;
 * children no piece holds are null; the struct valid where a piece not null in every row is
 * valid. *out owns its memory. LNC_ECORRUPT when a piece's child has another type. */
int lnc_ds_spread_merge(const struct ArrowSchema *target, const struct lnc_ds_piece *pieces,
                        size_t np, uint64_t n, struct ArrowArray *out, struct lnc_error *err);

/* ---- take.c: pluggable per-data-file reads ------------------------------------------ */
/* Reads rows[0..n) (sorted, unique physical rows) of the fields `cols` from data file j of
 * fragment frag; output as lnc_take_ex. Called from the taking thread only. */
struct lnc_colsel; /* take/take.h: the data file's fields, by id */
struct lnc_ds_reader {
  int (*take)(void *ctx, lnc_dataset *ds, size_t frag, size_t file, const uint64_t *rows,
              size_t n, const struct lnc_colsel *cols,
              const struct lnc_take_options *opts, struct ArrowSchema *schema,
              struct ArrowArray *array, struct lnc_take_stats *stats, struct lnc_error *err);
  void *ctx;
};
/* lnc_dataset_take_ex with the data files read through `rd` (NULL = the handle's own lazily
 * opened lnc_file handles). */
int lnc_ds_take(lnc_dataset *ds, const struct lnc_ds_reader *rd, const uint64_t *ids, size_t n,
                const char *const *columns, size_t ncolumns,
                const struct lnc_take_options *opts, struct ArrowSchema *schema,
                struct ArrowArray *array, struct lnc_take_stats *stats, struct lnc_error *err);

/* Opens (or returns the already opened) data file j of fragment i; caller holds its lock. */
int lnc_ds_file_get(lnc_dataset *ds, size_t i, size_t j, lnc_file **out, struct lnc_error *err);
/* Opens a relative path (no ".." components, no leading '/') beneath dirfd: openat2 with
 * RESOLVE_BENEATH, so symlinks may not lead out of dirfd either (kernels without openat2:
 * every component is opened with O_NOFOLLOW). Returns an fd or -code with err filled. */
int lnc_ds_openat(int dirfd, const char *rel, int flags, const char *what,
                  struct lnc_error *err);
/* Reads a whole regular file (at most `limit` bytes) relative to dirfd; *out malloc'd. */
int lnc_ds_read_file(int dirfd, const char *rel, size_t limit, const char *what, uint8_t **out,
                     size_t *len, struct lnc_error *err);

#endif
