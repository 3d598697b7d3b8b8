/* The one place lanced calls into liblance: a take engine shared by all request threads
 * (search cache within the configured budget, files reopened when they change on disk) and
 * one engine worker per thread (its io_uring ring), made by the thread itself (a network
 * thread as it starts, with its loop; a take thread for its first request) and freed by it
 * as it ends (ld_service_thread_start/stop); plus the shared encoders. What a request may do
 * (wait or not, on which worker) travels with it in its struct ld_call. A path naming a
 * directory is a Lance dataset, served by the engine's dataset entry points (versions,
 * deletions, one budget). */
#include "lanced.h"
#include "config.h"
#include "service.h"
#include "metrics.h"
#include "util/assert.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static lnc_engine *engine;
/* The mounts' names (the first path component of every path they serve). */
static char mount_names[LD_MAX_MOUNTS][64];
static int nmount_names;
/* Requests of each mount in the engine (running on a thread, parked on a loop) or queued for
 * its object-store threads, and how many one mount may have: its share of max_inflight, the
 * local root counting as one more share. A store that stops answering holds each of its
 * requests for s3_timeout_ms; without a share its requests would take every max_inflight
 * slot, and local files and the other mounts would be refused "server busy" meanwhile. */
static unsigned mount_busy[LD_MAX_MOUNTS];
static unsigned mount_share;

static void set_mount_share(const struct ld_config *c) {
  uint64_t share = c->max_inflight / (uint64_t)(c->nmounts + 1);
  __atomic_store_n(&mount_share, (unsigned)(share ? share : 1), __ATOMIC_RELAXED);
}
/* io_mode direct: every take reads the device, so a non-blocking attempt can never answer. */
static bool direct_reads;
/* Takes of more ids than this leave the loop for a take thread (0 = none): CPU-heavy
 * decoding then never delays the other connections of a network thread. */
static uint64_t loop_max_ids;

/* The mount rel is below (its index), or -1: such a request waits on the network, parked
 * on a loop or on its mount's own threads. No system call. */
static int mount_of(const char *rel) {
  for (int i = 0; i < nmount_names; i++) {
    size_t n = strlen(mount_names[i]);
    if (!strncmp(rel, mount_names[i], n) && (rel[n] == '/' || !rel[n])) return i;
  }
  return -1;
}

int ld_service_mount_enter(int m, struct ld_err *e) {
  if (m < 0) return 0;
  unsigned share = __atomic_load_n(&mount_share, __ATOMIC_RELAXED);
  if (__atomic_add_fetch(&mount_busy[m], 1, __ATOMIC_RELAXED) <= share) return 0;
  __atomic_sub_fetch(&mount_busy[m], 1, __ATOMIC_RELAXED);
  ld_errf(e, LD_UNAVAILABLE,
          "mount '%s' has %u requests waiting on its store already (its share of max_inflight): the store "
          "answers slowly or not at all",
          mount_names[m], share);
  return -1;
}

void ld_service_mount_leave(int m) {
  if (m >= 0) __atomic_sub_fetch(&mount_busy[m], 1, __ATOMIC_RELAXED);
}

int ld_service_mounts(void) { return nmount_names; }
const char *ld_service_mount_name(int i) { return i >= 0 && i < nmount_names ? mount_names[i] : NULL; }
int ld_service_mount_of(const char *rel) { return mount_of(rel); }

int ld_service_thread_start(lnc_loop **loop, lnc_worker **worker, struct ld_err *e) {
  struct lnc_error le = {0};
  *worker = NULL;
  if (loop) {
    *loop = NULL;
    /* Test hook (tests/integration/daemon_nonblocking.sh): a loop that cannot start, as when
     * its memory or ring cannot be had. */
    if (getenv("LANCED_TEST_LOOP_FAIL")) return ld_errf(e, LD_INTERNAL, "loop: could not start (test hook)");
    if (lnc_loop_new(0, loop, &le)) return ld_err_from_lnc(e, &le), -1;
  }
  /* The thread owns both: its takes go through its own worker, whose reads inside one of
   * the loop's tasks park on the loop's io_uring. */
  if (lnc_worker_new(engine, worker, &le)) {
    if (loop) lnc_loop_free(*loop), *loop = NULL;
    return ld_err_from_lnc(e, &le), -1;
  }
  return 0;
}

void ld_service_thread_stop(lnc_loop *loop, lnc_worker *worker) {
  lnc_loop_free(loop);
  lnc_worker_free(worker);
}

/* In nowait mode an LNC_EAGAIN is not an answer: it marks the request for a take thread, or
 * for a thread of its mount's pool when rel is below a mount. */
static int fail(struct ld_call *call, struct ld_err *e, const struct lnc_error *le, const char *rel) {
  if (le->code == LNC_EAGAIN) {
    int m = mount_of(rel);
    call->would_block = m >= 0 ? LD_BLOCK_STORE + m : LD_BLOCK_DISK;
    ld_errf(e, LD_UNAVAILABLE, "retry on a take thread");
    return -1;
  }
  ld_err_from_lnc(e, le);
  return -1;
}

static int engine_config(const struct ld_config *c, struct lnc_engine_config *ec) {
  lnc_engine_config_default(ec);
  ec->root = c->root;
  ec->cache_budget = c->cache_budget;
  ec->io_mode = c->io_mode == LD_IO_DIRECT ? LNC_IO_DIRECT : LNC_IO_BUFFERED;
  ec->revalidate_ms = (uint32_t)c->revalidate_ms;
  ec->object_cache_budget = c->s3_cache_budget;
  ec->object_cache_block = (uint32_t)c->s3_cache_block;
  ec->repidx_max = c->rep_policy == LD_REP_ALWAYS  ? UINT64_MAX
                   : c->rep_policy == LD_REP_NEVER ? 0
                                                   : c->rep_max_bytes;
  return 0;
}

/* The daemon's S3 settings as the engine's (empty strings: the environment's). */
static void s3_options(const struct ld_config *c, struct lnc_s3_options *o) {
  memset(o, 0, sizeof *o);
  o->endpoint = c->s3_endpoint[0] ? c->s3_endpoint : NULL;
  o->region = c->s3_region[0] ? c->s3_region : NULL;
  o->access_key_id = c->s3_access_key_id[0] ? c->s3_access_key_id : NULL;
  o->secret_access_key = c->s3_secret_access_key[0] ? c->s3_secret_access_key : NULL;
  o->session_token = c->s3_session_token[0] ? c->s3_session_token : NULL;
  o->addressing = c->s3_addressing;
  o->merge_gap = c->s3_merge_gap;
  o->max_parallel = (unsigned)c->s3_max_parallel;
  o->timeout_ms = (uint32_t)c->s3_timeout_ms;
  o->revalidate_ms = (uint32_t)c->s3_revalidate_ms;
}

/* Every configured mount, before any worker exists (the engine requires it). */
static int mount_all(const struct ld_config *c) {
  struct lnc_s3_options o;
  s3_options(c, &o);
  for (int i = 0; i < c->nmounts; i++) {
    struct lnc_error le = {0};
    if (lnc_engine_mount_s3(engine, c->mounts[i].name, c->mounts[i].url, &o, &le)) {
      ld_log(LD_LOG_ERROR, "mount %s: %s", c->mounts[i].name, le.message);
      return -1;
    }
    snprintf(mount_names[i], sizeof mount_names[i], "%s", c->mounts[i].name);
    nmount_names = i + 1;
    ld_log(LD_LOG_INFO, "serving %s as /files/%s/", c->mounts[i].url, c->mounts[i].name);
  }
  return 0;
}

/* Value buffers under this stay copied into an Arrow answer: an iovec of its own costs more
 * than copying a few KiB (and most small answers stay one buffer). The test hook
 * LANCED_TEST_REF_MIN_BYTES lowers it (1: every value buffer a ref), so that tests send every
 * fixture's answer through the iovec path (tests/integration/daemon_arrow_bytes.py). */
#define REF_MIN_BYTES (16 * 1024)
static size_t ref_min_bytes = REF_MIN_BYTES;
/* A column's values stay in their file for an Arrow answer when its rows average this many
 * bytes (images, documents, vectors of 256 floats and more): each is an iovec of the
 * answer's sendmsg (h1.c; a run of them back to back in the file, one), where copied its
 * bytes go through three or four copies (read, order, gather, socket). The bench's 3 KiB
 * vectors sent from the file cost the daemon 13 % less CPU per batch of 256 training rows
 * (docs/performance.md); smaller values are not measured and stay copied.
 * LANCED_TEST_FILE_VALUES_MIN lowers it (1: every plain string, binary and vector column
 * the page cache holds), for the same tests. */
#define FILE_VALUES_MIN (1 * 1024)
static uint64_t file_values_min = FILE_VALUES_MIN;

int ld_service_init(const struct ld_config *c) {
  struct lnc_engine_config ec;
  engine_config(c, &ec);
  const char *rm = getenv("LANCED_TEST_REF_MIN_BYTES");
  if (rm && strtoull(rm, NULL, 10) > 0) ref_min_bytes = (size_t)strtoull(rm, NULL, 10);
  const char *fm = getenv("LANCED_TEST_FILE_VALUES_MIN");
  if (fm && strtoull(fm, NULL, 10) > 0) file_values_min = strtoull(fm, NULL, 10);
  direct_reads = ec.io_mode == LNC_IO_DIRECT;
  loop_max_ids = c->loop_max_ids;
  set_mount_share(c);
  struct lnc_error le = {0};
  if (lnc_engine_new(&ec, &engine, &le)) {
    ld_log(LD_LOG_ERROR, "cannot start the take engine: %s", le.message);
    return -1;
  }
  if (mount_all(c)) {
    lnc_engine_free(engine);
    engine = NULL;
    return -1;
  }
  return 0;
}

void ld_service_reload(const struct ld_config *c) {
  if (engine) lnc_engine_set_budget(engine, c->cache_budget);
  set_mount_share(c); /* max_inflight may have changed */
}

/* The worker of the thread running the call. Every thread that routes requests has made one
 * first; a call without one is a bug (asserted), answered 500 in release builds. */
static lnc_worker *worker(const struct ld_call *call, struct ld_err *e) {
  LNC_ASSERT(call && call->worker);
  if (!call || !call->worker) ld_errf(e, LD_INTERNAL, "no engine worker on this thread");
  return call ? call->worker : NULL;
}

uint64_t ld_service_open_handles(void) {
  struct lnc_engine_stats st;
  if (!engine) return 0;
  lnc_engine_get_stats(engine, &st);
  return st.open_files;
}

void ld_service_stats(struct lnc_engine_stats *out) {
  if (engine)
    lnc_engine_get_stats(engine, out);
  else
    memset(out, 0, sizeof *out);
}

/* A version pin only means something for a dataset. */
static int version_for_file(const char *rel, struct ld_err *e) {
  ld_errf(e, LD_INVALID,
          "version= applies to datasets (directories); %.900s is a file", rel);
  return -1;
}

static int tag_in(struct ld_call *call, const char *rel, const char *tag, uint64_t *version, struct ld_err *e) {
  int mode = call->nowait;
  lnc_worker *w = worker(call, e);
  if (!w) return -1;
  if (mount_of(rel) < 0 && !lnc_engine_is_dataset(w, rel)) {
    ld_errf(e, LD_INVALID, "a version tag applies to datasets (directories); %.900s is not one", rel);
    return -1;
  }
  struct lnc_error le = {0};
  return lnc_engine_dataset_tag(w, rel, tag, mode, version, &le) ? fail(call, e, &le, rel) : 0;
}

int ld_service_tag(struct ld_call *call, const char *rel, const char *tag, uint64_t *version, struct ld_err *e) {
  int m = mount_of(rel);
  if (ld_path_check(rel, e) || ld_service_mount_enter(m, e)) return -1;
  int rc = tag_in(call, rel, tag, version, e);
  ld_service_mount_leave(m);
  return rc;
}

/* The 413 for an answer over max_response_bytes, with the library's words for why. */
static int over_response(struct ld_err *e, uint64_t max_response, const char *why) {
  ld_errf(e, LD_TOO_LARGE, "the answer is over max_response_bytes (%llu): %.400s; ask for fewer ids or columns",
          (unsigned long long)max_response, why);
  return -1;
}

static int take_in(struct ld_call *call, const char *rel, const uint64_t *version, const uint64_t *ids, size_t n,
                   const char *const *cols, size_t ncols, int blobs, int ids_kind, uint64_t max_response,
                   bool for_arrow, struct ArrowSchema *schema, struct ArrowArray *array, struct lnc_take_stats *stats,
                   struct ld_err *e) {
  int mode = call->nowait;
  /* Buffered mode's inline attempt cannot park: before is_dataset's listing below. (A loop
   * task, RING, parks on the store's sockets like on its reads.) */
  if (mode == LNC_NOWAIT_NEVER && mount_of(rel) >= 0) {
    struct lnc_error le = {.code = LNC_EAGAIN};
    return fail(call, e, &le, rel);
  }
  if (mode == LNC_NOWAIT_RING && loop_max_ids && n > loop_max_ids) {
    struct lnc_error le = {.code = LNC_EAGAIN};
    return fail(call, e, &le, rel);
  }
  if (mode == LNC_NOWAIT_NEVER && direct_reads) {
    /* The engine would refuse it too, after a stat of the path: hand the request off
     * before any system call. */
    struct lnc_error le = {.code = LNC_EAGAIN};
    return fail(call, e, &le, rel);
  }
  lnc_worker *w = worker(call, e);
  if (!w) return -1;
  /* The answer limit bounds the take itself: many ids of one large row fail before their
   * copies are in memory (the encoded answer is checked against it again). */
  struct lnc_take_options opts = {.blobs = blobs, .nowait = mode, .max_bytes = max_response, .ids = ids_kind};
  /* Direct mode keeps the page cache out of it: its values are read, as the operator chose. */
  if (for_arrow && !direct_reads) opts.file_values_min = file_values_min;
  struct lnc_error le = {0};
  int rc;
  /* Without a version the engine tells a dataset from a file itself, by the stat it makes
   * anyway; asking first would cost every request two more system calls. */
  if (!version)
    rc = lnc_engine_take(w, rel, ids, n, cols, ncols, &opts, schema, array, stats, &le);
  else if (lnc_engine_is_dataset(w, rel))
    rc = lnc_engine_dataset_take(w, rel, *version, ids, n, cols, ncols, &opts, schema, array,
                                 stats, &le);
  else
    return version_for_file(rel, e);
  if (rc == LNC_ELIMIT && max_response && strstr(le.message, LNC_TAKE_LIMIT_TEXT)) return over_response(e, max_response, le.message);
  return rc ? fail(call, e, &le, rel) : 0;
}

int ld_service_take(struct ld_call *call, const char *rel, const uint64_t *version, const uint64_t *ids, size_t n,
                    const char *const *cols, size_t ncols, int blobs, int ids_kind, uint64_t max_response,
                    bool for_arrow, struct ArrowSchema *schema, struct ArrowArray *array,
                    struct lnc_take_stats *stats, struct ld_err *e) {
  int m = mount_of(rel);
  if (ld_path_check(rel, e) || ld_service_mount_enter(m, e)) return -1;
  int rc = take_in(call, rel, version, ids, n, cols, ncols, blobs, ids_kind, max_response, for_arrow, schema, array,
                   stats, e);
  ld_service_mount_leave(m);
  return rc;
}

static int describe_in(struct ld_call *call, const char *rel, const uint64_t *version,
                       struct ld_file_info *out, struct ld_err *e) {
  if (call->nowait) { /* a description may load the file: always on a take thread */
    struct lnc_error le = {.code = LNC_EAGAIN};
    return fail(call, e, &le, rel);
  }
  lnc_worker *w = worker(call, e);
  if (!w) return -1;
  struct lnc_error le = {0};
  int rc;
  if (lnc_engine_is_dataset(w, rel)) {
    out->dataset = true;
    rc = lnc_engine_dataset_describe(w, rel, version ? *version : 0, &out->describe, &out->schema,
                                     &out->num_rows, &out->ds_version, &out->major, &out->minor, &le);
  } else if (version) {
    return version_for_file(rel, e);
  } else {
    rc = lnc_engine_describe(w, rel, &out->describe, &out->schema, &out->num_rows, &out->major,
                             &out->minor, &le);
  }
  if (rc) {
    ld_err_from_lnc(e, &le);
    if (out->schema.release) out->schema.release(&out->schema);
    lnc_buf_free(&out->describe);
    return -1;
  }
  return 0;
}

int ld_service_describe(struct ld_call *call, const char *rel, const uint64_t *version,
                        struct ld_file_info *out, struct ld_err *e) {
  memset(out, 0, sizeof *out);
  int m = mount_of(rel);
  if (ld_path_check(rel, e) || ld_service_mount_enter(m, e)) return -1;
  int rc = describe_in(call, rel, version, out, e);
  ld_service_mount_leave(m);
  return rc;
}

int ld_service_encode(int format, const struct ArrowSchema *s, const struct ArrowArray *a, size_t max_len,
                      struct lnc_buf *out, struct ld_err *e) {
  struct lnc_error le = {0};
  /* JSON can be tens of times the take's Arrow bound (a boolean: a bit there, "false," here):
   * stopped as it passes max_len rather than built whole and then refused. Arrow IPC is the
   * take's layout, which the take already bounded. */
  int rc = format == LD_F_ARROW ? lnc_encode_arrow_ipc(s, a, out, &le) : lnc_encode_json_max(s, a, max_len, out, &le);
  if (rc == LNC_ELIMIT && max_len) return over_response(e, max_len, le.message);
  if (rc) {
    ld_err_from_lnc(e, &le);
    return -1;
  }
  return 0;
}

int ld_service_encode_refs(const struct ArrowSchema *s, struct ArrowArray *a, struct lnc_buf *out,
                           struct ld_refs **refs, struct ld_err *e) {
  *refs = NULL;
  struct lnc_error le = {0};
  struct lnc_ipc_ref *v = NULL;
  size_t n = 0;
  if (lnc_encode_arrow_ipc_refs(s, a, ref_min_bytes, out, &v, &n, &le)) {
    ld_err_from_lnc(e, &le);
    return -1;
  }
  if (!n) return 0;
  return ld_refs_make(v, n, a, NULL, NULL, out, refs, e);
}

size_t ld_service_ref_min(void) { return ref_min_bytes; }

int ld_refs_make(struct lnc_ipc_ref *v, size_t n, struct ArrowArray *a, void *extra, void (*free_extra)(void *),
                 struct lnc_buf *out, struct ld_refs **refs, struct ld_err *e) {
  struct ld_refs *r = calloc(1, sizeof *r);
  struct iovec *iov = r ? calloc(2 + 2 * n, sizeof *iov) : NULL;
  if (!iov) {
    free(r);
    free(v);
    if (free_extra) free_extra(extra);
    lnc_buf_free(out);
    return ld_errf(e, LD_EXHAUSTED, "out of memory for an answer's pieces"), -1;
  }
  r->v = v, r->n = n, r->iov = iov;
  for (size_t i = 0; i < n; i++) {
    r->bytes += v[i].len;
    if (v[i].fd >= 0) r->file_bytes += v[i].len;
  }
  r->array = *a; /* moved: the refs point into its buffers */
  a->release = NULL;
  r->extra = extra, r->free_extra = free_extra;
  *refs = r;
  return 0;
}

void ld_refs_free(struct ld_refs *r) {
  if (!r) return;
  if (r->array.release) r->array.release(&r->array);
  if (r->free_extra) r->free_extra(r->extra);
  free(r->v);
  free(r->iov);
  free(r);
}

/* Called once no request is in flight: request threads are stopped and have freed their
 * workers (ld_service_thread_stop). */
void ld_service_shutdown(void) {
  lnc_engine_free(engine);
  engine = NULL;
}
