/* The object-store read backend (issue 15): S3 and S3-compatible stores (MinIO, R2, GCS's
 * XML API, Ceph RGW) read through libcurl. What the take path needs of a file is what this
 * gives: an object's size and version (HEAD: Content-Length, ETag) and a batch of byte ranges
 * (struct lnc_read, the same seam as the local ring), coalesced for a high-latency device and
 * fetched in parallel.
 *
 * Requests are SigV4-signed by libcurl (CURLOPT_AWS_SIGV4); a client is one curl multi handle,
 * so connections are kept alive and reused across batches. The multi handle is driven through
 * its socket interface (curl_multi_socket_action): libcurl says which sockets it waits on and
 * for how long, and the client keeps exactly those in its own epoll set. Inside an event loop's
 * task (lnc_loop) the task parks while its exchanges are in flight — the loop's io_uring polls
 * that epoll set — so the loop's thread serves other connections meanwhile; elsewhere (a thread
 * of the daemon's object-store pool, lancectl) the call sleeps in epoll_wait.
 *
 * Not thread-safe: a client serves one call at a time (sources and mounts lend one per call from
 * a per-thread pool). Credentials are held by the client and
 * never appear in an error message. */
#ifndef LNC_IO_S3_H
#define LNC_IO_S3_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "io.h"
#include "../lance.h"

struct lnc_s3_config {
  const char *endpoint;   /* "http[s]://host[:port]"; NULL = https://s3.<region>.amazonaws.com */
  const char *region;     /* NULL = "us-east-1" */
  const char *bucket;     /* required */
  bool path_style;        /* endpoint/bucket/key (MinIO, s3rver) rather than bucket.host/key */
  bool virtual_asked;     /* bucket.host/key asked for by name: kept even for a dotted bucket */
  const char *access_key; /* required, with secret_key */
  const char *secret_key;
  const char *session_token;   /* NULL unless temporary credentials */
  uint32_t attempt_timeout_ms; /* one HTTP exchange (0 = 10 s) */
  uint32_t deadline_ms;        /* a whole call, retries included (0 = 30 s) */
  unsigned max_attempts;       /* per range, first try included (0 = 5) */
  uint32_t backoff_base_ms;    /* retry n waits a random time in [0, min(cap, base * 2^n)] (0 = 50) */
  uint32_t backoff_cap_ms;     /* (0 = 2000) */
  uint64_t merge_gap;          /* ranges closer than this are one GET (0 = 64 KiB: a round trip
                                  costs far more than the bytes between) */
  uint64_t max_merged;         /* a merged GET grows no larger than this (0 = 8 MiB) */
  unsigned max_parallel;       /* GETs in flight per call (0 = 32) */
  unsigned list_page_keys;     /* max-keys of a listing page (0 = the store's, 1,000 on S3) */
};

struct lnc_s3;

/* What HEAD says of an object: its length and its version (ETag, quotes included). */
struct lnc_s3_object {
  uint64_t size;
  char etag[130];
};

/* Copies every string of cfg. LNC_EINVAL names the missing or malformed setting. */
int lnc_s3_new(const struct lnc_s3_config *cfg, struct lnc_s3 **out, struct lnc_error *err);
void lnc_s3_free(struct lnc_s3 *s); /* NULL is fine */

/* HEAD of key (below the bucket, no leading '/'). 404 -> LNC_ENOTFOUND, 403 -> LNC_EACCES,
 * anything else that fails after the retries -> LNC_EIO; every message names s3://bucket/key. */
int lnc_s3_head(struct lnc_s3 *s, const char *key, struct lnc_s3_object *out, struct lnc_error *err);

/* Every read of the batch from the object HEAD described (reads past obj->size are
 * LNC_ECORRUPT before any request). Reads are sorted and merged (within merge_gap, up to
 * max_merged), the merged ranges fetched at once (up to max_parallel in flight) with
 * If-Match: obj->etag, so an object replaced since HEAD is an error (LNC_EIO "changed"),
 * never a mix of two versions. 5xx, 429, resets, timeouts and short bodies are retried with
 * capped, jittered backoff within the deadline. A merged range's body is held from its GET's
 * start until its reads are copied out: max_parallel bodies at most, whatever the batch's size. stats (may be NULL): reads += GETs sent,
 * bytes_read += body bytes received. */
int lnc_s3_read_batch(struct lnc_s3 *s, const char *key, const struct lnc_s3_object *obj,
                      struct lnc_read *reads, size_t n, struct lnc_take_stats *stats,
                      struct lnc_error *err);

/* The object's last `max` bytes (all of it when smaller; max <= 8 MiB) in one GET with a
 * suffix range, and what the answer says of the object: its size and ETag (*obj). *buf
 * (malloc'd) holds obj->size - *off bytes, those from *off to the end. if_match (may be NULL):
 * the version it must be. So an object is opened in one round trip instead of HEAD + GET. */
int lnc_s3_get_tail(struct lnc_s3 *s, const char *key, uint64_t max, const char *if_match,
                    struct lnc_s3_object *obj, uint8_t **buf, uint64_t *off, struct lnc_error *err);

/* Every object whose key starts with prefix (ListObjectsV2, page after page): fn(ctx, key,
 * size) for each, in the store's order (S3: by key); keys of the answer that do not start with
 * prefix (a store ignoring the parameter) are skipped. fn returning non-zero stops the listing
 * and is returned. A listing that does not end (a token repeated, 10,000 pages) is LNC_EIO. */
int lnc_s3_list(struct lnc_s3 *s, const char *prefix, int (*fn)(void *ctx, const char *key, uint64_t size),
                void *ctx, struct lnc_error *err);

/* ---- an object as a file's byte source ------------------------------------------------------
 * What a Lance file opened from the store holds: the settings (strings owned), the key, the
 * version HEAD saw and the object's tail (its last 64 KiB: footer and metadata, fetched at
 * open). Shared by every thread reading the file; each thread reads through its own client
 * (one per thread and settings, made on first use, freed when the thread exits). */
struct lnc_s3_source;

/* s3://bucket/key with settings from the environment, as AWS's tools read them:
 * AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION (else
 * AWS_DEFAULT_REGION, else us-east-1), AWS_ENDPOINT_URL (S3-compatible stores; path-style
 * addressing then, unless AWS_VIRTUAL_HOSTED_STYLE_REQUEST=true). HEADs the object. */
int lnc_s3_source_open(const char *url, struct lnc_s3_source **out, struct lnc_error *err);
void lnc_s3_source_free(struct lnc_s3_source *src); /* NULL is fine */
const struct lnc_s3_object *lnc_s3_source_object(const struct lnc_s3_source *src);
/* Whether the source keeps what it fetches in a page cache (a mount's, with a budget). */
bool lnc_s3_source_caches(const struct lnc_s3_source *src);
/* The batch through the calling thread's client (see lnc_s3_read_batch). */
int lnc_s3_source_read(struct lnc_s3_source *src, struct lnc_read *reads, size_t n,
                       struct lnc_take_stats *stats, struct lnc_error *err);

/* [off, off+len) of the object `name` next to the source's (in its key's directory: a data
 * file's blob sidecar), read through the source's settings and client: a HEAD, then a ranged
 * GET of that version. Not cached. A missing object is LNC_ECORRUPT (the data file names it). */
int lnc_s3_source_read_sibling(struct lnc_s3_source *src, const char *name, uint64_t off, uint64_t len,
                               uint8_t *dst, struct lnc_take_stats *stats, struct lnc_error *err);

/* ---- the page cache (s3cache.c) -------------------------------------------------------------
 * Blocks of `block` bytes (block-aligned; an object's last one may be short) of object versions,
 * in memory under `budget` bytes, LRU. A version is named by an id drawn from the cache when its
 * source opens. Thread-safe. */
struct lnc_s3_cache;
struct lnc_s3_cache_stats {
  uint64_t hits, misses; /* reads served whole from the cache / not */
  uint64_t inserts, evictions, bytes, budget;
};
int lnc_s3_cache_new(uint64_t budget, uint32_t block, struct lnc_s3_cache **out, struct lnc_error *err);
void lnc_s3_cache_free(struct lnc_s3_cache *c); /* NULL is fine; after every source using it */
uint32_t lnc_s3_cache_block(const struct lnc_s3_cache *c);
uint64_t lnc_s3_cache_new_id(struct lnc_s3_cache *c);
/* true, and [off, off+len) of version id copied to dst, when every block it touches is cached. */
bool lnc_s3_cache_read(struct lnc_s3_cache *c, uint64_t id, uint64_t off, uint64_t len, uint8_t *dst);
void lnc_s3_cache_insert(struct lnc_s3_cache *c, uint64_t id, uint64_t index, const uint8_t *data,
                         uint32_t len);
void lnc_s3_cache_stats(struct lnc_s3_cache *c, struct lnc_s3_cache_stats *st); /* c may be NULL */

/* ---- a bucket prefix mounted as a tree of paths (the engine's object-store roots) ----------
 * Paths below a mount (`rel`) are relative, with no empty, "." or ".." component (refused:
 * a URL's dot segments are squashed on the way, so they could name keys outside the mount).
 * Every source opened through a mount shares its per-thread client. Thread-safe once made;
 * it must outlive its sources. */
struct lnc_s3_mount;

/* url = s3://bucket[/prefix]. cfg (may be NULL) as for lnc_s3_new without the bucket; a
 * string it leaves NULL comes from the environment as lnc_s3_source_open reads it.
 * addressing: enum lnc_s3_addressing (lance.h). cache (may be NULL): where the mount's sources
 * keep the blocks they fetch; it must outlive them. A client is made once to check the
 * settings. */
int lnc_s3_mount_new(const char *url, const struct lnc_s3_config *cfg, int addressing,
                     struct lnc_s3_cache *cache, struct lnc_s3_mount **out, struct lnc_error *err);
void lnc_s3_mount_free(struct lnc_s3_mount *m); /* NULL is fine */
/* For uri = s3://bucket/key: the key below the mount's prefix (pointing into uri; may be "",
 * may end in '/'), or NULL when the object is not under the mount or the key has an empty,
 * "." or ".." component (one a URL would squash out of the mount). */
const char *lnc_s3_mount_key_of(const struct lnc_s3_mount *m, const char *uri);
int lnc_s3_mount_head(const struct lnc_s3_mount *m, const char *rel, struct lnc_s3_object *out,
                      struct lnc_error *err);
/* The whole object (a HEAD, then one GET of that version); larger than limit: LNC_ELIMIT. */
int lnc_s3_mount_get(const struct lnc_s3_mount *m, const char *rel, size_t limit, uint8_t **out,
                     size_t *len, struct lnc_error *err);
/* lnc_s3_list of the keys starting with rel; fn gets each key without rel. */
int lnc_s3_mount_list(const struct lnc_s3_mount *m, const char *rel,
                      int (*fn)(void *ctx, const char *name, uint64_t size), void *ctx,
                      struct lnc_error *err);
/* A source for rel whose HEAD the caller made (obj): no second HEAD, one GET of the tail. */
int lnc_s3_mount_source(const struct lnc_s3_mount *m, const char *rel, const struct lnc_s3_object *obj,
                        struct lnc_s3_source **out, struct lnc_error *err);

/* One ListObjectsV2 page (xml[len] must be 0): fn for each <Contents>' Key and Size; *token
 * the NextContinuationToken of a truncated page, "" for the last. Malformed -> LNC_EIO,
 * messages prefixed with where. Separate from the fetching for the fuzz target. */
int lnc_s3_parse_list_page(const char *xml, size_t len, const char *where, char *token, size_t cap,
                           int (*fn)(void *ctx, const char *key, uint64_t size), void *ctx,
                           struct lnc_error *err);

#endif
