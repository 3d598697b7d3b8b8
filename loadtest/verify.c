/* --verify (see verify.h): samples are claimed lock-free by the workers during the run; the
 * comparison runs after it, so spawning lancectl never disturbs the measurement. */
#include "verify.h"
#include "request.h"
#include "sbuf.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TOOL_TIMEOUT_MS 60000 /* one lancectl take; generous, a hung tool must not hang us */

int ld_verify_pool_init(ld_verify_pool *p, size_t cap) {
  memset(p, 0, sizeof *p);
  p->cap = cap;
  p->samples = calloc(cap ? cap : 1, sizeof *p->samples);
  return p->samples ? 0 : -1;
}

void ld_verify_pool_free(ld_verify_pool *p) {
  size_t n = p->claimed < p->cap ? p->claimed : p->cap;
  for (size_t i = 0; i < n; i++) {
    free(p->samples[i].ids);
    free(p->samples[i].body);
  }
  free(p->samples);
  p->samples = NULL;
}

int ld_verify_claim(ld_verify_pool *p, const uint64_t *ids, size_t n) {
  if (__atomic_load_n(&p->claimed, __ATOMIC_RELAXED) >= p->cap) return -1;
  unsigned slot = __atomic_fetch_add(&p->claimed, 1, __ATOMIC_RELAXED);
  if (slot >= p->cap) return -1;
  ld_verify_sample *s = &p->samples[slot];
  s->ids = malloc((n ? n : 1) * sizeof *ids);
  if (!s->ids) return -1; /* the slot stays empty and is reported as skipped */
  if (n) memcpy(s->ids, ids, n * sizeof *ids);
  s->n = n;
  return (int)slot;
}

void ld_verify_complete(ld_verify_pool *p, int slot, int status, char *body, size_t len) {
  ld_verify_sample *s = &p->samples[slot];
  s->completed = status != 0;
  s->status = status;
  free(s->body);
  s->body = body;
  s->body_len = len;
}

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Runs argv, capturing stdout into out. 0 when it exited 0 within the time limit. */
static int run_tool(char *const argv[], ld_sbuf *out) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) < 0) return -1;
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    execvp(argv[0], argv);
    fprintf(stderr, "lanced-load: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  close(fds[1]);
  uint64_t deadline = now_ms() + TOOL_TIMEOUT_MS;
  bool timed_out = false;
  char buf[65536];
  for (;;) {
    uint64_t now = now_ms();
    if (now >= deadline) {
      timed_out = true;
      break;
    }
    struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
    int r = poll(&pfd, 1, (int)(deadline - now));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      timed_out = r == 0;
      break;
    }
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    ld_sbuf_append(out, buf, (size_t)n);
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int st;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  return !timed_out && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static void report_mismatch(size_t idx, const ld_verify_sample *s, const ld_sbuf *ids, const char *want,
                            size_t want_len, bool text) {
  size_t off = 0;
  while (off < s->body_len && off < want_len && s->body[off] == want[off]) off++;
  size_t from = off > 40 ? off - 40 : 0;
  fprintf(stderr, "verify: sample %zu (ids=%.200s%s) differs at byte %zu (got %zu bytes, lancectl %zu)\n", idx,
          ids->p, ids->len > 200 ? "..." : "", off, s->body_len, want_len);
  if (!text) return; /* Arrow / protobuf bodies: the offset is all that is printable */
  fprintf(stderr, "  daemon:   %.*s\n", (int)((s->body_len - from) < 120 ? s->body_len - from : 120), s->body + from);
  fprintf(stderr, "  lancectl: %.*s\n", (int)((want_len - from) < 120 ? want_len - from : 120), want + from);
}

void ld_verify_run(const ld_verify_pool *p, const char *lancectl, const char *file, const char *format,
                   const char *columns, ld_verify_result *out) {
  memset(out, 0, sizeof *out);
  size_t n = p->claimed < p->cap ? p->claimed : p->cap;
  out->sampled = n;
  ld_sbuf ids = {0}, got = {0};
  for (size_t i = 0; i < n; i++) {
    const ld_verify_sample *s = &p->samples[i];
    if (!s->completed || s->status / 100 != 2) {
      out->skipped++;
      continue;
    }
    ld_sbuf_clear(&ids);
    ld_ids_join(&ids, s->ids, s->n);
    char *argv[12];
    int a = 0;
    argv[a++] = (char *)lancectl;
    argv[a++] = "take";
    argv[a++] = (char *)file;
    argv[a++] = "--ids";
    argv[a++] = ids.p ? ids.p : "";
    argv[a++] = "--format";
    argv[a++] = (char *)(format ? format : "json");
    if (columns) {
      argv[a++] = "--columns";
      argv[a++] = (char *)columns;
    }
    argv[a] = NULL;
    ld_sbuf_clear(&got);
    if (run_tool(argv, &got) < 0) {
      fprintf(stderr, "verify: sample %zu: %s take failed\n", i, lancectl);
      out->tool_failures++;
      continue;
    }
    out->compared++;
    size_t want_len = got.len;
    /* A CLI ends its output with a newline; the HTTP body need not. Binary formats are
     * compared exactly. */
    bool json = !format || strcmp(format, "json") == 0;
    if (json && want_len && got.p[want_len - 1] == '\n' && !(s->body_len && s->body[s->body_len - 1] == '\n')) want_len--;
    if (want_len == s->body_len && (want_len == 0 || memcmp(got.p, s->body, want_len) == 0)) {
      out->matched++;
    } else {
      out->mismatched++;
      report_mismatch(i, s, &ids, got.p ? got.p : "", want_len, !format || strcmp(format, "json") == 0);
    }
  }
  ld_sbuf_free(&ids);
  ld_sbuf_free(&got);
}
