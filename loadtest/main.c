/* lanced-load: HTTP/1.1 load generator for lanced's rows API (or any static path, as a
 * baseline). main() wires the pieces: options, metadata probe, worker threads, the
 * once-a-second progress line, the final report, --verify, and the exit status. */
#include "hist.h"
#include "meta.h"
#include "options.h"
#include "report.h"
#include "request.h"
#include "stats.h"
#include "verify.h"
#include "worker.h"
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_OK = 0,
       EXIT_USAGE = 1,
       EXIT_SERVER = 2,
       EXIT_VERIFY = 3 };

static int resolve(const ld_options *o, struct sockaddr_storage *ss, socklen_t *len) {
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
  int r = getaddrinfo(o->host, o->port, &hints, &res);
  if (r != 0 || !res) {
    fprintf(stderr, "lanced-load: cannot resolve %s: %s\n", o->host, gai_strerror(r));
    return -1;
  }
  memcpy(ss, res->ai_addr, res->ai_addrlen);
  *len = res->ai_addrlen;
  freeaddrinfo(res);
  return 0;
}

/* Metadata (rows mode) or the raw path itself: proves the server answers before any load
 * is generated, and yields num_rows so that every drawn id is in range. */
static int probe(const ld_options *o, const struct sockaddr *sa, socklen_t salen, uint64_t *num_rows) {
  ld_sbuf req = {0}, target = {0};
  ld_sbuf_puts(&target, o->prefix);
  if (o->raw_path) {
    if (o->raw_path[0] != '/') ld_sbuf_putc(&target, '/');
    ld_percent_encode(&target, o->raw_path, "/?&=%+,;:@!$'()*");
  } else {
    ld_sbuf_puts(&target, "/files/");
    ld_percent_encode(&target, o->path[0] == '/' ? o->path + 1 : o->path, "/");
  }
  ld_sbuf_puts(&req, "GET ");
  ld_sbuf_append(&req, target.p, target.len);
  ld_sbuf_puts(&req, " HTTP/1.1\r\nHost: ");
  ld_sbuf_puts(&req, o->host_header);
  ld_sbuf_puts(&req, "\r\nUser-Agent: lanced-load\r\nConnection: close\r\n\r\n");
  ld_http_resp resp;
  memset(&resp, 0, sizeof resp);
  char err[256];
  int timeout_ms = (int)(o->timeout * 1000);
  int rc = EXIT_OK;
  if (ld_http_exchange(sa, salen, req.p, timeout_ms, &resp, err, sizeof err) < 0) {
    fprintf(stderr, "lanced-load: server unreachable at %s: %s\n", o->url, err);
    rc = EXIT_SERVER;
  } else if (resp.status / 100 != 2) {
    fprintf(stderr, "lanced-load: GET %s answered %d\n", target.p, resp.status);
    rc = EXIT_SERVER;
  } else if (!o->raw_path && !*num_rows) {
    if (ld_meta_num_rows(resp.body, resp.body_len, num_rows, err, sizeof err) < 0) {
      fprintf(stderr, "lanced-load: GET %s: %s\n", target.p, err);
      rc = EXIT_SERVER;
    } else if (*num_rows == 0) {
      fprintf(stderr, "lanced-load: %s has no rows to read\n", o->path);
      rc = EXIT_SERVER;
    }
  }
  ld_http_resp_free(&resp);
  ld_sbuf_free(&req);
  ld_sbuf_free(&target);
  return rc;
}

static void sleep_until(uint64_t t_ns) {
  struct timespec ts = {.tv_sec = (time_t)(t_ns / 1000000000ULL), .tv_nsec = (long)(t_ns % 1000000000ULL)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
}

static void sum_stats(ld_worker *w, unsigned n, ld_stats *total, ld_hist *interval) {
  memset(total, 0, sizeof *total);
  for (unsigned i = 0; i < n; i++) {
    ld_stats s;
    ld_worker_snapshot(&w[i], &s, interval);
    ld_stats_add(total, &s);
  }
}

int main(int argc, char **argv) {
  ld_options o;
  int pr = ld_options_parse(argc, argv, &o);
  if (pr == 2) return EXIT_OK;
  if (pr != 0) return EXIT_USAGE;
  signal(SIGPIPE, SIG_IGN);

  struct sockaddr_storage ss;
  socklen_t salen;
  if (resolve(&o, &ss, &salen) < 0) return EXIT_SERVER;
  uint64_t num_rows = o.raw_path ? 0 : o.num_rows;
  int rc = probe(&o, (struct sockaddr *)&ss, salen, &num_rows);
  if (rc != EXIT_OK) return rc;

  ld_req_tmpl tmpl;
  ld_req_params rp = {.host_header = o.host_header, .prefix = o.prefix, .file = o.path, .columns = o.columns, .format = o.format, .post_threshold = o.post_threshold, .raw_path = o.raw_path};
  ld_req_tmpl_init(&tmpl, &rp);
  ld_verify_pool pool;
  if (o.verify && ld_verify_pool_init(&pool, o.verify) < 0) {
    fprintf(stderr, "lanced-load: out of memory\n");
    return EXIT_SERVER;
  }

  unsigned nt = o.threads;
  ld_worker *workers = calloc(nt, sizeof *workers);
  ld_hist *total_hist = ld_hist_new(), *interval = ld_hist_new();
  if (!workers || !total_hist || !interval) {
    fprintf(stderr, "lanced-load: out of memory\n");
    return EXIT_SERVER;
  }
  /* Leave the threads time to connect everything before the clock starts. */
  uint64_t start = ld_now_ns() + 100000000ULL + (uint64_t)o.connections * 20000ULL;
  uint64_t end = start + (uint64_t)(o.duration * 1e9);
  for (unsigned i = 0; i < nt; i++) {
    unsigned conns = o.connections / nt + (i < o.connections % nt);
    ld_worker_cfg cfg = {
        .addr = (struct sockaddr *)&ss,
        .addrlen = salen,
        .tmpl = &tmpl,
        .raw = o.raw_path != NULL,
        .ids = o.ids,
        .num_rows = num_rows,
        .batch = o.batch,
        .seed = o.seed,
        .index = i,
        .nthreads = nt,
        .nconns = conns,
        .rate = o.rate > 0 ? o.rate * conns / o.connections : 0,
        .start_ns = start,
        .end_ns = end,
        .timeout_ns = (uint64_t)(o.timeout * 1e9),
        .busy_poll_ns = (uint64_t)o.busy_poll_us * 1000,
        .verify = o.verify ? &pool : NULL,
    };
    if (ld_worker_init(&workers[i], &cfg) < 0 || ld_worker_start(&workers[i]) != 0) {
      fprintf(stderr, "lanced-load: cannot start thread %u\n", i);
      return EXIT_SERVER; /* exiting tears the started threads down too */
    }
  }

  bool tty = isatty(STDERR_FILENO);
  ld_stats prev = {0}, cur;
  uint64_t last = start;
  sleep_until(start);
  for (uint64_t t = start + 1000000000ULL; t < end; t += 1000000000ULL) {
    sleep_until(t);
    ld_hist_reset(interval);
    sum_stats(workers, nt, &cur, interval);
    if (!o.quiet) ld_report_progress(stderr, tty, (double)(t - start) / 1e9, &cur, &prev, interval, (t - last) / 1e9);
    prev = cur;
    last = t;
  }
  for (unsigned i = 0; i < nt; i++) ld_worker_join(&workers[i]);
  if (!o.quiet && tty) fputc('\n', stderr);

  ld_report rep = {.opt = &o, .threads = nt, .num_rows = num_rows, .elapsed_s = (double)(end - start) / 1e9, .hist = total_hist, .verdict = "ok"};
  sum_stats(workers, nt, &rep.stats, NULL);
  int last_errno = 0;
  for (unsigned i = 0; i < nt; i++) {
    ld_hist_merge(total_hist, workers[i].hist);
    if (workers[i].setup_errno) fprintf(stderr, "lanced-load: thread %u failed: %s\n", i, strerror(workers[i].setup_errno));
    if (workers[i].last_errno) last_errno = workers[i].last_errno;
  }

  if (o.verify) {
    rep.verify_ran = true;
    ld_verify_run(&pool, o.lancectl, o.verify_file, o.format, o.columns, &rep.verify);
  }

  const ld_stats *s = &rep.stats;
  uint64_t errors = ld_stats_errors(s);
  uint64_t attempts = s->responses + errors - s->errors[LD_ERR_HTTP_4XX] - s->errors[LD_ERR_HTTP_5XX];
  if (s->responses == 0) {
    rep.exit_code = EXIT_SERVER;
    rep.verdict = "no response from the server";
    if (last_errno) fprintf(stderr, "lanced-load: last socket error: %s\n", strerror(last_errno));
  } else if (attempts && (double)errors / (double)attempts > o.max_error_rate) {
    rep.exit_code = EXIT_SERVER;
    rep.verdict = "error rate above --max-error-rate";
  }
  if (rep.verify_ran && (rep.verify.mismatched || rep.verify.tool_failures)) {
    rep.exit_code = EXIT_VERIFY;
    rep.verdict = rep.verify.mismatched ? "verify mismatch" : "verify could not run lancectl";
  }

  if (o.json) {
    ld_report_json(stdout, &rep);
    if (!o.quiet) ld_report_human(stderr, &rep);
  } else {
    ld_report_human(stdout, &rep);
  }

  for (unsigned i = 0; i < nt; i++) ld_worker_destroy(&workers[i]);
  free(workers);
  ld_hist_free(total_hist);
  ld_hist_free(interval);
  if (o.verify) ld_verify_pool_free(&pool);
  ld_req_tmpl_free(&tmpl);
  return rep.exit_code;
}
