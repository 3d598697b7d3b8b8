/* liblance: read rows of Lance files (format 2.0 / 2.1 / 2.2) into Arrow C Data Interface arrays.
 * This is the whole public API; everything under lib/ besides this header is internal.
 * Conventions: functions return 0 on success or a positive LNC_E* code and then fill the
 * caller's struct lnc_error (which may be NULL). Ownership is stated at each function.
 * Thread-safety, once for all: functions on distinct objects never interfere; lnc_code_name,
 * lnc_buf_free and the encoders are pure; an lnc_file is used by one thread at a time; an
 * lnc_dataset, an lnc_engine and the lnc_engine_* functions may be used from any number of
 * threads at once; an lnc_worker belongs to one thread at a time. Exceptions are stated. */
#ifndef LANCE_H
#define LANCE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "arrow/abi.h"

/* The public API, and only it, is exported from liblance.so (built with -fvisibility=hidden;
 * zstd's ZSTDLIB_API idea). tests/integration/exports.sh checks the two lists match. */
#if defined(__GNUC__) && __GNUC__ >= 4
#define LNC_API __attribute__((visibility("default")))
#else
#define LNC_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ------------------------------------------------------------------------ */
enum lnc_code {
  LNC_OK = 0,
  LNC_EINVAL,       /* bad argument from the caller: malformed ids, unknown column, ... */
  LNC_ERANGE,       /* a row id past the last row */
  LNC_EIO,          /* the operating system refused a read or open */
  LNC_ENOTFOUND,    /* no such file */
  LNC_ECORRUPT,     /* the file is not a valid Lance file: bad magic, offsets, protobuf, ... */
  LNC_EUNSUPPORTED, /* valid Lance, but a version/layout/encoding/type we do not read */
  LNC_ENOMEM,       /* allocation failed or a configured memory limit was hit */
  LNC_ELIMIT,       /* a configured request limit was exceeded */
  LNC_EINTERNAL,    /* a bug in liblance */
  LNC_EAGAIN,       /* asked not to wait (nowait) and the answer needs the disk */
  LNC_EACCES        /* the operating system denied access, or the path leaves the root */
};

struct lnc_error {
  int code;          /* enum lnc_code */
  char message[512]; /* names the file, column, page and problem */
};

LNC_API const char *lnc_code_name(int code); /* "invalid_argument", "corrupt", ...; static storage */

/* ---- growable byte buffer (used for encoded output) -------------------------------- */
struct lnc_buf {
  uint8_t *data;
  size_t len, cap;
};
LNC_API void lnc_buf_free(struct lnc_buf *b); /* frees data; the struct itself is the caller's */

/* ---- files ------------------------------------------------------------------------- */
typedef struct lnc_file lnc_file;

/* Opens and validates a Lance data file (footer, offset tables, schema, column metadata).
 * The returned handle is owned by the caller and freed with lnc_file_close. A handle may
 * be used by one thread at a time. */
LNC_API int lnc_file_open(const char *path, lnc_file **out, struct lnc_error *err);
/* Same, from a descriptor opened read-only by the caller (e.g. with openat2 and
 * RESOLVE_BENEATH). Ownership of fd passes to liblance in every case, even on failure.
 * `name` is used in error messages only. */
LNC_API int lnc_file_open_fd(int fd, const char *name, lnc_file **out, struct lnc_error *err);
/* Same, for a data file stored as an object in S3 or an S3-compatible store (MinIO, R2, GCS's
 * XML API): url is s3://bucket/key; endpoint, region and credentials come from AWS's
 * environment variables (AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID,
 * AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN; path-style addressing with an endpoint unless
 * AWS_VIRTUAL_HOSTED_STYLE_REQUEST=true). Reads are range GETs of the version opened (its
 * ETag), coalesced and in parallel per take; a replaced object is an error, never mixed bytes.
 * Blob columns are read from objects too (a blob v2 sidecar .blob is the object next to it). */
LNC_API int lnc_file_open_s3(const char *url, lnc_file **out, struct lnc_error *err);
LNC_API void lnc_file_close(lnc_file *f);

LNC_API uint64_t lnc_file_num_rows(const lnc_file *f);
LNC_API void lnc_file_version(const lnc_file *f, int *major, int *minor);

/* The file's schema as an Arrow struct schema (one child per top-level field). The caller
 * owns *out and must call out->release(out). */
LNC_API int lnc_file_schema(const lnc_file *f, struct ArrowSchema *out, struct lnc_error *err);

/* A JSON description of the file (version, rows, schema, per column: pages, layout,
 * encoding tree, sizes) as printed by `lancectl inspect --json`; appended to *out.
 * lnc_file_num_rows, _version, _schema and _describe_json may run concurrently with each
 * other, but not with lnc_take on the same handle (a take builds page state lazily). */
LNC_API int lnc_file_describe_json(lnc_file *f, struct lnc_buf *out, struct lnc_error *err);

/* ---- take -------------------------------------------------------------------------- */
struct lnc_take_stats {
  uint64_t reads;         /* read requests issued to the device */
  uint64_t bytes_read;    /* bytes those reads covered */
  uint64_t bytes_decoded; /* bytes of pages actually decoded */
  uint64_t cache_hits, cache_misses, cache_loads;
};

/* Takes rows `ids[0..n)` (any order, duplicates allowed, each < num_rows) of the fields
 * named in `columns` (top-level names or dotted paths to nested fields; NULL/0 = all) and
 * produces a struct array with one child per selected top-level field, rows in request
 * order. The caller owns *schema and *array and releases both. `stats` may be NULL; when
 * given, counts are added to it. */
LNC_API int lnc_take(lnc_file *f, const uint64_t *ids, size_t n, const char *const *columns,
                     size_t ncolumns, struct ArrowSchema *schema, struct ArrowArray *array,
                     struct lnc_take_stats *stats, struct lnc_error *err);

/* ---- datasets (a <name>.lance directory: _versions/, data/, _deletions/) --------------- */
typedef struct lnc_dataset lnc_dataset;

/* Opens one version of a dataset (version 0 = the latest in _versions/): reads and checks
 * its manifest, loads every deletion file and checks that every data file exists. Data files
 * themselves are opened on first take. The handle is owned by the caller (lnc_dataset_close)
 * and is immutable: any number of threads may use one handle concurrently. */
LNC_API int lnc_dataset_open(const char *dir, uint64_t version, lnc_dataset **out,
                             struct lnc_error *err);
/* Same, for `name` relative to the directory descriptor dirfd (which stays the caller's;
 * name "." opens dirfd itself). Paths from the manifest never leave the dataset directory,
 * with one exception: a shallow clone (LanceDB cloneTable) names its source by absolute path
 * (a manifest base path), which these two open as named, as Lance does; an object-store
 * source needs the engine's mounts (LNC_EUNSUPPORTED here). */
LNC_API int lnc_dataset_open_fd(int dirfd, const char *name, uint64_t version, lnc_dataset **out,
                                struct lnc_error *err);
LNC_API void lnc_dataset_close(lnc_dataset *ds);

LNC_API uint64_t lnc_dataset_num_rows(const lnc_dataset *ds); /* live (not deleted) rows */
LNC_API uint64_t lnc_dataset_version(const lnc_dataset *ds);  /* the version this handle reads */
/* The data files' format version the manifest records ("2.1" -> 2, 1; 0, 0 when absent). */
LNC_API void lnc_dataset_data_format(const lnc_dataset *ds, int *major, int *minor);
/* Lists _versions/ again and stores the newest version now present in *latest (cheap: one
 * directory listing, no manifest read), so callers can reopen when it exceeds
 * lnc_dataset_version. Thread-safe. */
LNC_API int lnc_dataset_latest_version(const lnc_dataset *ds, uint64_t *latest, struct lnc_error *err);
/* The version tag `tag` of the dataset at dir names (LanceDB `tags().create`, what
 * `checkout(tag)` reads): from `<dir>/_refs/tags/<tag>.json`, read anew on every call (tags
 * move). LNC_EINVAL for a name Lance would not allow, LNC_ENOTFOUND for no such tag,
 * LNC_EUNSUPPORTED for a tag of another branch. */
LNC_API int lnc_dataset_tag(const char *dir, const char *tag, uint64_t *version, struct lnc_error *err);

/* As lnc_take, with ids = offsets among the dataset's live rows in fragment order (what
 * Lance's dataset.take / LanceDB takeOffsets mean); an id >= lnc_dataset_num_rows is
 * LNC_ERANGE. Output: one child per selected top-level field (schema order when columns is
 * NULL, else in the order the fields are first named), rows in request order. Columns may
 * name Lance's pseudo-columns "_rowid" and "_rowaddr" (uint64, not null): they come after the
 * others, in the order named, as Lance's scanner places them. Thread-safe. */
LNC_API int lnc_dataset_take(lnc_dataset *ds, const uint64_t *ids, size_t n, const char *const *columns,
                             size_t ncolumns, struct ArrowSchema *schema, struct ArrowArray *array,
                             struct lnc_take_stats *stats, struct lnc_error *err);

/* JSON description (versions present, this version, schema, fragments with physical/live
 * rows, data files, deletion files) appended to *out. */
LNC_API int lnc_dataset_describe_json(const lnc_dataset *ds, struct lnc_buf *out, struct lnc_error *err);

struct lnc_take_options;
/* lnc_dataset_take with options (blob mode; NULL = defaults), as lnc_take_ex. */
LNC_API int lnc_dataset_take_ex(lnc_dataset *ds, const uint64_t *ids, size_t n,
                                const char *const *columns, size_t ncolumns,
                                const struct lnc_take_options *opts, struct ArrowSchema *schema,
                                struct ArrowArray *array, struct lnc_take_stats *stats,
                                struct lnc_error *err);

/* How blob columns (`lance-encoding:blob`, 2.2 blob v2) come back. Lance's own reader
 * returns descriptors; lanced serves the bytes they point to unless asked otherwise.
 * BYTES: a legacy blob column as its binary type; a blob v2 column as struct<data, uri>.
 * DESCRIPTORS: struct<position, size> (legacy) / struct<kind, position, size, blob_id,
 * blob_uri> (v2), exactly what Lance's takeOffsets returns. */
enum lnc_blob_mode { LNC_BLOBS_BYTES = 0,
                     LNC_BLOBS_DESCRIPTORS = 1 };
struct lnc_take_options {
  int blobs; /* enum lnc_blob_mode */
  /* Engine takes only (enum lnc_nowait). NEVER: never wait for the disk; the take fails at
   * once with LNC_EAGAIN if the file (or dataset version) is not in the search cache, the
   * engine reads O_DIRECT, or a read would miss the page cache (RWF_NOWAIT). A server calls
   * it on its network thread first and hands the request to a thread that may block only on
   * LNC_EAGAIN. Bytes the page cache was seen holding (cachestat, looked at most once a
   * second per MiB of file) are copied from a read-only mapping of the file instead of read
   * with a system call each; for that the library installs a SIGBUS handler on first use
   * (a file truncated under the mapping then fails the read instead of the process, and a
   * SIGBUS of anything else goes on to the handler installed before).
   * RING: inside an lnc_loop task, device reads park the task on the loop's io_uring;
   * everything that would block otherwise (a file or dataset version not in the search cache
   * yet, blob bytes) fails with LNC_EAGAIN, for a thread that may block. */
  int nowait;
  /* 0 = no limit. Otherwise the rows in request order (a row asked for twice counted twice)
   * are sized before they are copied, as a lower bound of their Arrow layout (values, 4-byte
   * offsets, booleans as bits, a dictionary column's indices only), and over this many bytes
   * the take fails with LNC_ELIMIT, its message naming LNC_TAKE_LIMIT_TEXT. A server bounding
   * its answers passes its answer limit, so that many ids of one large row cost an error, not
   * the memory of the whole answer. The same limit bounds the work before that point: the
   * distinct rows decoded so far, blob bytes read, and list items (levels or values of
   * leaves under lists), of which at most max(max_bytes / 4, 2^24) are put in order: each
   * costs 13-16 bytes of working memory however small it is. */
  uint64_t max_bytes;
  /* enum lnc_ids_kind: what the ids are. Datasets only: a data file's row ids are its
   * offsets. */
  int ids;
  /* 0 = off. Otherwise binary and string values of a local file, and vectors (fixed-size
   * lists of byte-wide items, none null), are left in the file where they lie as they are
   * (uncompressed full-zip pages, 2.1+) and the page cache holds them: the answer's array
   * then names each value's file range instead of holding its bytes, so a server writes
   * them to its socket from a mapping of the file, one copy (the kernel's) instead of
   * three or four. Only whole columns: a column goes to the file when every requested page
   * of it can and its requested rows average this many bytes and hold four times as many
   * together (a lone vector of a few KiB is cheaper copied). Such an array is for
   * lnc_encode_arrow_ipc(_refs) only (which read or name the ranges); its variable-width
   * buffer (a vector's items buffer) is NULL. It keeps the file's mapping and a descriptor
   * of it while it lives. */
  uint64_t file_values_min;
};
/* OFFSETS: offsets among the live rows of the version (Lance's dataset.take, LanceDB's
 * takeOffsets). ROW_IDS: Lance row ids (takeRowIds): for a dataset without stable row ids
 * the row address, fragment id << 32 | row in the fragment; one that names no row of the
 * version, or a deleted one, is LNC_ENOTFOUND naming it. A dataset with stable row ids
 * (reader feature flag 2) is LNC_EUNSUPPORTED for now. */
enum lnc_ids_kind { LNC_IDS_OFFSETS = 0,
                    LNC_IDS_ROW_IDS = 1 };
/* In the message of a take refused by max_bytes (a server tells it from other LNC_ELIMITs);
 * a refusal for list items also names LNC_TAKE_ITEMS_TEXT. */
#define LNC_TAKE_LIMIT_TEXT "the take's limit"
#define LNC_TAKE_ITEMS_TEXT "list items"
enum lnc_nowait { LNC_NOWAIT_OFF = 0,
                  LNC_NOWAIT_NEVER = 1,
                  LNC_NOWAIT_RING = 2 };
/* lnc_take with options (NULL = defaults: blobs as bytes). */
LNC_API int lnc_take_ex(lnc_file *f, const uint64_t *ids, size_t n, const char *const *columns,
                        size_t ncolumns, const struct lnc_take_options *opts, struct ArrowSchema *schema,
                        struct ArrowArray *array, struct lnc_take_stats *stats, struct lnc_error *err);

/* ---- the take engine: a shared search cache and one I/O ring per worker thread --------
 * An engine keeps, for every file it has served, the file's search cache (footer, schema,
 * column metadata, mini-block chunk tables, dictionaries, repetition indices) loaded once
 * and shared read-only by all workers, within one memory budget (LRU by file) and a bound
 * on open descriptors. A file replaced on disk (inode, size or mtime) is reloaded. Each
 * worker owns an io_uring ring (pread where io_uring is unavailable) through which its takes
 * read, O_DIRECT by default. Thread-safety: lnc_engine_* may be called from any thread;
 * a worker is used by one thread at a time. */
typedef struct lnc_engine lnc_engine;
typedef struct lnc_worker lnc_worker;

enum lnc_io_mode { LNC_IO_DIRECT = 0,
                   LNC_IO_BUFFERED = 1 };

struct lnc_engine_config {
  const char *root;             /* paths are relative to this directory and never leave it
                                (openat2 RESOLVE_BENEATH); NULL = paths as given */
  uint64_t cache_budget;        /* bytes of search cache across all files (0 = 1 GiB) */
  uint32_t max_open_files;      /* files kept open (0 = a sixth of RLIMIT_NOFILE: each holds up to
                                three descriptors; <= 65536) */
  int io_mode;                  /* enum lnc_io_mode */
  uint64_t repidx_max;          /* keep full-zip repetition indices up to this many bytes per
                                page (UINT64_MAX = always, 0 = never: two reads per row) */
  uint64_t merge_gap;           /* merge reads this close together (bytes) */
  uint32_t block_size;          /* O_DIRECT alignment (0 = 4096) */
  unsigned ring_depth;          /* io_uring entries per worker (0 = 256) */
  uint32_t revalidate_ms;       /* a cached file's identity (device, inode, size, mtime,
                                ctime) and a dataset's latest version are checked against the
                                disk at most this often; 0 = on every call */
  uint64_t object_cache_budget; /* bytes of object-store pages kept in memory, apart from
                                   cache_budget (lnc_engine_mount_s3; 0 = none) */
  uint32_t object_cache_block;  /* their size: a power of two, 4 KiB..4 MiB (0 = 16 KiB) */
};
LNC_API void lnc_engine_config_default(struct lnc_engine_config *cfg);

struct lnc_engine_stats {
  uint64_t takes, rows, reads, bytes_read, bytes_decoded;
  uint64_t cache_hits, cache_misses, cache_loads, cache_evictions;
  uint64_t resident_bytes, budget_bytes, files_cached, open_files;
  /* datasets (lnc_engine_dataset_*): opened versions held, their bytes (part of
   * resident_bytes), `_versions/` listings and version opens (manifest + deletions read) */
  uint64_t datasets_cached, dataset_bytes, dataset_listings, dataset_opens;
  /* of dataset_bytes: the stable row id indexes of those versions (row-id takes) */
  uint64_t rowid_index_bytes;
  /* object-store mounts: reads served from the page cache or not, its bytes and budget */
  uint64_t object_cache_hits, object_cache_misses, object_cache_bytes, object_cache_budget;
};

LNC_API int lnc_engine_new(const struct lnc_engine_config *cfg, lnc_engine **out, struct lnc_error *err);
/* Frees the engine and every cached file; all workers must be freed first. */
LNC_API void lnc_engine_free(lnc_engine *e);
/* Changes the budget (evicting down to it) — e.g. on a configuration reload. */
LNC_API void lnc_engine_set_budget(lnc_engine *e, uint64_t bytes);
LNC_API void lnc_engine_get_stats(lnc_engine *e, struct lnc_engine_stats *out);

/* ---- object-store roots ------------------------------------------------------------------
 * A bucket prefix (s3://bucket[/prefix], S3 or an S3-compatible store) mounted as the first
 * path component `name`: the engine then reads "name/a/b.lance" from s3://bucket/prefix/a/b.lance
 * and a dataset "name/ds" from the objects under .../ds/ (listing _versions/), with the same
 * search cache, budget and answers as a local file. Files are opened with one GET of their last
 * 64 KiB (a suffix range: it says the size and ETag too), then every page's tables fetched in
 * one parallel batch; a take's reads are merged (merge_gap) into GETs sent in parallel; an
 * object's identity is its ETag, checked by a HEAD every revalidate_ms, and every GET carries
 * If-Match, so a take never mixes two versions. Takes of mounted paths wait for the network:
 * with opts->nowait they are refused (LNC_EAGAIN) before any request. Credentials are never
 * part of a message. */
enum lnc_s3_addressing { LNC_S3_AUTO = 0, /* path style when an endpoint is set (S3-compatible
                                               stores), unless AWS_VIRTUAL_HOSTED_STYLE_REQUEST=true */
                         LNC_S3_PATH = 1, /* endpoint/bucket/key */
                         LNC_S3_VIRTUAL = 2 /* bucket.endpoint/key */ };
struct lnc_s3_options {
  /* NULL = AWS's environment variable of the same meaning: AWS_ENDPOINT_URL (unset: AWS's own
   * regional endpoint), AWS_REGION or AWS_DEFAULT_REGION (unset: us-east-1), AWS_ACCESS_KEY_ID,
   * AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN. */
  const char *endpoint, *region, *access_key_id, *secret_access_key, *session_token;
  int addressing;         /* enum lnc_s3_addressing */
  uint64_t merge_gap;     /* reads closer than this share a GET (0 = 64 KiB) */
  unsigned max_parallel;  /* GETs in flight per take (0 = 32) */
  uint32_t timeout_ms;    /* a call's deadline, retries included (0 = 30 s) */
  uint32_t revalidate_ms; /* HEAD / re-list at most this often (0 = the engine's revalidate_ms) */
};
/* Before the first worker is made (LNC_EINVAL after). name: one path component, not "." or
 * "..", unique; it hides a local entry of the same name. opt may be NULL (all from the
 * environment). Settings are checked now (LNC_EINVAL names the one missing or malformed); the
 * store is first contacted by the first take. At most 64 mounts. */
LNC_API int lnc_engine_mount_s3(lnc_engine *e, const char *name, const char *url,
                                const struct lnc_s3_options *opt, struct lnc_error *err);

LNC_API int lnc_worker_new(lnc_engine *e, lnc_worker **out, struct lnc_error *err);
LNC_API void lnc_worker_free(lnc_worker *w);

/* As lnc_take_ex, for the file at path (relative to the engine's root). A path naming a
 * directory is taken as a dataset, its latest version (lnc_engine_dataset_take, version 0),
 * found by the same stat that checks a cached file for changes. */
LNC_API int lnc_engine_take(lnc_worker *w, const char *path, const uint64_t *ids, size_t n,
                            const char *const *columns, size_t ncolumns,
                            const struct lnc_take_options *opts, struct ArrowSchema *schema,
                            struct ArrowArray *array, struct lnc_take_stats *stats,
                            struct lnc_error *err);
/* lnc_file_describe_json of the cached file (search-cache state included), the Arrow schema
 * (caller releases; may be NULL), rows and version. Any output pointer may be NULL. */
LNC_API int lnc_engine_describe(lnc_worker *w, const char *path, struct lnc_buf *json,
                                struct ArrowSchema *schema, uint64_t *num_rows, int *major, int *minor,
                                struct lnc_error *err);

/* ---- datasets through the engine ------------------------------------------------------
 * A dataset is a directory (relative to the engine's root, opened beneath it) holding
 * _versions/, data/ and _deletions/. Its data files are read through the engine's search
 * cache as "<dir>/data/<file>" — one budget for files and datasets alike. Opened versions
 * (manifest, deletion vectors, row map) are cached per (dir, version) and their bytes count
 * in the budget. version 0 = the latest: each call stats `_versions/` and lists it again when
 * it changed (or changed less than 100 ms before the last listing), so a version committed
 * while the engine runs is served by the next call. A call resolves one version at its start
 * and reads that version to its end; a cached version is dropped once no call uses it and it
 * is no longer the latest. Errors: a damaged dataset (manifest missing or torn, a listed data
 * or deletion file absent or unreadable) is LNC_ECORRUPT; a version that does not exist, or
 * a directory without _versions/, LNC_ENOTFOUND. A shallow clone's source (a base path in its
 * manifest) is read only below the root or under a mount: LNC_EACCES elsewhere.
 * Thread-safety as lnc_engine_take. */

/* 1 when path (relative to the root, beneath it) is a directory, i.e. names a dataset. */
LNC_API int lnc_engine_is_dataset(lnc_worker *w, const char *path);
/* As lnc_dataset_take_ex on version `version` (0 = latest) of the dataset at dir. */
LNC_API int lnc_engine_dataset_take(lnc_worker *w, const char *dir, uint64_t version,
                                    const uint64_t *ids, size_t n, const char *const *columns,
                                    size_t ncolumns, const struct lnc_take_options *opts,
                                    struct ArrowSchema *schema, struct ArrowArray *array,
                                    struct lnc_take_stats *stats, struct lnc_error *err);
/* lnc_dataset_tag for the dataset at dir through the engine (beneath the root, or under a
 * mount). nowait as opts->nowait of a take: under a mount, LNC_EAGAIN where the caller cannot
 * wait for the store or park. */
LNC_API int lnc_engine_dataset_tag(lnc_worker *w, const char *dir, const char *tag, int nowait, uint64_t *version,
                                   struct lnc_error *err);
/* lnc_dataset_describe_json of that version (appended to *json), its Arrow schema (one child
 * per top-level field, read through the engine; caller releases), live rows, the version
 * number resolved and the data files' format version (lnc_dataset_data_format). Any output
 * pointer may be NULL. */
LNC_API int lnc_engine_dataset_describe(lnc_worker *w, const char *dir, uint64_t version,
                                        struct lnc_buf *json, struct ArrowSchema *schema,
                                        uint64_t *num_rows, uint64_t *version_out, int *major,
                                        int *minor, struct lnc_error *err);

/* ---- an event loop that drives takes on io_uring ---------------------------------------
 * A loop belongs to one thread and owns an io_uring that carries the thread's device reads
 * and its readiness waits alike. lnc_loop_spawn runs fn(arg) as a task on a stack of its
 * own: where a take inside it (through any worker, opts->nowait = LNC_NOWAIT_RING)
 * would wait for the device, the task parks and lnc_loop_spawn returns with *parked = 1.
 * lnc_loop_wait then hands the kernel the reads of every task parked since its last call
 * together with a one-shot POLLIN for each watched descriptor, in one io_uring_enter; waits
 * for a completion, a watched descriptor or the timeout; and resumes the tasks whose reads
 * are in, which run on (fn may end there). Where io_uring is unavailable tasks read with
 * pread and never park. Nothing here is thread-safe: call it all from the loop's thread. */
typedef struct lnc_loop lnc_loop;
/* depth = SQ entries (0 = 1024). A loop knows nothing of engines: a thread that takes on
 * its loop makes a worker of its own (lnc_worker_new) beside it and owns both; inside a task
 * the worker's reads go through the loop's io_uring. The caller owns the loop. */
LNC_API int lnc_loop_new(unsigned depth, lnc_loop **out, struct lnc_error *err);
LNC_API void lnc_loop_free(lnc_loop *l); /* parked tasks are dropped, not resumed */
/* Not from inside a task. LNC_ELIMIT when 4096 tasks are parked already. */
LNC_API int lnc_loop_spawn(lnc_loop *l, void (*fn)(void *arg), void *arg, int *parked,
                           struct lnc_error *err);
/* One iteration. fds[0..nfds) (nfds <= 64) are watched for POLLIN; bit i of *ready is set
 * when fds[i] became readable. timeout_ms < 0 = no timeout. */
LNC_API int lnc_loop_wait(lnc_loop *l, const int *fds, int nfds, int timeout_ms, uint64_t *ready,
                          struct lnc_error *err);
/* Inside a task: parks it for ms milliseconds (an io_uring timeout). Elsewhere: sleeps. */
LNC_API void lnc_loop_sleep(unsigned ms);
struct lnc_loop_stats {
  uint64_t waits;        /* lnc_loop_wait calls */
  uint64_t enters;       /* io_uring_enter calls made by them */
  uint64_t submitted;    /* SQEs they handed the kernel (reads, polls, timeouts) */
  uint64_t completions;  /* CQEs reaped */
  uint64_t tasks;        /* tasks started */
  uint64_t parked_tasks; /* of those, tasks that parked at least once */
  uint64_t parks;        /* parks in all */
  uint64_t tasks_live;   /* stacks allocated (in use or free for reuse) */
};
LNC_API void lnc_loop_get_stats(const lnc_loop *l, struct lnc_loop_stats *out);
LNC_API bool lnc_loop_uses_uring(const lnc_loop *l);

/* A device probe, for tools that judge takes against the disk: random block-aligned reads of
 * len bytes (a share p_long of them one 4 KiB block longer), depth at a time, through the
 * io_uring reader the takes use, on fd (opened O_DIRECT when direct) of size bytes, until
 * `seconds` have passed. *reads_done = reads completed, also on failure. */
struct lnc_probe {
  int fd;
  bool direct;
  uint64_t size, len;
  unsigned depth; /* 1..4096 */
  double p_long, seconds;
  uint64_t seed;
};
LNC_API int lnc_read_probe(const struct lnc_probe *p, uint64_t *reads_done, struct lnc_error *err);

/* Opens rel beneath the directory dirfd (O_RDONLY | O_CLOEXEC | flags) without ever leaving
 * it: openat2 RESOLVE_BENEATH where the kernel has it, else a component-by-component walk that
 * refuses every symlink; absolute paths and ".." are refused on every kernel. Returns a
 * descriptor (the caller closes it) or -1 with errno (EXDEV / ELOOP: the path would leave). */
LNC_API int lnc_open_beneath(int dirfd, const char *rel, int flags);

/* ---- Arrow types: the one vocabulary ----------------------------------------------------
 * Every Arrow C Data format string liblance produces or encodes, parsed once into a kind and
 * its parameters. The reader's schema, the encoders, concatenation and lanced's protocol
 * code all classify types with it, so they accept exactly the same set. */
enum lnc_atype {
  LNC_AT_NULL,
  LNC_AT_BOOL,
  LNC_AT_INT,          /* bits 8/16/32/64, is_signed */
  LNC_AT_FLOAT,        /* bits 16/32/64 */
  LNC_AT_BINARY,       /* int32 offsets */
  LNC_AT_LARGE_BINARY, /* int64 offsets */
  LNC_AT_UTF8,
  LNC_AT_LARGE_UTF8,
  LNC_AT_FIXED_BINARY, /* width bytes */
  LNC_AT_DECIMAL,      /* precision, scale, bits 32/64/128/256 */
  LNC_AT_DATE32,       /* days */
  LNC_AT_DATE64,       /* milliseconds */
  LNC_AT_TIME,         /* unit, bits 32 (s, ms) / 64 (us, ns) */
  LNC_AT_TIMESTAMP,    /* unit, tz (NULL or "" = none; points into the format string) */
  LNC_AT_DURATION,     /* unit */
  LNC_AT_LIST,
  LNC_AT_LARGE_LIST,
  LNC_AT_FIXED_LIST, /* width items */
  LNC_AT_STRUCT,
  LNC_AT_MAP /* laid out as a list (int32 offsets) of one "entries" struct of key and value */
};

enum lnc_tunit { LNC_TU_S = 0,
                 LNC_TU_MS = 1,
                 LNC_TU_US = 2,
                 LNC_TU_NS = 3 }; /* = Arrow's TimeUnit */

struct lnc_atype_info {
  enum lnc_atype kind;
  int bits;                 /* INT, FLOAT, DECIMAL, TIME; byte width*8 of fixed-width values */
  bool is_signed;           /* INT */
  int unit;                 /* enum lnc_tunit for TIME, TIMESTAMP, DURATION */
  int32_t width;            /* FIXED_BINARY bytes, FIXED_LIST items */
  int32_t precision, scale; /* DECIMAL */
  const char *tz;           /* TIMESTAMP: the zone text after the ':' (may be empty), else NULL */
};

/* Parses one format string. Dictionary-encoded fields carry their index type in `format`;
 * callers check schema->dictionary themselves. Unknown or malformed → LNC_EUNSUPPORTED. */
LNC_API int lnc_arrow_parse_format(const char *format, struct lnc_atype_info *out, struct lnc_error *err);

/* A decimal value as exact text, as the JSON encoder writes it without the quotes: "-12.50",
 * "0.0012", "1200" (scale -2). value: a little-endian two's complement integer of bits 32,
 * 64, 128 or 256; scale within [LNC_DECIMAL_MIN_SCALE, LNC_DECIMAL_MAX_SCALE] (what
 * lnc_arrow_parse_format accepts). Writes at most LNC_DECIMAL_STR_MAX bytes with the NUL;
 * returns the length, or -1 (LNC_EINVAL: bits or scale out of range, cap too small). */
#define LNC_DECIMAL_MIN_SCALE (-128)
#define LNC_DECIMAL_MAX_SCALE 127
#define LNC_DECIMAL_STR_MAX   256
LNC_API int lnc_decimal_format(const void *value, int bits, int32_t scale, char *out, size_t cap);

/* ---- output encoders (shared by lancectl and lanced) -------------------------------- */
/* Appends s[0..n) to out as a JSON string literal: quoted, escaped, and every byte that is
 * not part of valid UTF-8 replaced by U+FFFD, so a body is valid UTF-8 JSON whatever bytes a
 * name, path or message carries. LNC_ENOMEM / LNC_EINVAL (out NULL). */
LNC_API int lnc_json_str(struct lnc_buf *out, const char *s, size_t n);
/* JSON body: {"num_rows":K,"columns":[...],"rows":[{...},...]} per docs/json-rows.md. */
LNC_API int lnc_encode_json(const struct ArrowSchema *schema, const struct ArrowArray *array,
                            struct lnc_buf *out, struct lnc_error *err);
/* As lnc_encode_json, failing with LNC_ELIMIT (out unchanged) once the body passes max_len
 * bytes (0 = no bound): checked row by row, so it stops within a row of the bound. */
LNC_API int lnc_encode_json_max(const struct ArrowSchema *schema, const struct ArrowArray *array, size_t max_len,
                                struct lnc_buf *out, struct lnc_error *err);
/* Arrow IPC stream: schema message, one record batch, end-of-stream marker. */
LNC_API int lnc_encode_arrow_ipc(const struct ArrowSchema *schema, const struct ArrowArray *array,
                                 struct lnc_buf *out, struct lnc_error *err);
/* A run of an encoded stream's bytes that stays where it lies: ptr[0..len) comes after the
 * first `at` bytes of the encoder's out buffer (and after the refs before it). */
struct lnc_ipc_ref {
  size_t at;
  const void *ptr;
  size_t len;
  /* -1: ptr is memory of the array's. Otherwise the bytes are [off, off+len) of the file open
   * as fd (the array's own descriptor, open while it lives) and ptr points into a read-only
   * mapping of it: hand it to the kernel (writev/sendmsg copy from the page cache; a file
   * truncated meanwhile fails the write with EFAULT), and pread(fd) to read them yourself
   * (a load from the mapping of a truncated file is a SIGBUS). */
  int fd;
  uint64_t off;
};
/* As lnc_encode_arrow_ipc, without copying value buffers of min_ref bytes or more (0 means
 * 1: every plain value buffer): out gets the rest, and *refs (malloc'd, the caller frees
 * it; NULL when *nrefs is 0) names each buffer left in place, in order of `at`. The stream
 * is out's bytes with each ref's inserted at its `at`, byte for byte what
 * lnc_encode_arrow_ipc writes; the refs point into array's buffers, so array must not be
 * released while they are used (written to a socket with writev/sendmsg). Values a take
 * left in the file (file_values_min) are file refs (fd >= 0), whatever their size: one per
 * value, or per run of values that lie back to back in the file. */
LNC_API int lnc_encode_arrow_ipc_refs(const struct ArrowSchema *schema, const struct ArrowArray *array, size_t min_ref,
                                      struct lnc_buf *out, struct lnc_ipc_ref **refs, size_t *nrefs,
                                      struct lnc_error *err);

#ifdef __cplusplus
}
#endif
#endif
