/* The service layer: the one caller of liblance (service.c) and the checks of the paths it is
 * given (paths.c). Knows nothing of HTTP. */
#ifndef LANCED_SERVICE_H
#define LANCED_SERVICE_H
#include "lanced.h"
#include "config.h"
#include <sys/uio.h>

/* ---- paths.c: relative path to descriptor, never outside the root ------------------------ */
/* Rejects what is not a plain relative path (.., absolute, NUL, control bytes, empty
 * segments), then opens it with openat2(RESOLVE_BENEATH). Returns an fd (caller owns it) or
 * -1 with e filled. */
int ld_path_check(const char *rel, struct ld_err *e);
int ld_path_open(int rootfd, const char *rel, struct ld_err *e);
/* The same for a directory ("" = the root itself, a new descriptor). */
int ld_path_open_dir(int rootfd, const char *rel, struct ld_err *e);


/* ---- service.c: the single place that calls into liblance --------------------------------- */
int ld_service_init(const struct ld_config *c);
/* Object-store mounts: how many, the i-th one's name, and the one rel is below (-1: none). */
int ld_service_mounts(void);
const char *ld_service_mount_name(int i);
int ld_service_mount_of(const char *rel);
/* A request of mount m (-1: none, always 0) begins waiting on its store (in the engine, or
 * queued for its threads): -1 and a 503 in e when the mount has its share of max_inflight
 * (max_inflight / (mounts + 1)) waiting already. Each 0 is paired with a leave. */
int ld_service_mount_enter(int m, struct ld_err *e);
void ld_service_mount_leave(int m);
void ld_service_reload(const struct ld_config *c); /* applies what can change live (budget, shares) */
void ld_service_shutdown(void);
void ld_service_stats(struct lnc_engine_stats *out);
enum ld_block { LD_BLOCK_NO = 0,
                LD_BLOCK_DISK = 1,    /* a take thread */
                LD_BLOCK_STORE = 2 }; /* + mount index: a thread of that mount's pool */
/* How one request calls the service, carried in the request (struct ld_req's call): set by
 * whoever runs it — its network thread, a take or object-store thread — before ld_route.
 * nowait (enum lnc_nowait): NEVER = the search cache and page cache only; RING = device
 * reads park the current loop task; OFF = may wait. would_block is the service's answer: the
 * attempt gave up because it needed to wait, and where (enum ld_block). Tasks of one thread
 * interleave, each with its own request, so nothing here is the thread's. */
struct ld_call {
  lnc_worker *worker; /* the running thread's (ld_service_thread_start) */
  int nowait;
  int would_block;
};
/* A thread that routes requests makes its engine worker (and, with loop, a loop: a network
 * thread's, whose tasks' reads park on its io_uring) before its first request (a network
 * thread as it starts, a take thread when its first request comes), owns them, and frees them
 * with ld_service_thread_stop when it ends. */
int ld_service_thread_start(lnc_loop **loop, lnc_worker **worker, struct ld_err *e);
void ld_service_thread_stop(lnc_loop *loop, lnc_worker *worker);
/* Takes rows of rel — a data file, or a dataset directory (ids = offsets among its live
 * rows) at `version` (NULL = the latest; a version for a file is a 400). max_response (the
 * request's max_response_bytes, 0 = none) bounds the take itself: 413 before copies of rows
 * that must exceed it are built. On success the caller owns schema and array and releases
 * them. stats are added to. */
/* for_arrow: the answer will be Arrow IPC (ld_service_encode_refs), so in buffered mode large
 * string and binary values the page cache holds may stay in their file, for HTTP/1.1 to write
 * from its mapping (lnc_take_options.file_values_min); the array is then for that encoder
 * only. */
int ld_service_take(struct ld_call *call, const char *rel, const uint64_t *version, const uint64_t *ids, size_t n,
                    const char *const *cols, size_t ncols, int blobs, int ids_kind, uint64_t max_response,
                    bool for_arrow, struct ArrowSchema *schema, struct ArrowArray *array,
                    struct lnc_take_stats *stats, struct ld_err *e);
/* The version tag `tag` of dataset rel names (LanceDB tags; read anew each time: tags move).
 * 400 for a name Lance would not allow or a path that is no dataset, 404 for no such tag. */
int ld_service_tag(struct ld_call *call, const char *rel, const char *tag, uint64_t *version, struct ld_err *e);
struct ld_file_info {
  int major, minor;  /* file format (a dataset: its data files' format) */
  uint64_t num_rows; /* a dataset: live rows of the version described */
  bool dataset;
  uint64_t ds_version;       /* a dataset: the version described */
  struct ArrowSchema schema; /* caller releases */
  struct lnc_buf describe;   /* caller frees (lnc_buf_free): file or dataset JSON */
};
int ld_service_describe(struct ld_call *call, const char *rel, const uint64_t *version,
                        struct ld_file_info *out, struct ld_err *e);
/* Encodes with the shared liblance encoders (JSON rows, Arrow IPC), appending to out. JSON
 * stops with a 413 once it passes max_len (0 = no bound). */
int ld_service_encode(int format, const struct ArrowSchema *s, const struct ArrowArray *a, size_t max_len,
                      struct lnc_buf *out, struct ld_err *e);
/* An Arrow IPC answer whose large value buffers stay in the take's array
 * (lnc_encode_arrow_ipc_refs), or in their file's mapping: the array, moved in and owned here
 * because the refs point into its buffers (and it holds the files' mappings), and room for
 * the iovecs an HTTP/1.1 answer sends it with (its head, then the runs of the body and the
 * refs: 2 + 2 * n). */
struct ld_refs {
  struct ArrowArray array;
  void *extra; /* more memory the refs point into (a protobuf answer's pool and schema) */
  void (*free_extra)(void *);
  struct lnc_ipc_ref *v;
  size_t n, bytes;     /* refs, and the bytes they hold */
  uint64_t file_bytes; /* of those, the bytes in files' mappings */
  struct iovec *iov;
};
/* Encodes the take (s, a) as Arrow IPC into out plus *refs (NULL when no buffer was large
 * enough to leave in place; a is then still the caller's). With *refs set, a has moved into
 * it (a->release NULL). Frees with ld_refs_free. */
int ld_service_encode_refs(const struct ArrowSchema *s, struct ArrowArray *a, struct lnc_buf *out,
                           struct ld_refs **refs, struct ld_err *e);
void ld_refs_free(struct ld_refs *refs);
/* The refs v[0..n) (malloc'd, taken) of an answer whose bytes lie in a (moved in) and in extra
 * (taken: freed with free_extra) as *refs; on failure all three are freed, out too, and -1. */
int ld_refs_make(struct lnc_ipc_ref *v, size_t n, struct ArrowArray *a, void *extra, void (*free_extra)(void *),
                 struct lnc_buf *out, struct ld_refs **refs, struct ld_err *e);
/* Value runs under this many bytes are copied into an answer, larger ones sent where they lie. */
size_t ld_service_ref_min(void);
uint64_t ld_service_open_handles(void);

#endif
