/* Unit tests for datasets served through the take engine (lib/cache/datasets.c): every take
 * answer of every fixture vs Lance's, data files loaded into the engine's one search cache
 * (resident bytes, files, budget eviction), the dataset-version cache (latest picked up
 * after a commit, superseded and pinned versions dropped once unused, listings only when
 * _versions/ changed), concurrent takes while versions come and go, damaged datasets and
 * paths that leave the root. */
#include "lance.h"
#include "dataset/dataset.h"
#include <check.h>
#include "support/support.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FIX  TSUP_DS_DIR
#define NFIX tsup_n_ds_fixtures

static lnc_engine *engine_at(const char *root, uint64_t budget) {
  struct lnc_engine_config cfg;
  lnc_engine_config_default(&cfg);
  cfg.root = root;
  if (budget) cfg.cache_budget = budget;
  lnc_engine *e = NULL;
  struct lnc_error err = {0};
  ck_assert_msg(lnc_engine_new(&cfg, &e, &err) == 0, "%s", err.message);
  return e;
}

static lnc_worker *worker_of(lnc_engine *e) {
  lnc_worker *w = NULL;
  struct lnc_error err = {0};
  ck_assert_msg(lnc_worker_new(e, &w, &err) == 0, "%s", err.message);
  return w;
}

static struct lnc_engine_stats stats(lnc_engine *e) {
  struct lnc_engine_stats s;
  lnc_engine_get_stats(e, &s);
  return s;
}

/* Takes ids from dir@version and returns the JSON rows body (malloc'd), or NULL with err. */
static char *take_json(lnc_worker *w, const char *dir, uint64_t version, const uint64_t *ids,
                       size_t n, struct lnc_error *err) {
  struct ArrowSchema s;
  struct ArrowArray a;
  if (lnc_engine_dataset_take(w, dir, version, ids, n, NULL, 0, NULL, &s, &a, NULL, err))
    return NULL;
  char *out = tsup_json(&s, &a);
  a.release(&a);
  s.release(&s);
  return out;
}

/* The same through lnc_engine_take, which serves a directory as the dataset's latest. */
static char *take_json_any(lnc_worker *w, const char *path, const uint64_t *ids, size_t n,
                           struct lnc_error *err) {
  struct ArrowSchema s;
  struct ArrowArray a;
  if (lnc_engine_take(w, path, ids, n, NULL, 0, NULL, &s, &a, NULL, err)) return NULL;
  char *out = tsup_json(&s, &a);
  a.release(&a);
  s.release(&s);
  return out;
}

static uint64_t live_rows(lnc_worker *w, const char *dir, uint64_t version, uint64_t *resolved) {
  uint64_t n = 0;
  struct lnc_error err = {0};
  int rc = lnc_engine_dataset_describe(w, dir, version, NULL, NULL, &n, resolved, NULL, NULL, &err);
  ck_assert_msg(rc == 0, "%s: %s", dir, err.message);
  return n;
}

/* Base path 0 of a manifest set to arg (tsup_edit_manifest). */
static void set_base0(Lance__Table__Manifest *m, const void *arg) {
  ck_assert_uint_ge(m->n_base_paths, 1);
  free(m->base_paths[0]->path);
  m->base_paths[0]->path = strdup(arg);
}

/* The same, and a base path no file names, outside any root (a clone compacted away from a
 * source that was then moved). */
static void set_base0_and_unused(Lance__Table__Manifest *m, const void *arg) {
  set_base0(m, arg);
  m->base_paths = realloc(m->base_paths, (m->n_base_paths + 1) * sizeof *m->base_paths);
  Lance__Table__BasePath *x = malloc(sizeof *x);
  lance__table__base_path__init(x);
  x->id = 77;
  x->path = strdup("/nonexistent-lanced/old-source.lance");
  x->name = strdup("");
  x->is_dataset_root = true;
  m->base_paths[m->n_base_paths++] = x;
}

/* ---- every answer of every fixture, through the engine ------------------------------------ */
/* Every line of fixdir/name.answers through w's engine (rooted at fixdir): the take of its ids
 * at its version, and for the latest also lnc_engine_take of the directory (*via_take). */
static int engine_answers(lnc_worker *w, const char *fixdir, const char *name, int *via_take) {
  char path[512], dir[128];
  snprintf(path, sizeof path, "%s/%s.answers", fixdir, name);
  snprintf(dir, sizeof dir, "%s.lance", name);
  char *text = (char *)tsup_read_file(path, NULL);
  ck_assert_msg(text != NULL, "%s is missing", path);
  int compared = 0;
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *fld[3]; /* ids, version, rows body */
    ck_assert(tsup_split_tabs(line, fld, 3));
    uint64_t version = strtoull(fld[1], NULL, 10);
    size_t n;
    uint64_t *ids = tsup_parse_ids(line, &n);
    struct lnc_error err = {0};
    char *got = take_json(w, dir, version, ids, n, &err), msg[600];
    ck_assert_msg(got, "%s %s@%llu: %s", dir, line, (unsigned long long)version, err.message);
    ck_assert_msg(tsup_body_eq(fld[2], strlen(fld[2]), got, strlen(got), msg, sizeof msg), "%s ids %s @%llu: %s",
                  dir, line, (unsigned long long)version, msg);
    compared++;
    free(got);
    if (version == 0) {
      got = take_json_any(w, dir, ids, n, &err);
      ck_assert_msg(got, "lnc_engine_take %s %s: %s", dir, line, err.message);
      ck_assert_msg(tsup_body_eq(fld[2], strlen(fld[2]), got, strlen(got), msg, sizeof msg),
                    "lnc_engine_take %s ids %s: %s", dir, line, msg);
      free(got);
      (*via_take)++;
    }
    free(ids);
  }
  free(text);
  return compared;
}

START_TEST(test_engine_take_vs_lance) {
  lnc_engine *e = engine_at(FIX, 0);
  lnc_worker *w = worker_of(e);
  int compared = 0, via_take = 0;
  for (size_t i = 0; i < NFIX; i++) compared += engine_answers(w, FIX, tsup_ds_fixtures[i].name, &via_take);
  ck_assert_int_gt(compared, 200);
  ck_assert_int_gt(via_take, 50);
  struct lnc_engine_stats st = stats(e);
  ck_assert_uint_gt(st.files_cached, 7);       /* every fixture's data files went through the engine */
  ck_assert_uint_eq(st.datasets_cached, NFIX); /* the latest of each, pinned ones dropped */
  lnc_worker_free(w);
  lnc_engine_free(e);
}
END_TEST

/* ---- shallow clones: base paths below the root, and not ----------------------------------- */
START_TEST(test_engine_clones) {
  /* Rooted where the clones and their sources are (given as a relative path; the manifests
   * name the sources by absolute path). */
  lnc_engine *e = engine_at(TSUP_CLONE_DIR, 0);
  lnc_worker *w = worker_of(e);
  int compared = 0, via_take = 0;
  for (size_t i = 0; i < tsup_n_clone_fixtures; i++)
    compared += engine_answers(w, TSUP_CLONE_DIR, tsup_clone_fixtures[i].name, &via_take);
  ck_assert_int_gt(compared, 40);
  ck_assert_int_gt(via_take, 10);
  lnc_worker_free(w);
  lnc_engine_free(e);

  /* The same root through a symlink: the manifests' paths are below its real path. */
  char *tmp = tsup_mkdtemp("lnc-clone-engine-"), real[4096], link[4200];
  ck_assert_ptr_nonnull(tmp);
  ck_assert_ptr_nonnull(realpath(TSUP_CLONE_DIR, real));
  snprintf(link, sizeof link, "%s/root", tmp);
  ck_assert_int_eq(symlink(real, link), 0);
  e = engine_at(link, 0);
  w = worker_of(e);
  via_take = 0;
  ck_assert_int_gt(engine_answers(w, TSUP_CLONE_DIR, "clone2_v22", &via_take), 5);
  lnc_worker_free(w);
  lnc_engine_free(e);

  /* A root holding the clone but not its source: refused, naming the source. */
  tsup_sh("mkdir %s/only && cp -r %s/clone_v22.lance %s/only/", tmp, TSUP_CLONE_DIR, tmp);
  snprintf(link, sizeof link, "%s/only", tmp);
  e = engine_at(link, 0);
  w = worker_of(e);
  uint64_t id = 1;
  struct lnc_error err = {0};
  char *got = take_json(w, "clone_v22.lance", 0, &id, 1, &err);
  ck_assert_ptr_null(got);
  ck_assert_int_eq(err.code, LNC_EACCES);
  ck_assert_msg(strstr(err.message, "outside the data root") && strstr(err.message, "clonesrc_v22.lance"), "%s",
                err.message);

  /* A base path below the root that is a symlink out of it: refused as any such path is. */
  char src[4200];
  snprintf(src, sizeof src, "%s/clonesrc_v22.lance", real);
  snprintf(link, sizeof link, "%s/only/src.lance", tmp);
  ck_assert_int_eq(symlink(src, link), 0);
  char mpath[4300];
  snprintf(mpath, sizeof mpath, "%s/only/clone_v22.lance/_versions/18446744073709551607.manifest", tmp);
  tsup_edit_manifest(mpath, set_base0, link);
  got = take_json(w, "clone_v22.lance", 0, &id, 1, &err);
  ck_assert_ptr_null(got); /* the version that failed is not cached: opened again */
  ck_assert_int_eq(err.code, LNC_EACCES);
  ck_assert_msg(strstr(err.message, "leaves the data root"), "%s", err.message);
  lnc_worker_free(w);
  lnc_engine_free(e);

  /* Clone and source copied into a root of their own, the clone pointed at the copy, plus a
   * base path no file names, outside the root: only the bases files name are opened. */
  tsup_sh("mkdir %s/both && cp -r %s/clone_v22.lance %s/clonesrc_v22.lance %s/both/", tmp, TSUP_CLONE_DIR,
          TSUP_CLONE_DIR, tmp);
  snprintf(src, sizeof src, "%s/both/clonesrc_v22.lance", tmp);
  snprintf(mpath, sizeof mpath, "%s/both/clone_v22.lance/_versions/18446744073709551607.manifest", tmp);
  tsup_edit_manifest(mpath, set_base0_and_unused, src);
  snprintf(link, sizeof link, "%s/both", tmp);
  e = engine_at(link, 0);
  w = worker_of(e);
  uint64_t some[] = {0, 300, 800};
  got = take_json(w, "clone_v22.lance", 0, some, 3, &err);
  ck_assert_msg(got, "%s", err.message);
  free(got);
  lnc_worker_free(w);
  lnc_engine_free(e);
  tsup_sh("rm -rf %s", tmp);
  free(tmp);
}
END_TEST

/* ---- one budget for files and datasets ----------------------------------------------------- */
START_TEST(test_engine_budget_shared) {
  lnc_engine *e = engine_at(FIX, 0);
  lnc_worker *w = worker_of(e);
  struct lnc_engine_stats s0 = stats(e);
  ck_assert_uint_eq(s0.resident_bytes, 0);
  ck_assert_uint_eq(s0.files_cached, 0);
  uint64_t ids[] = {0, 310, 740};
  struct lnc_error err = {0};
  char *j = take_json(w, "multi_v21.lance", 0, ids, 3, &err);
  ck_assert_msg(j, "%s", err.message);
  free(j);
  struct lnc_engine_stats s1 = stats(e);
  ck_assert_uint_eq(s1.files_cached, 3); /* three fragments, one data file each */
  ck_assert_uint_eq(s1.cache_loads, 3);
  ck_assert_uint_eq(s1.datasets_cached, 1);
  ck_assert_uint_gt(s1.dataset_bytes, 0);
  ck_assert_uint_gt(s1.resident_bytes, s1.dataset_bytes); /* files' search caches + dataset */
  ck_assert_uint_eq(s1.takes, 3);                         /* one engine take per data file */

  uint64_t ids2[] = {0, 500, 1000, 1100};
  j = take_json(w, "deletions_v21.lance", 0, ids2, 4, &err);
  ck_assert_msg(j, "%s", err.message);
  free(j);
  struct lnc_engine_stats s2 = stats(e);
  ck_assert_uint_gt(s2.files_cached, s1.files_cached);
  ck_assert_uint_gt(s2.resident_bytes, s1.resident_bytes);
  ck_assert_uint_eq(s2.datasets_cached, 2);
  ck_assert_uint_le(s2.resident_bytes, s2.budget_bytes);

  /* Shrink the budget: idle files are evicted first, datasets stay and keep serving. */
  uint64_t small = s2.dataset_bytes + (s2.resident_bytes - s2.dataset_bytes) / 3;
  lnc_engine_set_budget(e, small);
  struct lnc_engine_stats s3 = stats(e);
  ck_assert_uint_gt(s3.cache_evictions, 0);
  ck_assert_uint_lt(s3.files_cached, s2.files_cached);
  ck_assert_uint_le(s3.resident_bytes, small);
  ck_assert_uint_eq(s3.dataset_bytes, s2.dataset_bytes);
  j = take_json(w, "multi_v21.lance", 0, ids, 3, &err);
  ck_assert_msg(j, "%s", err.message);
  free(j);
  struct lnc_engine_stats s4 = stats(e);
  ck_assert_uint_le(s4.resident_bytes, small);

  /* A budget below the datasets themselves: once no idle file is left, idle dataset versions
   * go too, least recently used first (they held the budget for ever, and every file was
   * loaded again for each take). The datasets are still served, opened again. */
  lnc_engine_set_budget(e, s2.dataset_bytes - 1);
  struct lnc_engine_stats s5 = stats(e);
  ck_assert_uint_eq(s5.files_cached, 0);
  ck_assert_uint_eq(s5.datasets_cached, 1);
  ck_assert_uint_le(s5.resident_bytes, s2.dataset_bytes - 1);
  lnc_engine_set_budget(e, 1);
  struct lnc_engine_stats s6 = stats(e);
  ck_assert_uint_eq(s6.datasets_cached, 0);
  ck_assert_uint_eq(s6.resident_bytes, 0);
  j = take_json(w, "multi_v21.lance", 0, ids, 3, &err);
  ck_assert_msg(j, "%s", err.message);
  free(j);
  lnc_worker_free(w);
  lnc_engine_free(e);
}
END_TEST

/* A file that needs room the idle dataset versions hold gets it: they are shed once no idle
 * file is left (make_room shed only when the budget was already exceeded, so the file was
 * loaded again for every take while the datasets stayed). */
START_TEST(test_engine_budget_file_over_datasets) {
  lnc_engine *e = engine_at(FIX, 0);
  lnc_worker *w = worker_of(e);
  const char *file = "deletions_v21.lance/data/00011110010001101110000060133f4ce58222f81770ea41eb.lance";
  uint64_t id0 = 0;
  struct lnc_error err = {0};
  char *j = take_json_any(w, file, &id0, 1, &err);
  ck_assert_msg(j, "%s", err.message);
  free(j);
  uint64_t fbytes = stats(e).resident_bytes;
  uint64_t ids[] = {0, 310, 740};
  for (const char *const *d = (const char *const[]){"multi_v21.lance", "addcol_v21.lance", NULL}; *d; d++) {
    j = take_json(w, *d, 0, ids, 1, &err);
    ck_assert_msg(j, "%s: %s", *d, err.message);
    free(j);
  }
  struct lnc_engine_stats s1 = stats(e);
  ck_assert_uint_eq(s1.datasets_cached, 2);
  lnc_engine_set_budget(e, 1); /* every idle file out; then every idle version */
  lnc_engine_set_budget(e, fbytes + s1.dataset_bytes / 2);
  /* Put the versions back in (their files do not fit beside them and are not kept). */
  for (const char *const *d = (const char *const[]){"multi_v21.lance", "addcol_v21.lance", NULL}; *d; d++) {
    j = take_json(w, *d, 0, ids, 1, &err);
    ck_assert_msg(j, "%s: %s", *d, err.message);
    free(j);
  }
  j = take_json_any(w, file, &id0, 1, &err);
  ck_assert_msg(j, "%s", err.message);
  free(j);
  struct lnc_engine_stats s2 = stats(e);
  ck_assert_uint_ge(s2.files_cached, 1); /* the file stays */
  ck_assert_uint_lt(s2.datasets_cached, 2);
  ck_assert_uint_le(s2.resident_bytes, fbytes + s1.dataset_bytes / 2);
  lnc_worker_free(w);
  lnc_engine_free(e);
}
END_TEST

/* ---- versions: refresh, drop, listings ---------------------------------------------------- */
static char *tmproot;

static void make_root(void) {
  tmproot = tsup_mkdtemp("lnc-dse-test-");
  ck_assert_ptr_nonnull(tmproot);
}

static void drop_root(void) {
  tsup_sh("rm -rf %s", tmproot);
  free(tmproot);
  tmproot = NULL;
}

static void add_fixture(const char *name, const char *as) { tsup_ds_copy(name, tmproot, as); }

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* An engine over multi_v21 as ds with its version 3 held back in hidden/ (moved in later to
 * commit it while the engine runs), and a worker of it. */
static lnc_engine *engine_v3_held_back(lnc_worker **w) {
  make_root();
  add_fixture("multi_v21", "ds");
  tsup_sh("mkdir %s/hidden && mv %s/ds/_versions/3.manifest %s/hidden/", tmproot, tmproot, tmproot);
  lnc_engine *e = engine_at(tmproot, 0);
  *w = worker_of(e);
  return e;
}

START_TEST(test_engine_version_refresh) {
  lnc_worker *w;
  lnc_engine *e = engine_v3_held_back(&w);
  uint64_t v;
  ck_assert_uint_eq(live_rows(w, "ds", 0, &v), 500);
  ck_assert_uint_eq(v, 2);
  ck_assert_uint_eq(stats(e).datasets_cached, 1);

  /* A version committed while the engine runs: the next request serves it. */
  tsup_sh("mv %s/hidden/3.manifest %s/ds/_versions/", tmproot, tmproot);
  ck_assert_uint_eq(live_rows(w, "ds", 0, &v), 750);
  ck_assert_uint_eq(v, 3);
  struct lnc_engine_stats s = stats(e);
  ck_assert_uint_eq(s.datasets_cached, 1); /* v2: unused and superseded, dropped */
  uint64_t ids[] = {749, 0};
  struct lnc_error err = {0};
  char *j = take_json(w, "ds", 0, ids, 2, &err);
  ck_assert_msg(j && strstr(j, "\"id\":749"), "%s", j ? j : err.message);
  free(j);

  /* A pinned old version is opened for the request and dropped after it. */
  uint64_t opens = stats(e).dataset_opens;
  ck_assert_uint_eq(live_rows(w, "ds", 1, &v), 300);
  ck_assert_uint_eq(v, 1);
  ck_assert_uint_eq(stats(e).dataset_opens, opens + 1);
  ck_assert_uint_eq(stats(e).datasets_cached, 1);

  /* Once _versions/ has been quiet for longer than the racy window, requests only stat it. */
  sleep_ms(150);
  live_rows(w, "ds", 0, NULL);
  uint64_t listings = stats(e).dataset_listings;
  opens = stats(e).dataset_opens;
  for (int i = 0; i < 5; i++) ck_assert_uint_eq(live_rows(w, "ds", 0, NULL), 750);
  ck_assert_uint_eq(stats(e).dataset_listings, listings);
  ck_assert_uint_eq(stats(e).dataset_opens, opens);

  /* Going back (the newest manifest removed) is seen too. */
  tsup_sh("mv %s/ds/_versions/3.manifest %s/hidden/", tmproot, tmproot);
  ck_assert_uint_eq(live_rows(w, "ds", 0, &v), 500);
  ck_assert_uint_eq(v, 2);

  /* The directory replaced by another dataset: its versions are not confused. */
  tsup_sh("rm -rf %s/ds", tmproot);
  add_fixture("compacted_v22", "ds");
  ck_assert_uint_eq(live_rows(w, "ds", 0, &v), 400);
  ck_assert_uint_eq(v, 8);
  ck_assert_uint_eq(stats(e).datasets_cached, 1);
  lnc_worker_free(w);
  lnc_engine_free(e);
  drop_root();
}
END_TEST

/* Concurrent takes while the latest version appears and disappears: each request reads one
 * version to its end (rows 0..499 exist in both), nothing is freed under a reader. */
struct thr {
  lnc_engine *e;
  atomic_int *stop;
  int ok, takes;
};

static void *thr_take(void *p) {
  struct thr *t = p;
  lnc_worker *w;
  struct lnc_error err = {0};
  if (lnc_worker_new(t->e, &w, &err)) return NULL;
  uint64_t ids[64];
  t->ok = 1;
  while (!atomic_load(t->stop)) {
    for (int i = 0; i < 64; i++) ids[i] = (uint64_t)(i * 7 + t->takes) % 500;
    struct ArrowSchema s;
    struct ArrowArray a;
    const char *cols[] = {"id"};
    if (lnc_engine_dataset_take(w, "ds", 0, ids, 64, cols, 1, NULL, &s, &a, NULL, &err)) {
      fprintf(stderr, "take: %s\n", err.message);
      t->ok = 0;
      break;
    }
    const int64_t *v = (const int64_t *)a.children[0]->buffers[1];
    for (int i = 0; i < 64; i++)
      if (v[i] != (int64_t)ids[i]) t->ok = 0;
    a.release(&a);
    s.release(&s);
    t->takes++;
  }
  lnc_worker_free(w);
  return NULL;
}

START_TEST(test_engine_versions_concurrent) {
  make_root();
  add_fixture("multi_v22", "ds");
  tsup_sh("mkdir %s/hidden", tmproot);
  lnc_engine *e = engine_at(tmproot, 0);
  atomic_int stop = 0;
  pthread_t th[2];
  struct thr args[2];
  for (int i = 0; i < 2; i++) {
    args[i] = (struct thr){e, &stop, 0, 0};
    pthread_create(&th[i], NULL, thr_take, &args[i]);
  }
  /* Version 3 (V2 naming) comes and goes; versions 1 and 2 stay. */
  char name[64], in[512], out[512];
  snprintf(name, sizeof name, "%020llu.manifest", (unsigned long long)(UINT64_MAX - 3));
  snprintf(in, sizeof in, "%s/ds/_versions/%s", tmproot, name);
  snprintf(out, sizeof out, "%s/hidden/%s", tmproot, name);
  for (int r = 0; r < 40; r++) {
    sleep_ms(5);
    ck_assert_int_eq(r % 2 ? rename(out, in) : rename(in, out), 0);
  }
  atomic_store(&stop, 1);
  for (int i = 0; i < 2; i++) {
    pthread_join(th[i], NULL);
    ck_assert(args[i].ok);
    ck_assert_int_gt(args[i].takes, 0);
  }
  lnc_engine_free(e);
  drop_root();
}
END_TEST

/* ---- damaged datasets and paths ------------------------------------------------------------ */
static int take_err(lnc_worker *w, const char *dir, uint64_t version, struct lnc_error *err) {
  uint64_t ids[] = {0, 1};
  char *j = take_json(w, dir, version, ids, 2, err);
  if (j) {
    free(j);
    return 0;
  }
  return err->code;
}

/* A dataset directory removed: what was cached of it is released (it was kept, charged to
 * the budget, for ever: a root whose datasets come and go starved the search caches), and so
 * is the record of a path that never was a dataset. */
START_TEST(test_engine_dataset_removed) {
  make_root();
  add_fixture("multi_v21", "gone");
  add_fixture("deletions_v21", "stays");
  tsup_sh("mkdir %s/plain", tmproot);
  lnc_engine *e = engine_at(tmproot, 0);
  lnc_worker *w = worker_of(e);
  struct lnc_error err = {0};
  ck_assert_int_eq(take_err(w, "gone", 0, &err), 0);
  ck_assert_int_eq(take_err(w, "stays", 0, &err), 0);
  struct lnc_engine_stats s1 = stats(e);
  ck_assert_uint_eq(s1.datasets_cached, 2);
  tsup_sh("rm -rf %s/gone", tmproot);
  ck_assert_int_eq(take_err(w, "gone", 0, &err), LNC_ENOTFOUND);
  ck_assert_int_eq(take_err(w, "plain", 0, &err), LNC_ENOTFOUND);
  struct lnc_engine_stats s2 = stats(e);
  ck_assert_uint_eq(s2.datasets_cached, 1);
  ck_assert_uint_lt(s2.dataset_bytes, s1.dataset_bytes);
  ck_assert_uint_gt(s2.dataset_bytes, 0);
  ck_assert_int_eq(take_err(w, "stays", 0, &err), 0);
  /* The same through lnc_engine_take, lanced's way in: the path no longer stats as a
   * directory, so the take is a file's 404; the dataset it was is released all the same. */
  add_fixture("multi_v21", "gone2");
  uint64_t id0 = 0;
  char *j = take_json_any(w, "gone2", &id0, 1, &err);
  ck_assert_msg(j, "%s", err.message);
  free(j);
  ck_assert_uint_eq(stats(e).datasets_cached, 2);
  tsup_sh("rm -rf %s/gone2", tmproot);
  ck_assert_ptr_null(take_json_any(w, "gone2", &id0, 1, &err));
  ck_assert_int_eq(err.code, LNC_ENOTFOUND);
  ck_assert_uint_eq(stats(e).datasets_cached, 1);
  lnc_worker_free(w);
  lnc_engine_free(e);
  drop_root();
}
END_TEST

/* The version cached as the latest removed while a newer one is committed (LanceDB's optimize
 * prunes every old version): asked for by number it is not found, as Lance's checkout(N)
 * says, rather than served from the cache until a request for the latest comes by (found
 * by tests/fixtures/ops-fuzz.mjs). */
START_TEST(test_engine_pinned_latest_pruned) {
  lnc_worker *w;
  lnc_engine *e = engine_v3_held_back(&w);
  struct lnc_error err = {0};
  uint64_t v;
  ck_assert_uint_eq(live_rows(w, "ds", 0, &v), 500);
  ck_assert_uint_eq(v, 2);
  ck_assert_int_eq(take_err(w, "ds", 2, &err), 0); /* the cached latest, pinned: served */
  tsup_sh("mv %s/hidden/3.manifest %s/ds/_versions/ && rm %s/ds/_versions/1.manifest %s/ds/_versions/2.manifest",
          tmproot, tmproot, tmproot, tmproot);
  ck_assert_int_eq(take_err(w, "ds", 2, &err), LNC_ENOTFOUND);
  ck_assert_msg(strstr(err.message, "version 2 not found"), "%s", err.message);
  ck_assert_int_eq(take_err(w, "ds", 1, &err), LNC_ENOTFOUND);
  ck_assert_int_eq(take_err(w, "ds", 3, &err), 0);
  ck_assert_uint_eq(live_rows(w, "ds", 0, &v), 750);
  ck_assert_uint_eq(v, 3);
  ck_assert_uint_eq(stats(e).datasets_cached, 1); /* v2 superseded and dropped */
  lnc_worker_free(w);
  lnc_engine_free(e);
  drop_root();
}
END_TEST

/* Tags through the engine: the version each names (tags_v22.tags, Lance's list), and a take
 * pinned to it equals the take pinned by number. */
START_TEST(test_engine_tags) {
  lnc_engine *e = engine_at(FIX, 0);
  lnc_worker *w = worker_of(e);
  char *tags[16];
  uint64_t want[16];
  size_t n = tsup_ds_tags("tags_v22", tags, want, 16);
  ck_assert_uint_ge(n, 5);
  for (size_t i = 0; i < n; i++) {
    uint64_t v = 0, ids[] = {0, 150, 199};
    struct lnc_error err = {0};
    ck_assert_msg(lnc_engine_dataset_tag(w, "tags_v22.lance", tags[i], LNC_NOWAIT_OFF, &v, &err) == 0, "%s",
                  err.message);
    ck_assert_uint_eq(v, want[i]);
    char *a = take_json(w, "tags_v22.lance", v, ids, 3, &err);
    ck_assert_msg(a, "%s", err.message);
    free(a);
    free(tags[i]);
  }
  uint64_t v;
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_engine_dataset_tag(w, "tags_v22.lance", "nope", LNC_NOWAIT_OFF, &v, &err), LNC_ENOTFOUND);
  ck_assert_int_eq(lnc_engine_dataset_tag(w, "tags_v22.lance", "../../x", LNC_NOWAIT_OFF, &v, &err), LNC_EINVAL);
  ck_assert_int_eq(lnc_engine_dataset_tag(w, "none.lance", "first", LNC_NOWAIT_OFF, &v, &err), LNC_ENOTFOUND);
  ck_assert_int_eq(lnc_engine_dataset_tag(w, "../datasets/tags_v22.lance", "first", LNC_NOWAIT_OFF, &v, &err),
                   LNC_EACCES);
  lnc_worker_free(w);
  lnc_engine_free(e);
}
END_TEST

/* Within revalidate_ms the latest version is taken from the cache without a look at the disk.
 * A dataset dropped and written again under its name in that window (LanceDB dropTable +
 * createTable) has lost the files of the cached version: the take that finds one missing
 * checks the dataset and answers from the new one, not "corrupt"; so does a take of a row
 * past the cached version's end. */
START_TEST(test_engine_dataset_recreated_in_window) {
  make_root();
  add_fixture("multi_v22", "ds");
  struct lnc_engine_config cfg;
  lnc_engine_config_default(&cfg);
  cfg.root = tmproot;
  cfg.revalidate_ms = 600000; /* the whole test is inside the window */
  lnc_engine *e = NULL;
  struct lnc_error err = {0};
  ck_assert_msg(lnc_engine_new(&cfg, &e, &err) == 0, "%s", err.message);
  lnc_worker *w = worker_of(e);
  uint64_t first = 0, last = 749; /* multi_v22: fragments of 300, 200 and 250 rows */
  char *j = take_json(w, "ds", 0, &first, 1, &err);
  ck_assert_msg(j, "%s", err.message); /* version 3 cached, fragment 0's file opened */
  free(j);
  tsup_sh("rm -rf %s/ds", tmproot);
  add_fixture("deletions_v22", "ds"); /* another dataset, more rows, other files */
  j = take_json(w, "ds", 0, &last, 1, &err);
  ck_assert_msg(j, "a take in the window after the dataset was made again: %s", err.message);
  ck_assert_msg(strstr(j, "\"id\":") && !strstr(j, "\"id\":749"), "%s", j); /* deletions_v22's row 749 */
  free(j);
  uint64_t resolved = 0;
  live_rows(w, "ds", 0, &resolved);
  ck_assert_uint_eq(resolved, 8); /* deletions_v22's latest */
  /* A row past the cached version's end: checked too (a writer reading its own append).
   * A new engine, so that multi_v22 is what is cached when the dataset grows. */
  lnc_worker_free(w);
  lnc_engine_free(e);
  tsup_sh("rm -rf %s/ds", tmproot);
  add_fixture("multi_v22", "ds");
  ck_assert_msg(lnc_engine_new(&cfg, &e, &err) == 0, "%s", err.message);
  w = worker_of(e);
  j = take_json(w, "ds", 0, &first, 1, &err);
  ck_assert_msg(j, "%s", err.message);
  free(j);
  tsup_sh("rm -rf %s/ds", tmproot);
  add_fixture("deletions_v22", "ds"); /* 1,101 live rows against multi_v22's 750 */
  uint64_t past = 1100;
  j = take_json(w, "ds", 0, &past, 1, &err);
  ck_assert_msg(j && strstr(j, "\"id\":6898"), "a row past the cached version's end: %s", j ? j : err.message);
  free(j);
  uint64_t beyond = 5000; /* past the new version's end too: the error stands */
  ck_assert_ptr_null(take_json(w, "ds", 0, &beyond, 1, &err));
  ck_assert_int_eq(err.code, LNC_ERANGE);
  /* The current version's data files gone (those not open in the search cache cannot be
   * read): damage, reported after the check as before. */
  tsup_sh("rm %s/ds/data/*", tmproot);
  uint64_t ids[] = {0, 300, 700, 1100};
  j = take_json(w, "ds", 0, ids, 4, &err);
  ck_assert_ptr_null(j);
  ck_assert_int_eq(err.code, LNC_ECORRUPT);
  lnc_worker_free(w);
  lnc_engine_free(e);
  drop_root();
}
END_TEST

/* lnc_engine_is_dataset, as a take with a version pinned asks it (lanced, before each such
 * take): a dataset checked within revalidate_ms is known from the cache without opening its
 * directory; with revalidate_ms 0 the disk is asked every time. The directory moved away
 * tells the two apart. */
START_TEST(test_engine_is_dataset_known_in_window) {
  for (int window = 0; window < 2; window++) {
    make_root();
    add_fixture("multi_v22", "ds");
    struct lnc_engine_config cfg;
    lnc_engine_config_default(&cfg);
    cfg.root = tmproot;
    cfg.revalidate_ms = window ? 600000 : 0;
    lnc_engine *e = NULL;
    struct lnc_error err = {0};
    ck_assert_msg(lnc_engine_new(&cfg, &e, &err) == 0, "%s", err.message);
    lnc_worker *w = worker_of(e);
    ck_assert(!lnc_engine_is_dataset(w, "ds2"));
    uint64_t first = 0;
    char *j = take_json(w, "ds", 0, &first, 1, &err); /* checked now: the latest resolved */
    ck_assert_msg(j, "%s", err.message);
    free(j);
    tsup_sh("mv %s/ds %s/ds2", tmproot, tmproot);
    ck_assert_int_eq(lnc_engine_is_dataset(w, "ds"), window); /* known, or looked for */
    ck_assert(lnc_engine_is_dataset(w, "ds2"));               /* not cached yet: looked for, found */
    lnc_worker_free(w);
    lnc_engine_free(e);
    drop_root();
  }
}
END_TEST

/* A dataset replaced in place (its directory kept, so the same identity) by another with as
 * many versions: the cached version's number now names another manifest. The take that finds
 * the old files gone drops the cached version and reads the manifest again. */
START_TEST(test_engine_dataset_replaced_same_version) {
  make_root();
  add_fixture("deletions_v22", "ds"); /* latest 8 */
  lnc_engine *e = engine_at(tmproot, 0);
  lnc_worker *w = worker_of(e);
  struct lnc_error err = {0};
  uint64_t ids[] = {0, 500};
  char *j = take_json(w, "ds", 0, ids, 2, &err);
  ck_assert_msg(j, "%s", err.message);
  free(j);
  tsup_sh("rm -rf %s/ds/* && cp -r " TSUP_DS_DIR "/subcol_v22.lance/. %s/ds/", tmproot, tmproot); /* latest 8 too */
  uint64_t id0 = 0;
  for (int i = 0; i < 2; i++) { /* the latest, then pinned by number */
    j = take_json(w, "ds", i ? 8 : 0, &id0, 1, &err);
    ck_assert_msg(j, "take %d after the replacement: %s", i, err.message);
    ck_assert_msg(strstr(j, "\"st\""), "subcol_v22's row: %s", j);
    free(j);
  }
  lnc_worker_free(w);
  lnc_engine_free(e);
  drop_root();
}
END_TEST

START_TEST(test_engine_dataset_errors) {
  make_root();
  add_fixture("multi_v21", "torn");
  tsup_sh("truncate -s 100 %s/torn/_versions/3.manifest", tmproot);
  /* Old damage: a manifest younger than 10 s is taken for one being written. */
  tsup_sh("touch -d '1 hour ago' %s/torn/_versions/3.manifest", tmproot);
  add_fixture("multi_v21", "nomanifest");
  tsup_sh("rm %s/nomanifest/_versions/*.manifest", tmproot);
  add_fixture("multi_v22", "nodata");
  tsup_sh("rm $(ls %s/nodata/data/*.lance | head -1)", tmproot);
  add_fixture("deletions_v22", "baddel");
  tsup_sh("for f in %s/baddel/_deletions/*.bin; do printf 'garbage!' > $f; done", tmproot);
  add_fixture("multi_v21", "good");
  add_fixture("multi_v21", "escape");
  tsup_sh("mv %s/escape/_versions/3.manifest %s/outside.manifest && "
          "ln -s ../../outside.manifest %s/escape/_versions/3.manifest",
          tmproot, tmproot, tmproot);
  tsup_sh("mkdir %s/plain", tmproot);
  lnc_engine *e = engine_at(tmproot, 0);
  lnc_worker *w = worker_of(e);
  struct lnc_error err = {0};

  ck_assert_int_eq(take_err(w, "torn", 0, &err), LNC_ECORRUPT);
  ck_assert_msg(strstr(err.message, "3.manifest") && strstr(err.message, "torn"), "%s",
                err.message);
  ck_assert_int_eq(take_err(w, "torn", 2, &err), 0); /* older versions still read */
  ck_assert_int_eq(take_err(w, "nomanifest", 0, &err), LNC_ECORRUPT);
  ck_assert_msg(strstr(err.message, "no manifests"), "%s", err.message);
  ck_assert_int_eq(take_err(w, "nodata", 0, &err), LNC_ECORRUPT);
  ck_assert_msg(strstr(err.message, "data file"), "%s", err.message);
  ck_assert_int_eq(take_err(w, "baddel", 0, &err), LNC_ECORRUPT);
  ck_assert_msg(strstr(err.message, "deletion file") && strstr(err.message, ".bin"), "%s",
                err.message);
  ck_assert_int_eq(take_err(w, "good", 999, &err), LNC_ENOTFOUND);
  ck_assert_msg(strstr(err.message, "version 999 not found"), "%s", err.message);
  ck_assert_int_eq(take_err(w, "plain", 0, &err), LNC_ENOTFOUND);
  ck_assert_msg(strstr(err.message, "_versions"), "%s", err.message);
  ck_assert_int_eq(take_err(w, "nope", 0, &err), LNC_ENOTFOUND);
  /* Leaving the root is refused as a permission (403), not a missing file (issue 14). */
  ck_assert_int_eq(take_err(w, "../lnc-dse-test-x", 0, &err), LNC_EACCES);
  ck_assert_msg(strstr(err.message, "leaves the data root"), "%s", err.message);
  /* Through a symlink out of the root, a path that exists there and one that does not get
   * the same answer: a 404 for the missing one would let a client probe outside the root. */
  tsup_sh("ln -s /etc %s/etc_link", tmproot);
  uint64_t id0 = 0;
  ck_assert_ptr_null(take_json_any(w, "etc_link/passwd", &id0, 1, &err));
  ck_assert_int_eq(err.code, LNC_EACCES);
  ck_assert_ptr_null(take_json_any(w, "etc_link/no-such-file-here", &id0, 1, &err));
  ck_assert_msg(err.code == LNC_EACCES && strstr(err.message, "leaves the data root"), "%s", err.message);
  ck_assert_int_eq(take_err(w, "escape", 0, &err), LNC_ECORRUPT); /* symlink out of the dataset */
  ck_assert_msg(strstr(err.message, "outside"), "%s", err.message);
  ck_assert_int_eq(take_err(w, "escape", 2, &err), 0);
  ck_assert(lnc_engine_is_dataset(w, "good"));
  ck_assert(!lnc_engine_is_dataset(w, "good/_versions/1.manifest"));
  ck_assert(!lnc_engine_is_dataset(w, "nope"));
  ck_assert(!lnc_engine_is_dataset(w, ".."));

  /* A data file removed after the version was cached: the next take names it (422 in lanced),
   * other datasets keep being served. */
  uint64_t id = 0;
  char *j = take_json(w, "good", 0, &id, 1, &err);
  ck_assert_ptr_nonnull(j);
  free(j);
  lnc_engine_set_budget(e, 1); /* evict the search caches so the file is opened again */
  tsup_sh("rm %s/good/data/*.lance", tmproot);
  ck_assert_int_eq(take_err(w, "good", 0, &err), LNC_ECORRUPT);
  ck_assert_msg(strstr(err.message, "data file"), "%s", err.message);
  ck_assert_int_eq(take_err(w, "torn", 2, &err), 0);

  /* Row ranges are checked against the live rows. */
  uint64_t far = 750;
  ck_assert_ptr_null(take_json(w, "torn", 2, &far, 1, &err));
  ck_assert_int_eq(err.code, LNC_ERANGE);
  lnc_worker_free(w);
  lnc_engine_free(e);
  drop_root();
}
END_TEST

START_TEST(test_engine_dataset_describe) {
  lnc_engine *e = engine_at(FIX, 0);
  lnc_worker *w = worker_of(e);
  struct lnc_buf json = {0};
  struct ArrowSchema s;
  uint64_t rows = 0, v = 0;
  int major = -1, minor = -1;
  struct lnc_error err = {0};
  ck_assert_int_eq(lnc_engine_dataset_describe(w, "addcol_v22.lance", 2, &json, &s, &rows, &v,
                                               &major, &minor, &err),
                   0);
  ck_assert_uint_eq(v, 2);
  ck_assert_int_eq(major, 2); /* the manifest's data_format, not scraped from the JSON */
  ck_assert_int_eq(minor, 2);
  ck_assert_uint_eq(rows, 350);
  ck_assert_int_eq(s.n_children, 4); /* y was added in version 3 */
  s.release(&s);
  char *txt = strndup((const char *)json.data, json.len);
  ck_assert_msg(strstr(txt, "\"versions\":[1,2,3,4]") && strstr(txt, "\"version\":2"), "%s", txt);
  free(txt);
  lnc_buf_free(&json);
  ck_assert_int_eq(lnc_engine_dataset_describe(w, "addcol_v22.lance", 0, NULL, &s, &rows, &v,
                                               NULL, NULL, &err),
                   0);
  ck_assert_uint_eq(v, 4);
  ck_assert_int_eq(s.n_children, 5);
  ck_assert_str_eq(s.children[4]->name, "y");
  s.release(&s);
  lnc_worker_free(w);
  lnc_engine_free(e);
}
END_TEST

/* A nowait take with direct reads would wait for the device whatever is cached, so it is
 * refused before any work: not even _versions/ is listed and no engine take is counted. With
 * buffered reads the same take is served from the caches once a take warmed them. */
START_TEST(test_engine_dataset_nowait) {
  const uint64_t ids[] = {1, 5};
  struct lnc_take_options nw = {.nowait = 1};
  for (int direct = 0; direct <= 1; direct++) {
    struct lnc_engine_config cfg;
    lnc_engine_config_default(&cfg);
    cfg.root = FIX;
    cfg.io_mode = direct ? LNC_IO_DIRECT : LNC_IO_BUFFERED;
    lnc_engine *e = NULL;
    struct lnc_error err = {0};
    ck_assert_msg(lnc_engine_new(&cfg, &e, &err) == 0, "%s", err.message);
    lnc_worker *w = worker_of(e);
    char *ref = take_json(w, "deletions_v22.lance", 0, ids, 2, &err);
    ck_assert_msg(ref, "%s", err.message);
    struct lnc_engine_stats before = stats(e);
    struct ArrowSchema sc;
    struct ArrowArray ar;
    int rc = lnc_engine_dataset_take(w, "deletions_v22.lance", 0, ids, 2, NULL, 0, &nw, &sc, &ar,
                                     NULL, &err);
    struct lnc_engine_stats after = stats(e);
    if (direct) {
      ck_assert_msg(rc == LNC_EAGAIN, "direct nowait take: %s (%s)", lnc_code_name(rc), err.message);
      ck_assert_uint_eq(after.takes, before.takes);
      ck_assert_uint_eq(after.dataset_listings, before.dataset_listings);
    } else {
      ck_assert_msg(rc == 0, "warm buffered nowait take: %s (%s)", lnc_code_name(rc), err.message);
      tsup_expect_json(&sc, &ar, ref);
      ck_assert_uint_gt(after.takes, before.takes);
    }
    free(ref);
    lnc_worker_free(w);
    lnc_engine_free(e);
  }
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("dataset_engine");
  TCase *tc = tcase_create("engine");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_engine_take_vs_lance);
  tcase_add_test(tc, test_engine_clones);
  tcase_add_test(tc, test_engine_budget_shared);
  tcase_add_test(tc, test_engine_budget_file_over_datasets);
  tcase_add_test(tc, test_engine_version_refresh);
  tcase_add_test(tc, test_engine_versions_concurrent);
  tcase_add_test(tc, test_engine_dataset_errors);
  tcase_add_test(tc, test_engine_dataset_removed);
  tcase_add_test(tc, test_engine_pinned_latest_pruned);
  tcase_add_test(tc, test_engine_dataset_recreated_in_window);
  tcase_add_test(tc, test_engine_is_dataset_known_in_window);
  tcase_add_test(tc, test_engine_tags);
  tcase_add_test(tc, test_engine_dataset_replaced_same_version);
  tcase_add_test(tc, test_engine_dataset_describe);
  tcase_add_test(tc, test_engine_dataset_nowait);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return tsup_run(suite());
}
