/* lnc_loop (lib/io/loop.c): takes as tasks on an event loop. A take of a cached file parks on
 * its device read and finishes inside lnc_loop_wait with the same answer as a plain engine
 * take; many tasks park at once and their reads go to the kernel in one io_uring_enter; a
 * file not in the search cache is LNC_EAGAIN (for a thread that may block), never a wait on
 * the loop's thread; sleeps park; watched descriptors are reported ready. Counters, not
 * times. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "lance.h"
#include "support/support.h"

static const char *fixture_path(void) {
  static char *p;
  if (!p) p = tsup_fixture_file("types21");
  ck_assert_msg(p && access(p, R_OK) == 0, "fixture types21 not found (run from the repository root)");
  return p;
}

struct job {
  lnc_worker *w;
  const char *path;
  uint64_t id;
  int nowait;
  int rc;
  char *json;
  bool done;
  unsigned sleep_ms;
};

static void run_take(void *arg) {
  struct job *j = arg;
  if (j->sleep_ms) lnc_loop_sleep(j->sleep_ms);
  struct ArrowSchema s;
  struct ArrowArray a;
  struct lnc_take_options o = {.nowait = j->nowait};
  struct lnc_error err = {0};
  j->rc = lnc_engine_take(j->w, j->path, &j->id, 1, NULL, 0, &o, &s, &a, NULL, &err);
  if (!j->rc) {
    j->json = tsup_json(&s, &a);
    s.release(&s);
    a.release(&a);
  }
  j->done = true;
}

static char *plain_take(lnc_worker *w, const char *path, uint64_t id) {
  struct ArrowSchema s;
  struct ArrowArray a;
  struct lnc_error err = {0};
  int rc = lnc_engine_take(w, path, &id, 1, NULL, 0, NULL, &s, &a, NULL, &err);
  ck_assert_msg(rc == 0, "take: %s", err.message);
  char *j = tsup_json(&s, &a);
  s.release(&s);
  a.release(&a);
  return j;
}

struct rig {
  lnc_engine *e;
  lnc_worker *w; /* a plain worker, for loading files and reference answers */
  lnc_loop *l;
  lnc_worker *lw; /* the loop thread's own worker, taking inside its tasks */
};

static void rig_open(struct rig *r, int io_mode) {
  struct lnc_engine_config cfg;
  lnc_engine_config_default(&cfg);
  cfg.io_mode = io_mode;
  ck_assert_int_eq(lnc_engine_new(&cfg, &r->e, NULL), 0);
  ck_assert_int_eq(lnc_worker_new(r->e, &r->w, NULL), 0);
  ck_assert_int_eq(lnc_loop_new(0, &r->l, NULL), 0);
  ck_assert_int_eq(lnc_worker_new(r->e, &r->lw, NULL), 0);
}

static void rig_close(struct rig *r) {
  lnc_loop_free(r->l);
  lnc_worker_free(r->lw);
  lnc_worker_free(r->w);
  lnc_engine_free(r->e);
}

static void drain(struct rig *r, struct job *jobs, size_t n) {
  for (int it = 0; it < 10000; it++) {
    size_t left = 0;
    for (size_t i = 0; i < n; i++) left += !jobs[i].done;
    if (!left) return;
    ck_assert_int_eq(lnc_loop_wait(r->l, NULL, 0, 1000, NULL, NULL), 0);
  }
  ck_abort_msg("tasks did not finish");
}

START_TEST(test_cold_file_is_eagain) {
  struct rig r;
  rig_open(&r, LNC_IO_DIRECT);
  struct job j = {.w = r.lw, .path = fixture_path(), .id = 1, .nowait = LNC_NOWAIT_RING};
  int parked = -1;
  ck_assert_int_eq(lnc_loop_spawn(r.l, run_take, &j, &parked, NULL), 0);
  ck_assert_int_eq(parked, 0);
  ck_assert(j.done);
  ck_assert_int_eq(j.rc, LNC_EAGAIN);
  rig_close(&r);
}
END_TEST

/* 32 takes of a cached file, each parked on its read; all their reads are submitted by the
 * next lnc_loop_wait, and every answer equals the plain take's. */
START_TEST(test_many_tasks_park_and_match) {
  struct rig r;
  rig_open(&r, _i ? LNC_IO_BUFFERED : LNC_IO_DIRECT);
  const char *path = fixture_path();
  free(plain_take(r.w, path, 0)); /* loads the search cache */
  enum { N = 32 };
  struct job jobs[N];
  struct lnc_loop_stats s0, s1;
  lnc_loop_get_stats(r.l, &s0);
  int nparked = 0;
  for (int i = 0; i < N; i++) {
    jobs[i] = (struct job){.w = r.lw, .path = path, .id = (uint64_t)(i * 7 % 100), .nowait = LNC_NOWAIT_RING};
    int parked = 0;
    ck_assert_int_eq(lnc_loop_spawn(r.l, run_take, &jobs[i], &parked, NULL), 0);
    nparked += parked;
  }
  if (lnc_loop_uses_uring(r.l)) ck_assert_int_eq(nparked, N);
  drain(&r, jobs, N);
  lnc_loop_get_stats(r.l, &s1);
  if (lnc_loop_uses_uring(r.l)) {
    ck_assert_uint_ge(s1.submitted - s0.submitted, N);
    /* One enter for everything the 32 tasks queued, then completions (maybe a few waits). */
    ck_assert_uint_le(s1.enters - s0.enters, 1 + (s1.waits - s0.waits));
    ck_assert_uint_eq(s1.parked_tasks - s0.parked_tasks, N);
  }
  for (int i = 0; i < N; i++) {
    ck_assert_msg(jobs[i].rc == 0, "task %d: rc %d", i, jobs[i].rc);
    char *want = plain_take(r.w, path, jobs[i].id);
    ck_assert_str_eq(jobs[i].json, want);
    free(want);
    free(jobs[i].json);
  }
  /* Stacks are reused: 32 more tasks allocate none. */
  uint64_t live = s1.tasks_live;
  for (int i = 0; i < N; i++) {
    jobs[i] = (struct job){.w = r.lw, .path = path, .id = 3, .nowait = LNC_NOWAIT_RING};
    int parked;
    ck_assert_int_eq(lnc_loop_spawn(r.l, run_take, &jobs[i], &parked, NULL), 0);
  }
  drain(&r, jobs, N);
  for (int i = 0; i < N; i++) free(jobs[i].json);
  lnc_loop_get_stats(r.l, &s1);
  ck_assert_uint_eq(s1.tasks_live, live);
  rig_close(&r);
}
END_TEST

START_TEST(test_sleep_parks_and_watch_reports) {
  struct rig r;
  rig_open(&r, LNC_IO_DIRECT);
  const char *path = fixture_path();
  free(plain_take(r.w, path, 0));
  struct job j = {.w = r.lw, .path = path, .id = 2, .nowait = LNC_NOWAIT_RING, .sleep_ms = 30};
  int parked = 0;
  ck_assert_int_eq(lnc_loop_spawn(r.l, run_take, &j, &parked, NULL), 0);
  if (lnc_loop_uses_uring(r.l)) ck_assert_int_eq(parked, 1);
  int efd = eventfd(0, EFD_NONBLOCK);
  uint64_t ready = 0;
  ck_assert_int_eq(lnc_loop_wait(r.l, &efd, 1, 0, &ready, NULL), 0);
  ck_assert_uint_eq(ready, 0);
  uint64_t one = 1;
  ck_assert_int_eq(write(efd, &one, sizeof one), 8);
  ck_assert_int_eq(lnc_loop_wait(r.l, &efd, 1, 1000, &ready, NULL), 0);
  for (int i = 0; i < 5 && !(ready & 1); i++) lnc_loop_wait(r.l, &efd, 1, 1000, &ready, NULL);
  ck_assert_uint_eq(ready & 1, 1);
  drain(&r, &j, 1);
  ck_assert_int_eq(j.rc, 0);
  char *want = plain_take(r.w, path, 2);
  ck_assert_str_eq(j.json, want);
  free(want);
  free(j.json);
  close(efd);
  rig_close(&r);
}
END_TEST

START_TEST(test_bad_arguments) {
  struct lnc_error err = {0};
  int parked;
  ck_assert_int_eq(lnc_loop_spawn(NULL, run_take, NULL, &parked, &err), LNC_EINVAL);
  ck_assert_int_eq(lnc_loop_wait(NULL, NULL, 0, 0, NULL, NULL), LNC_EINVAL);
  ck_assert_int_eq(lnc_loop_new(0, NULL, NULL), LNC_EINVAL);
  lnc_loop_free(NULL);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("loop");
  TCase *t = tcase_create("loop");
  tcase_set_timeout(t, 60);
  tcase_add_test(t, test_cold_file_is_eagain);
  tcase_add_loop_test(t, test_many_tasks_park_and_match, 0, 2);
  tcase_add_test(t, test_sleep_parks_and_watch_reports);
  tcase_add_test(t, test_bad_arguments);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tsup_run(suite()); }
