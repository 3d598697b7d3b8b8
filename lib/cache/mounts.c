/* The engine's object-store roots: a table of (first path component -> bucket prefix), filled
 * before the engine serves (lnc_engine_mount_s3) and read-only afterwards, so lookups take no
 * lock. A path is remote when its first component names a mount; the rest of the path is
 * the key below the mount's prefix. */
#include "cache.h"
#include "../io/s3.h"
#include "../util/assert.h"
#include "../util/error.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MOUNTS 64

struct mount {
  char *name;
  size_t len;
  struct lnc_s3_mount *m;
  uint32_t revalidate_ms;
};

struct lnc_mounts {
  struct mount v[MAX_MOUNTS];
  unsigned n;
  struct lnc_s3_cache *cache; /* shared by every mount; NULL without mounts or budget */
};

struct lnc_mounts *lnc_mounts_new(void) {
  return calloc(1, sizeof(struct lnc_mounts));
}

void lnc_mounts_free(struct lnc_mounts *t) {
  if (!t) return;
  for (unsigned i = 0; i < t->n; i++) {
    free(t->v[i].name);
    lnc_s3_mount_free(t->v[i].m);
  }
  lnc_s3_cache_free(t->cache);
  free(t);
}

static int check_name(const struct lnc_mounts *t, const char *name, struct lnc_error *err) {
  if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..") || strlen(name) > 255)
    return lnc_errf(err, LNC_EINVAL, "mount name '%.80s' is not one path component", name);
  for (unsigned i = 0; i < t->n; i++)
    if (!strcmp(t->v[i].name, name)) return lnc_errf(err, LNC_EINVAL, "mount name '%.80s' is used twice", name);
  if (t->n == MAX_MOUNTS) return lnc_errf(err, LNC_ELIMIT, "more than %d mounts", MAX_MOUNTS);
  return 0;
}

/* The public options as the client's settings (lib/io/s3.h). */
static void to_config(const struct lnc_s3_options *o, struct lnc_s3_config *c) {
  memset(c, 0, sizeof *c);
  if (!o) return;
  c->endpoint = o->endpoint;
  c->region = o->region;
  c->access_key = o->access_key_id;
  c->secret_key = o->secret_access_key;
  c->session_token = o->session_token;
  c->merge_gap = o->merge_gap;
  c->max_parallel = o->max_parallel;
  c->deadline_ms = o->timeout_ms;
}

int lnc_mounts_add(struct lnc_mounts *t, const char *name, const char *url,
                   const struct lnc_s3_options *opt, uint32_t default_revalidate_ms,
                   uint64_t cache_budget, uint32_t cache_block, struct lnc_error *err) {
  int rc = check_name(t, name, err);
  if (rc) return rc;
  if (!t->cache && cache_budget && (rc = lnc_s3_cache_new(cache_budget, cache_block, &t->cache, err))) return rc;
  if (opt && (unsigned)opt->addressing > LNC_S3_VIRTUAL)
    return lnc_errf(err, LNC_EINVAL, "mount %.80s: addressing %d is not an lnc_s3_addressing", name, opt->addressing);
  struct lnc_s3_config c;
  to_config(opt, &c);
  struct mount *m = &t->v[t->n];
  if ((rc = lnc_s3_mount_new(url, &c, opt ? opt->addressing : LNC_S3_AUTO, t->cache, &m->m, err))) return rc;
  if (!(m->name = strdup(name))) {
    lnc_s3_mount_free(m->m);
    m->m = NULL;
    return lnc_errf(err, LNC_ENOMEM, "out of memory");
  }
  m->len = strlen(name);
  m->revalidate_ms = opt && opt->revalidate_ms ? opt->revalidate_ms : default_revalidate_ms;
  t->n++;
  return 0;
}

const struct lnc_s3_mount *lnc_mounts_find(const struct lnc_mounts *t, const char *path,
                                           const char **rel, uint32_t *revalidate_ms) {
  for (unsigned i = 0; t && i < t->n; i++) {
    const struct mount *m = &t->v[i];
    if (strncmp(path, m->name, m->len) || (path[m->len] && path[m->len] != '/')) continue;
    if (rel) *rel = path[m->len] ? path + m->len + 1 : "";
    if (revalidate_ms) *revalidate_ms = m->revalidate_ms;
    return m->m;
  }
  return NULL;
}

int lnc_mounts_path_of(const struct lnc_mounts *t, const char *uri, char *out, size_t cap) {
  for (unsigned i = 0; t && i < t->n; i++) {
    const char *key = lnc_s3_mount_key_of(t->v[i].m, uri);
    if (!key) continue;
    size_t n = strlen(key);
    while (n && key[n - 1] == '/') n--;
    if ((size_t)snprintf(out, cap, "%s%s%.*s", t->v[i].name, n ? "/" : "", (int)n, key) >= cap) return -1;
    return 0;
  }
  return -1;
}

void lnc_mounts_stats(struct lnc_mounts *t, struct lnc_engine_stats *o) {
  struct lnc_s3_cache_stats st;
  lnc_s3_cache_stats(t ? t->cache : NULL, &st);
  o->object_cache_hits = st.hits;
  o->object_cache_misses = st.misses;
  o->object_cache_bytes = st.bytes;
  o->object_cache_budget = st.budget;
}


/* The listing stops at the first entry and says so through ctx: its return value alone can't,
 * since a stop (1) and LNC_EINVAL (1, a key the store can't hold) are the same number. */
static int stop_at_first(void *ctx, const char *name, uint64_t size) {
  (void)name, (void)size;
  *(bool *)ctx = true;
  return 1;
}

bool lnc_remote_is_dataset(const struct lnc_s3_mount *m, const char *rel) {
  char pre[1100];
  struct lnc_error ignored;
  bool found = false;
  if ((size_t)snprintf(pre, sizeof pre, "%s%s_versions/", rel, *rel ? "/" : "") >= sizeof pre) return false;
  lnc_s3_mount_list(m, pre, stop_at_first, &found, &ignored);
  return found;
}
