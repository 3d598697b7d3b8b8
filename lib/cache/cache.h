/* Internal seams of the take engine, imported one way: route.c (the public lnc_engine_new,
 * _free, _get_stats and _take: what a path is, then straight down) uses the data-file cache
 * (engine.c) and the dataset-version cache (datasets.c); datasets.c reads its data files
 * through engine.c; engine.c uses neither (it only keeps the dataset cache's pointer for
 * them). The dataset cache opens beneath the engine's root and counts its bytes in the
 * engine's one budget. Not part of the public API. */
#ifndef LNC_CACHE_CACHE_H
#define LNC_CACHE_CACHE_H
#include <stdbool.h>
#include <stdint.h>
#include "../lance.h"

struct lnc_dscache;

/* datasets.c: made and freed with the engine; stats added to the engine's. */
int lnc_dscache_new(lnc_engine *e, struct lnc_dscache **out, struct lnc_error *err);
void lnc_dscache_free(struct lnc_dscache *c);
void lnc_dscache_stats(struct lnc_dscache *c, struct lnc_engine_stats *o);
/* Drops the least recently used dataset version no request uses (the latest of its directory
 * included: the next request opens it again); false when there is none, or when the cache's
 * lock is held (by this thread, charging a version it loaded: never wait for it). For the
 * engine's make_room once no idle file is left to evict. */
bool lnc_dscache_shed(struct lnc_dscache *c);
/* dir is gone, or no dataset: what is cached of it goes (versions in use go with their last
 * user). No system call. */
void lnc_dscache_forget(struct lnc_dscache *c, const char *dir);

/* engine.c: the data-file cache (search caches, LRU, budget, descriptors) */
int lnc_files_new(const struct lnc_engine_config *cfg, lnc_engine **out, struct lnc_error *err);
void lnc_files_free(lnc_engine *e);
void lnc_files_stats(lnc_engine *e, struct lnc_engine_stats *o); /* adds nothing for datasets */
lnc_engine *lnc_worker_engine(lnc_worker *w);
struct lnc_dscache *lnc_engine_dscache(lnc_engine *e);
void lnc_engine_attach_dscache(lnc_engine *e, struct lnc_dscache *c); /* route.c, once */
/* What make_room calls when the budget is exceeded and no idle file is left to evict: true
 * when it freed something (route.c sets it, so engine.c knows nothing of datasets). */
void lnc_engine_on_pressure(lnc_engine *e, bool (*shed)(void *ctx), void *ctx);
/* Reads O_DIRECT (io_mode direct): every take waits for the device, so nowait takes are
 * refused with LNC_EAGAIN before they resolve a path or plan a read. */
bool lnc_engine_direct(lnc_engine *e);
/* Whether something checked against the disk at `checked_ns` (lnc_engine_now_ns) is still
 * fresh under the engine's revalidate_ms. */
bool lnc_engine_fresh(lnc_engine *e, int64_t checked_ns);
int64_t lnc_engine_now_ns(void); /* CLOCK_MONOTONIC_COARSE: a vDSO read, no system call */
/* The number of rows of the data file at path, loading it into the search cache unless
 * nowait (then LNC_EAGAIN when it is not there yet). */
int lnc_engine_file_rows(lnc_worker *w, const char *path, bool nowait, uint64_t *rows,
                         struct lnc_error *err);
/* datasets.c: 1 when dir is a dataset directory this cache checked within revalidate_ms (under
 * a mount: ever listed), so a take of it can skip asking whether the path is a file. */
int lnc_dscache_known_dir(struct lnc_dscache *c, const char *dir);
/* openat2(root, path, RESOLVE_BENEATH) with O_RDONLY | O_CLOEXEC | flags; -1 and errno
 * (EXDEV / ELOOP when the path leaves the root). */
int lnc_engine_open_beneath(lnc_engine *e, const char *path, int flags);
/* A take of the data file at path (a directory is LNC_ENOTFOUND, and *is_dir, when given,
 * says so: route.c then serves it as a dataset); what a dataset's data files are read with
 * (their fields selected by id: struct lnc_colsel in take/take.h). */
struct lnc_colsel;
int lnc_engine_take_file(lnc_worker *w, const char *path, const uint64_t *ids, size_t n,
                         const struct lnc_colsel *cols,
                         const struct lnc_take_options *opts, struct ArrowSchema *schema,
                         struct ArrowArray *array, struct lnc_take_stats *stats, bool *is_dir,
                         struct lnc_error *err);
/* mounts.c: the object-store roots (lnc_engine_mount_s3), read-only once the engine serves. */
struct lnc_mounts;
struct lnc_s3_mount;
struct lnc_mounts *lnc_mounts_new(void);
void lnc_mounts_free(struct lnc_mounts *t);
/* The first mount makes the page cache all mounts share (cache_budget 0: none). */
int lnc_mounts_add(struct lnc_mounts *t, const char *name, const char *url,
                   const struct lnc_s3_options *opt, uint32_t default_revalidate_ms,
                   uint64_t cache_budget, uint32_t cache_block, struct lnc_error *err);
void lnc_mounts_stats(struct lnc_mounts *t, struct lnc_engine_stats *o); /* the page cache's */
/* The mount path lies under, or NULL (local); *rel (may be NULL) = the path below it ("" for
 * the mount itself), *revalidate_ms its HEAD/re-list interval. No lock, no system call. */
const struct lnc_s3_mount *lnc_mounts_find(const struct lnc_mounts *t, const char *path,
                                           const char **rel, uint32_t *revalidate_ms);
/* The engine path ("<mount>/<rel>") of an object named by URI (s3://bucket/key, a shallow
 * clone's base path), through the first mount whose bucket prefix holds it; -1 when none does
 * (or it does not fit cap). */
int lnc_mounts_path_of(const struct lnc_mounts *t, const char *uri, char *out, size_t cap);
/* Whether rel below the mount holds a dataset: objects under rel/_versions/ (one listing page). */
bool lnc_remote_is_dataset(const struct lnc_s3_mount *m, const char *rel);
/* engine.c: lnc_mounts_find on the engine's table. */
const struct lnc_s3_mount *lnc_engine_remote(lnc_engine *e, const char *path, const char **rel,
                                             uint32_t *revalidate_ms);
/* engine.c: a shallow clone's base path (absolute, normalised by lnc_abs_path) as the engine
 * names it: 1 and *rel = the path below the data root (or abs itself without a root), 0
 * when it is not below the root (the root itself included). No system call. */
int lnc_engine_root_rel(lnc_engine *e, const char *abs, const char **rel);
/* lnc_mounts_path_of on the engine's mounts. */
int lnc_engine_mount_path_of(lnc_engine *e, const char *uri, char *out, size_t cap);
/* Whether something checked at checked_ns is fresh under an interval of ms (0 = never). */
bool lnc_fresh_within(int64_t checked_ns, uint32_t ms);
/* Adds delta bytes to the resident total (negative to give them back); when adding, evicts
 * idle files until the total fits the budget again. */
void lnc_engine_charge(lnc_engine *e, int64_t delta);

#endif
