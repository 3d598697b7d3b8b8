/* Prometheus metrics: lock-free counters bumped by request threads (relaxed atomics: a
 * scrape may see one request's counters half-updated, which Prometheus tolerates) and the
 * text exposition format for GET /metrics. */
#include "lanced.h"
#include "service.h"
#include "metrics.h"
#include "server.h"
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_STATUS 600
/* From 25 µs: a warm single-row request takes ~50-200 µs and the p99 goal is under 1 ms, so
 * the buckets must resolve that range (1-2.5-5 steps up to 10 s for the slow tail). */
static const double bounds[] = {0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                1, 2.5, 5, 10};
#define NB (sizeof bounds / sizeof bounds[0])

static uint64_t requests[LD_R_COUNT][LD_F_COUNT][MAX_STATUS];
static uint64_t hist[LD_R_COUNT][NB + 1], hist_sum_us[LD_R_COUNT], hist_count[LD_R_COUNT];
static uint64_t rows_served, reads, bytes_read, bytes_decoded, cache_hits, cache_misses, file_bytes;

static const char *const route_names[LD_R_COUNT] = {"rows", "file", "connect_take",
                                                    "connect_getfile", "healthz", "metrics",
                                                    "other"};
static const char *const format_names[LD_F_COUNT] = {"none", "json", "arrow", "proto"};

const char *ld_format_name(int f) { return f >= 0 && f < LD_F_COUNT ? format_names[f] : "none"; }

#define ADD(var, n) __atomic_add_fetch(&(var), (n), __ATOMIC_RELAXED)
#define GET(var)    __atomic_load_n(&(var), __ATOMIC_RELAXED)

void ld_metrics_request(int route, int format, int status, double seconds) {
  if (route < 0 || route >= LD_R_COUNT) route = LD_R_OTHER;
  if (format < 0 || format >= LD_F_COUNT) format = LD_F_NONE;
  if (status < 100 || status >= MAX_STATUS) status = 500;
  ADD(requests[route][format][status], 1);
  size_t b = 0;
  while (b < NB && seconds > bounds[b]) b++;
  ADD(hist[route][b], 1);
  ADD(hist_sum_us[route], (uint64_t)(seconds * 1e6));
  ADD(hist_count[route], 1);
}

void ld_metrics_file_bytes(uint64_t n) { ADD(file_bytes, n); }

void ld_metrics_rows(uint64_t rows, const struct lnc_take_stats *st) {
  ADD(rows_served, rows);
  ADD(reads, st->reads);
  ADD(bytes_read, st->bytes_read);
  ADD(bytes_decoded, st->bytes_decoded);
  ADD(cache_hits, st->cache_hits);
  ADD(cache_misses, st->cache_misses);
}

static void counter(struct lnc_buf *o, const char *name, const char *help, uint64_t v) {
  ld_buf_printf(o, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name, name,
                (unsigned long long)v);
}

static void gauge(struct lnc_buf *o, const char *name, const char *help, uint64_t v) {
  ld_buf_printf(o, "# HELP %s %s\n# TYPE %s gauge\n%s %llu\n", name, help, name, name,
                (unsigned long long)v);
}

/* The standard process_* metrics (Prometheus client conventions), read from /proc. */
static void process_metrics(struct lnc_buf *o) {
  long page = sysconf(_SC_PAGESIZE), hz = sysconf(_SC_CLK_TCK);
  unsigned long long vsize = 0, rss_pages = 0, utime = 0, stime = 0, start = 0;
  FILE *fp = fopen("/proc/self/stat", "re");
  if (fp) {
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = 0;
    fclose(fp);
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
    /* after ")": state(3) ... utime(14) stime(15) ... starttime(22) vsize(23) rss(24) */
    if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d %llu %llu %llu",
                    &utime, &stime, &start, &vsize, &rss_pages) != 5)
      utime = stime = start = vsize = rss_pages = 0;
  }
  double boot = 0;
  if ((fp = fopen("/proc/stat", "re"))) {
    char line[256];
    while (fgets(line, sizeof line, fp))
      if (sscanf(line, "btime %lf", &boot) == 1) break;
    fclose(fp);
  }
  uint64_t fds = 0;
  DIR *d = opendir("/proc/self/fd");
  if (d) {
    struct dirent *e;
    while ((e = readdir(d))) fds += e->d_name[0] != '.';
    closedir(d);
    if (fds) fds--; /* the descriptor opendir itself holds */
  }
  struct rlimit rl = {0};
  getrlimit(RLIMIT_NOFILE, &rl);
  ld_buf_printf(o, "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
                   "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %.2f\n",
                hz > 0 ? (double)(utime + stime) / (double)hz : 0.0);
  gauge(o, "process_resident_memory_bytes", "Resident memory size in bytes.", rss_pages * (uint64_t)(page > 0 ? page : 4096));
  gauge(o, "process_virtual_memory_bytes", "Virtual memory size in bytes.", vsize);
  gauge(o, "process_open_fds", "Number of open file descriptors.", fds);
  gauge(o, "process_max_fds", "Maximum number of open file descriptors.", (uint64_t)rl.rlim_cur);
  ld_buf_printf(o, "# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n"
                   "# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds %.2f\n",
                hz > 0 ? boot + (double)start / (double)hz : 0.0);
}

void ld_metrics_render(struct lnc_buf *o, uint64_t connections, uint64_t inflight) {
  ld_buf_puts(o, "# HELP lanced_build_info The running lanced: version, and the Lance file versions it reads.\n"
                 "# TYPE lanced_build_info gauge\n"
                 "lanced_build_info{version=\"" LD_VERSION "\",file_versions=\"2.0,2.1,2.2\"} 1\n");
  process_metrics(o);
  ld_buf_puts(o, "# HELP lanced_requests_total HTTP requests answered, by route, format and "
                 "status.\n# TYPE lanced_requests_total counter\n");
  for (int r = 0; r < LD_R_COUNT; r++)
    for (int f = 0; f < LD_F_COUNT; f++)
      for (int s = 100; s < MAX_STATUS; s++) {
        uint64_t v = GET(requests[r][f][s]);
        if (v)
          ld_buf_printf(o, "lanced_requests_total{route=\"%s\",format=\"%s\",code=\"%d\"} %llu\n",
                        route_names[r], format_names[f], s, (unsigned long long)v);
      }
  ld_buf_puts(o, "# HELP lanced_request_duration_seconds Time from request headers to the "
                 "last byte handed to the socket.\n"
                 "# TYPE lanced_request_duration_seconds histogram\n");
  for (int r = 0; r < LD_R_COUNT; r++) {
    uint64_t count = GET(hist_count[r]), cum = 0;
    if (!count) continue;
    for (size_t b = 0; b <= NB; b++) {
      cum += GET(hist[r][b]);
      if (b < NB)
        ld_buf_printf(o, "lanced_request_duration_seconds_bucket{route=\"%s\",le=\"%g\"} %llu\n",
                      route_names[r], bounds[b], (unsigned long long)cum);
      else
        ld_buf_printf(o, "lanced_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} %llu\n",
                      route_names[r], (unsigned long long)cum);
    }
    ld_buf_printf(o, "lanced_request_duration_seconds_sum{route=\"%s\"} %.6f\n", route_names[r],
                  (double)GET(hist_sum_us[r]) / 1e6);
    ld_buf_printf(o, "lanced_request_duration_seconds_count{route=\"%s\"} %llu\n", route_names[r],
                  (unsigned long long)count);
  }
  counter(o, "lanced_rows_served_total", "Rows returned by take requests.", GET(rows_served));
  counter(o, "lanced_reads_total", "Read requests issued to the device.", GET(reads));
  counter(o, "lanced_bytes_read_total", "Bytes covered by those reads.", GET(bytes_read));
  counter(o, "lanced_bytes_decoded_total", "Bytes of pages decoded.", GET(bytes_decoded));
  counter(o, "lanced_answer_file_bytes_total", "Answer bytes left in their data files: large values of "
                                               "Arrow answers, written to the socket from the page cache.",
          GET(file_bytes));
  /* The crowded ones first: each was counted in ld_dispatch_handoffs before it was counted there. */
  uint64_t crowded = ld_server_crowded_handoffs(), handoffs = ld_dispatch_handoffs();
  counter(o, "lanced_take_handoffs_total", "Requests handed to a take thread because a first "
                                           "attempt on the network thread would have waited for the disk.",
          handoffs - crowded);
  counter(o, "lanced_take_handoffs_crowded_total",
          "Requests handed to a take thread because their connection's requests are heavy (the "
          "last one's take held its thread over 1 ms) and their network thread had two or more busy "
          "connections more than the least busy one.",
          crowded);
  uint64_t hto, ev;
  ld_server_conn_stats(&hto, &ev);
  ld_buf_printf(o, "# HELP lanced_connections_closed_total Connections the daemon closed itself: "
                   "no complete request headers within client_header_timeout_ms, idle ones closed to "
                   "make room over connection_limit, or refused over max_connections_per_client.\n"
                   "# TYPE lanced_connections_closed_total counter\n"
                   "lanced_connections_closed_total{reason=\"header_timeout\"} %llu\n"
                   "lanced_connections_closed_total{reason=\"evicted\"} %llu\n"
                   "lanced_connections_closed_total{reason=\"per_client_cap\"} %llu\n",
                (unsigned long long)hto, (unsigned long long)ev,
                (unsigned long long)ld_acceptor_refused_per_client());
  struct ld_h2_stats h2;
  ld_h2_stats(&h2);
  gauge(o, "lanced_http2_connections", "HTTP/2 connections open.", h2.open);
  counter(o, "lanced_http2_streams_refused_total", "HTTP/2 streams refused (REFUSED_STREAM) over the "
                                                   "128 a connection may have at work.",
          h2.refused);
  counter(o, "lanced_http2_streams_stalled_total", "HTTP/2 streams reset for making no progress for "
                                                   "request_timeout_ms (a body not sent, a window not opened).",
          h2.stalled);
  counter(o, "lanced_http2_protocol_errors_total", "HTTP/2 connections ended for breaking the protocol "
                                                   "or its limits (rapid reset, CONTINUATION floods, malformed frames).",
          h2.protocol_errors);
  struct lnc_loop_stats ls;
  ld_server_loop_stats(&ls);
  counter(o, "lanced_loop_tasks_total", "Requests run as tasks on a network thread's loop "
                                        "(io_mode direct).",
          ls.tasks);
  counter(o, "lanced_loop_parked_tasks_total", "Of those, tasks that parked on device reads "
                                               "and were resumed by their completions on the same thread.",
          ls.parked_tasks);
  counter(o, "lanced_loop_iterations_total", "Iterations of the network threads' loops (one "
                                             "io_uring wait each).",
          ls.waits);
  counter(o, "lanced_loop_enters_total", "io_uring_enter calls made by those iterations.", ls.enters);
  counter(o, "lanced_loop_submissions_total", "Submissions they handed the kernel (device "
                                              "reads of all tasks parked in an iteration, readiness polls, timeouts).",
          ls.submitted);
  struct lnc_engine_stats es;
  ld_service_stats(&es);
  counter(o, "lanced_engine_takes_total", "Data-file takes the engine worked on (attempts on a "
                                          "network thread it refused before any work are not counted).",
          es.takes);
  counter(o, "lanced_cache_hits_total", "Search cache hits.", es.cache_hits);
  counter(o, "lanced_cache_misses_total", "Search cache misses.", es.cache_misses);
  counter(o, "lanced_cache_loads_total", "Files loaded into the search cache.", es.cache_loads);
  counter(o, "lanced_cache_evictions_total", "Files evicted from the search cache.", es.cache_evictions);
  gauge(o, "lanced_cache_resident_bytes", "Bytes held by the search cache.", es.resident_bytes);
  gauge(o, "lanced_cache_budget_bytes", "The search cache's memory budget.", es.budget_bytes);
  gauge(o, "lanced_cache_files", "Files in the search cache.", es.files_cached);
  gauge(o, "lanced_open_files", "Lance files open (in the search cache or in use).", es.open_files);
  gauge(o, "lanced_datasets_cached", "Dataset versions open (manifest and deletions loaded).", es.datasets_cached);
  gauge(o, "lanced_dataset_cache_bytes", "Bytes those dataset versions hold.", es.dataset_bytes);
  gauge(o, "lanced_rowid_index_bytes",
        "Of those, the stable row id indexes (row-id takes of datasets with stable row ids).",
        es.rowid_index_bytes);
  counter(o, "lanced_dataset_listings_total", "Listings of _versions/ to find the latest version.", es.dataset_listings);
  counter(o, "lanced_dataset_opens_total", "Dataset versions opened (manifest read).", es.dataset_opens);
  counter(o, "lanced_object_cache_hits_total", "Object-store reads served whole from the page cache.", es.object_cache_hits);
  counter(o, "lanced_object_cache_misses_total", "Object-store reads that needed a GET.", es.object_cache_misses);
  gauge(o, "lanced_object_cache_bytes", "Bytes of object-store pages in memory.", es.object_cache_bytes);
  gauge(o, "lanced_object_cache_budget_bytes", "The page cache's budget (s3_cache_budget).", es.object_cache_budget);
  gauge(o, "lanced_inflight_requests", "Requests received and not yet completed.", inflight);
  gauge(o, "lanced_unsent_answer_bytes",
        "Bytes of answers built and not yet taken by their clients, held in memory (max_unsent_bytes; "
        "values sent from the page cache are not counted).",
        ld_server_unsent_bytes());
  gauge(o, "lanced_connections", "Open client connections.", connections);
  int per[1024];
  int n = ld_server_net_conns(per, 1024);
  ld_buf_puts(o, "# HELP lanced_network_thread_connections Open connections per network "
                 "thread (new ones go to the least loaded: open ones, a busy one weighing 8).\n"
                 "# TYPE lanced_network_thread_connections gauge\n");
  for (int i = 0; i < n; i++)
    ld_buf_printf(o, "lanced_network_thread_connections{thread=\"%d\"} %d\n", i, per[i]);
}
