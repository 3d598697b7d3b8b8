/* Report rendering (see report.h). Rates are over the measured run time; latencies are in
 * microseconds internally and printed with a unit that keeps three significant digits. */
#include "report.h"
#include <jansson.h>
#include <string.h>

static const char *fmt_us(char *buf, size_t cap, uint64_t us) {
  if (us < 1000)
    snprintf(buf, cap, "%lluus", (unsigned long long)us);
  else if (us < 1000000)
    snprintf(buf, cap, "%.2fms", us / 1e3);
  else
    snprintf(buf, cap, "%.2fs", us / 1e6);
  return buf;
}

void ld_report_progress(FILE *f, bool tty, double t, const ld_stats *cur, const ld_stats *prev,
                        const ld_hist *interval, double dt) {
  if (dt <= 0) dt = 1;
  char p99[32];
  double req = (double)(cur->responses - prev->responses) / dt;
  double rows = (double)(cur->rows - prev->rows) / dt;
  double mb = (double)(cur->bytes_in - prev->bytes_in) / dt / 1e6;
  uint64_t errs = ld_stats_errors(cur) - ld_stats_errors(prev);
  fprintf(f, "%s[%5.1fs] %9.0f req/s %10.0f rows/s %8.2f MB/s  p99 %-9s errors %llu%s", tty ? "\r\033[K" : "", t,
          req, rows, mb, interval->total ? fmt_us(p99, sizeof p99, ld_hist_percentile(interval, 99)) : "-",
          (unsigned long long)errs, tty ? "" : "\n");
  fflush(f);
}

static double per_s(uint64_t n, double s) { return s > 0 ? (double)n / s : 0; }

void ld_report_human(FILE *f, const ld_report *r) {
  const ld_options *o = r->opt;
  const ld_stats *s = &r->stats;
  const ld_hist *h = r->hist;
  char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
  char ids[32];
  ld_ids_spec_format(&o->ids, ids, sizeof ids);
  fprintf(f, "lanced-load %s%s%s\n", o->url, o->raw_path ? " raw " : " rows ", o->raw_path ? o->raw_path : o->path);
  if (o->raw_path)
    fprintf(f, "  %s loop, %u connections, %u threads, %.1fs\n", o->rate > 0 ? "open" : "closed", o->connections,
            r->threads, o->duration);
  else
    fprintf(f, "  %s loop, %u connections, %u threads, %.1fs, batch %zu, ids %s over %llu rows, format %s%s%s\n",
            o->rate > 0 ? "open" : "closed", o->connections, r->threads, o->duration, o->batch, ids,
            (unsigned long long)r->num_rows, o->format ? o->format : "json", o->columns ? ", columns " : "",
            o->columns ? o->columns : "");
  fprintf(f, "  requests   %llu in %.2fs = %.1f req/s", (unsigned long long)s->responses, r->elapsed_s,
          per_s(s->responses, r->elapsed_s));
  if (o->rate > 0) fprintf(f, " (target %.1f)", o->rate);
  fprintf(f, "\n");
  if (!o->raw_path)
    fprintf(f, "  rows       %llu = %.1f rows/s%s\n", (unsigned long long)s->rows, per_s(s->rows, r->elapsed_s),
            s->posts ? " (some requests sent as POST)" : "");
  fprintf(f, "  received   %.2f MB = %.2f MB/s (bodies %.2f MB)\n", s->bytes_in / 1e6, per_s(s->bytes_in, r->elapsed_s) / 1e6,
          s->body_bytes / 1e6);
  fprintf(f, "  latency    p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  (mean %s, %llu samples)\n",
          fmt_us(b1, sizeof b1, ld_hist_percentile(h, 50)), fmt_us(b2, sizeof b2, ld_hist_percentile(h, 90)),
          fmt_us(b3, sizeof b3, ld_hist_percentile(h, 99)), fmt_us(b4, sizeof b4, ld_hist_percentile(h, 99.9)),
          fmt_us(b5, sizeof b5, h->total ? h->max : 0), fmt_us(b6, sizeof b6, (uint64_t)ld_hist_mean(h)),
          (unsigned long long)h->total);
  fprintf(f, "  status     2xx %llu  3xx %llu  4xx %llu  5xx %llu\n", (unsigned long long)s->status_class[2],
          (unsigned long long)s->status_class[3], (unsigned long long)s->status_class[4],
          (unsigned long long)s->status_class[5]);
  fprintf(f, "  errors     %llu", (unsigned long long)ld_stats_errors(s));
  for (int i = 0; i < LD_ERR_COUNT; i++)
    if (s->errors[i]) fprintf(f, "  %s %llu", ld_err_names[i], (unsigned long long)s->errors[i]);
  fprintf(f, "\n");
  fprintf(f, "  conns      %llu connects, %llu retries, %llu in flight at end", (unsigned long long)s->connects,
          (unsigned long long)s->retries, (unsigned long long)s->inflight_end);
  if (o->rate > 0) fprintf(f, ", %llu never sent (behind schedule)", (unsigned long long)s->unsent);
  fprintf(f, "\n");
  if (r->verify_ran)
    fprintf(f, "  verify     %zu sampled, %zu compared, %zu match, %zu MISMATCH, %zu skipped, %zu tool failures\n",
            r->verify.sampled, r->verify.compared, r->verify.matched, r->verify.mismatched, r->verify.skipped,
            r->verify.tool_failures);
  fprintf(f, "  result     %s (exit %d)\n", r->verdict, r->exit_code);
}

static json_t *jstr_or_null(const char *s) { return s ? json_string(s) : json_null(); }

int ld_report_json(FILE *f, const ld_report *r) {
  const ld_options *o = r->opt;
  const ld_stats *s = &r->stats;
  const ld_hist *h = r->hist;
  char ids[32];
  ld_ids_spec_format(&o->ids, ids, sizeof ids);
  json_t *root = json_object();
  json_t *cfg = json_object();
  json_object_set_new(cfg, "url", json_string(o->url));
  json_object_set_new(cfg, "path", jstr_or_null(o->path));
  json_object_set_new(cfg, "raw_path", jstr_or_null(o->raw_path));
  json_object_set_new(cfg, "mode", json_string(o->rate > 0 ? "open" : "closed"));
  json_object_set_new(cfg, "rate", o->rate > 0 ? json_real(o->rate) : json_null());
  json_object_set_new(cfg, "batch", json_integer((json_int_t)o->batch));
  json_object_set_new(cfg, "connections", json_integer(o->connections));
  json_object_set_new(cfg, "threads", json_integer(r->threads));
  json_object_set_new(cfg, "duration_s", json_real(o->duration));
  json_object_set_new(cfg, "format", json_string(o->format ? o->format : "json"));
  json_object_set_new(cfg, "columns", jstr_or_null(o->columns));
  json_object_set_new(cfg, "ids", json_string(ids));
  json_object_set_new(cfg, "seed", json_integer((json_int_t)o->seed));
  json_object_set_new(cfg, "post_threshold", o->post_threshold ? json_integer((json_int_t)o->post_threshold) : json_null());
  json_object_set_new(cfg, "timeout_s", json_real(o->timeout));
  json_object_set_new(cfg, "max_error_rate", json_real(o->max_error_rate));
  json_object_set_new(cfg, "num_rows", json_integer((json_int_t)r->num_rows));
  json_object_set_new(root, "config", cfg);

  json_object_set_new(root, "elapsed_s", json_real(r->elapsed_s));
  json_object_set_new(root, "requests", json_integer((json_int_t)s->responses));
  json_object_set_new(root, "requests_per_s", json_real(per_s(s->responses, r->elapsed_s)));
  json_object_set_new(root, "rows", json_integer((json_int_t)s->rows));
  json_object_set_new(root, "rows_per_s", json_real(per_s(s->rows, r->elapsed_s)));
  json_object_set_new(root, "bytes_in", json_integer((json_int_t)s->bytes_in));
  json_object_set_new(root, "body_bytes", json_integer((json_int_t)s->body_bytes));
  json_object_set_new(root, "bytes_out", json_integer((json_int_t)s->bytes_out));
  json_object_set_new(root, "mb_per_s", json_real(per_s(s->bytes_in, r->elapsed_s) / 1e6));
  json_object_set_new(root, "posts", json_integer((json_int_t)s->posts));
  json_object_set_new(root, "target_rate", o->rate > 0 ? json_real(o->rate) : json_null());
  json_object_set_new(root, "achieved_rate", json_real(per_s(s->responses, r->elapsed_s)));

  json_t *lat = json_object();
  json_object_set_new(lat, "count", json_integer((json_int_t)h->total));
  json_object_set_new(lat, "min", json_integer((json_int_t)(h->total ? h->min : 0)));
  json_object_set_new(lat, "mean", json_real(ld_hist_mean(h)));
  json_object_set_new(lat, "stddev", json_real(ld_hist_stddev(h)));
  json_object_set_new(lat, "p50", json_integer((json_int_t)ld_hist_percentile(h, 50)));
  json_object_set_new(lat, "p90", json_integer((json_int_t)ld_hist_percentile(h, 90)));
  json_object_set_new(lat, "p99", json_integer((json_int_t)ld_hist_percentile(h, 99)));
  json_object_set_new(lat, "p999", json_integer((json_int_t)ld_hist_percentile(h, 99.9)));
  json_object_set_new(lat, "max", json_integer((json_int_t)(h->total ? h->max : 0)));
  json_object_set_new(root, "latency_us", lat);

  json_t *st = json_object();
  static const char *const cls[] = {NULL, "1xx", "2xx", "3xx", "4xx", "5xx"};
  for (int i = 1; i <= 5; i++) json_object_set_new(st, cls[i], json_integer((json_int_t)s->status_class[i]));
  json_object_set_new(root, "status", st);

  json_t *err = json_object();
  for (int i = 0; i < LD_ERR_COUNT; i++) json_object_set_new(err, ld_err_names[i], json_integer((json_int_t)s->errors[i]));
  json_object_set_new(err, "total", json_integer((json_int_t)ld_stats_errors(s)));
  json_object_set_new(root, "errors", err);
  uint64_t attempts = s->responses + s->errors[LD_ERR_CONNECT] + s->errors[LD_ERR_TIMEOUT] +
                      s->errors[LD_ERR_PARSE] + s->errors[LD_ERR_SHORT_BODY] + s->errors[LD_ERR_IO];
  json_object_set_new(root, "error_rate", json_real(attempts ? (double)ld_stats_errors(s) / (double)attempts : 0));
  json_object_set_new(root, "connects", json_integer((json_int_t)s->connects));
  json_object_set_new(root, "retries", json_integer((json_int_t)s->retries));
  json_object_set_new(root, "unsent", json_integer((json_int_t)s->unsent));
  json_object_set_new(root, "inflight_at_end", json_integer((json_int_t)s->inflight_end));

  if (r->verify_ran) {
    json_t *v = json_object();
    json_object_set_new(v, "sampled", json_integer((json_int_t)r->verify.sampled));
    json_object_set_new(v, "compared", json_integer((json_int_t)r->verify.compared));
    json_object_set_new(v, "matched", json_integer((json_int_t)r->verify.matched));
    json_object_set_new(v, "mismatched", json_integer((json_int_t)r->verify.mismatched));
    json_object_set_new(v, "skipped", json_integer((json_int_t)r->verify.skipped));
    json_object_set_new(v, "tool_failures", json_integer((json_int_t)r->verify.tool_failures));
    json_object_set_new(root, "verify", v);
  } else {
    json_object_set_new(root, "verify", json_null());
  }
  json_object_set_new(root, "result", json_string(r->verdict));
  json_object_set_new(root, "exit_code", json_integer(r->exit_code));
  int rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  fputc('\n', f);
  json_decref(root);
  return rc;
}
