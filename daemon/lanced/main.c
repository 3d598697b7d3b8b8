/* lanced's entry point and lifecycle: configuration, the data root, starting the server,
 * then the main thread waits for signals only — SIGHUP reloads limits and log level,
 * SIGTERM/SIGINT drain in-flight requests and exit 0. Worker threads never see signals. */
#include "lanced.h"
#include "config.h"
#include "service.h"
#include "server.h"
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

static void notify_reloading(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  char msg[96];
  snprintf(msg, sizeof msg, "RELOADING=1\nMONOTONIC_USEC=%llu",
           (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000);
  ld_notify(msg);
}

/* Re-reads the file and the same flags (flags still win). What a reload cannot change
 * without dropping connections (root, listen, workers) is kept and reported. */
static void reload(const struct ld_config *running, int argc, char **argv) {
  struct ld_config next;
  char msg[1024];
  notify_reloading();
  ld_config_defaults(&next);
  int rc = ld_config_from_args(&next, argc, argv, msg, sizeof msg);
  if (!rc && !next.root[0] && running->root_made) /* still mounts only: the same empty root */
    snprintf(next.root, sizeof next.root, "%s", running->root);
  if (rc || ld_config_validate(&next, msg, sizeof msg)) {
    ld_log(LD_LOG_ERROR, "reload failed, keeping the running configuration: %s", msg);
  } else {
    if (strcmp(next.root, running->root) || next.nlisten != running->nlisten ||
        next.workers != running->workers)
      ld_log(LD_LOG_WARN, "reload: root, listen and workers only change on restart");
    for (int i = 0; i < next.nlisten && i < running->nlisten; i++)
      if (strcmp(next.listen[i], running->listen[i]))
        ld_log(LD_LOG_WARN, "reload: root, listen and workers only change on restart");
    ld_config_fit_fds(&next);
    ld_limits_set(&next);
    ld_service_reload(&next);
    ld_log(LD_LOG_INFO, "reloaded: cache_budget=%llu ", (unsigned long long)next.cache_budget);
    ld_log(LD_LOG_INFO, "reloaded: max_ids_per_request=%llu max_body_bytes=%llu "
                        "connection_limit=%llu max_inflight=%llu log_level=%s",
           (unsigned long long)next.max_ids_per_request, (unsigned long long)next.max_body_bytes,
           (unsigned long long)next.connection_limit, (unsigned long long)next.max_inflight,
           ld_log_level_name(next.log_level));
  }
  ld_notify("READY=1");
}

/* With object-store mounts only (no `root`), the local root is an empty directory made for
 * the run: every local path is then "not found" through the same checks as always (the engine
 * never resolves a path against the working directory), and the listing shows the mounts. */
static int make_empty_root(struct ld_config *c) {
  const char *tmp = getenv("TMPDIR");
  snprintf(c->root, sizeof c->root, "%s/lanced-mounts-only-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(c->root)) {
    ld_log(LD_LOG_ERROR, "no root given and no empty one could be made at %s: %s; set `root`", c->root, strerror(errno));
    return -1;
  }
  chmod(c->root, 0500);
  c->root_made = true;
  ld_log(LD_LOG_INFO, "no root: serving the object-store mounts only");
  return 0;
}

/* Requests still in flight at the drain's deadline are parked on a stalled read or held by a
 * take thread (a slow disk or store). Nothing can be stopped under them: their take threads
 * and loop tasks would go on using requests and connections freed under them. So the process ends here, and
 * the kernel closes their sockets; status 1 says that requests were abandoned. */
static _Noreturn void drain_timed_out(uint64_t n) {
  ld_log(LD_LOG_WARN, "drain timed out with %llu requests in flight: exiting without them",
         (unsigned long long)n);
  _exit(1);
}

/* Waits for the requests in flight to finish, until deadline; returns how many are left. */
static uint64_t wait_inflight(double deadline) {
  uint64_t n;
  while ((n = ld_server_inflight()) > 0 && lnc_now_s() < deadline) {
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  return n;
}

static void drain(const struct ld_config *cfg) {
  ld_draining = LD_DRAIN_OPEN;
  ld_notify("STOPPING=1");
  ld_server_quiesce();
  double deadline = lnc_now_s() + (double)cfg->request_timeout_ms / 1000.0 + 1.0;
  uint64_t n = ld_server_inflight();
  ld_log(LD_LOG_INFO, "shutting down: draining %llu in-flight requests", (unsigned long long)n);
  n = wait_inflight(deadline);
  /* Then the gate: from here a new request (on a keep-alive connection idle since before the
   * drain) is answered 503 at once, never put to work under the network threads stopped
   * next. One that began before the gate closed is counted by the second wait. The fence
   * orders the store before that count; ld_req_new counts itself before the gate is read. */
  ld_draining = LD_DRAIN_CLOSED;
  atomic_thread_fence(memory_order_seq_cst);
  if (!n) n = wait_inflight(deadline);
  if (n) drain_timed_out(n);
  ld_test_stop_delay();
  ld_server_stop();
  ld_dispatch_stop(); /* joins the take threads; the last may still be waking a network thread */
  ld_server_free();
  ld_service_shutdown();
  ld_log(LD_LOG_INFO, "stopped");
}

/* A request allocates and frees a few hundred KiB (decoded chunks, answer bodies), a training
 * batch several MiB (256 rows of 8-32 KiB images: a 6 MiB value buffer, its answer). glibc
 * gives a thread arena's free top back to the kernel once it passes 128 KiB (madvise) and
 * serves blocks over 128 KiB... up to its adaptive limit with mmap, so the next request
 * faults the same pages in again, zeroed: a profile of warm takes showed ~5% of the CPU in
 * page faults, page clearing and unmapping, and with an 8 MiB limit a batch-256 training
 * take spent 19% of its CPU faulting its buffers in (85 ms an answer where a batch of 100
 * took 6 ms: issue 34). Mapping only blocks of 64 MiB (max_response_bytes' default) and
 * keeping up to 64 MiB free per arena trades that for memory the daemon reuses anyway; a
 * burst of large unsent answers is given back by malloc_trim (server.c). */
static void tune_malloc(void) {
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
}

int main(int argc, char **argv) {
  struct ld_config cfg;
  char msg[1024];
  ld_config_defaults(&cfg);
  int rc = ld_config_from_args(&cfg, argc, argv, msg, sizeof msg);
  if (rc == 1) return 0;
  if (rc == 0) rc = ld_config_validate(&cfg, msg, sizeof msg);
  if (cfg.check_only) {
    if (rc)
      fprintf(stderr, "lanced: config invalid: %s\n", msg);
    else
      printf("lanced: config OK (root %s, %d listen address%s, %d workers)\n", cfg.root,
             cfg.nlisten, cfg.nlisten == 1 ? "" : "es", cfg.workers);
    return rc ? 1 : 0;
  }
  if (rc) {
    ld_log(LD_LOG_ERROR, "%s", msg); /* an error to journald too (log.c) */
    return 1;
  }
  ld_config_fit_fds(&cfg);
  ld_limits_set(&cfg);
  tune_malloc();

  if (!cfg.root[0] && make_empty_root(&cfg)) return 1;
  int rootfd = open(cfg.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0) {
    ld_log(LD_LOG_ERROR, "root %s: %s", cfg.root, strerror(errno));
    return 1;
  }
  /* Block the signals before any thread exists so every worker inherits the mask and
   * only sigwait below receives them. */
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, NULL);
  signal(SIGPIPE, SIG_IGN);

  /* The watchdog (WatchdogSec=): pinged at half its interval, and only while every network
   * thread's loop has turned within that time — a wedged loop stops the pings and systemd
   * restarts the service. Loops wait at most a quarter of the interval per iteration so an
   * idle but healthy loop still turns often enough. */
  uint64_t wd_usec = ld_watchdog_usec();
  if (wd_usec) ld_server_set_max_wait_ms(wd_usec / 4000 < 1000 ? (int)(wd_usec / 4000) : 1000);
  if (ld_service_init(&cfg)) return 1;
  if (ld_dispatch_start(cfg.take_threads, cfg.nmounts, cfg.store_threads, cfg.s3_timeout_ms)) return 1;
  if (ld_server_start(&cfg, rootfd)) return 1;
  ld_log(LD_LOG_INFO, "lanced %s serving %s with %d workers (io_mode=%s cache_budget=%llu)",
         LD_VERSION, cfg.root, cfg.workers, cfg.io_mode == LD_IO_DIRECT ? "direct" : "buffered",
         (unsigned long long)cfg.cache_budget);
  ld_notify("READY=1\nSTATUS=serving");

  for (;;) {
    int sig;
    if (wd_usec) {
      struct timespec half = {(time_t)(wd_usec / 2000000), (long)(wd_usec / 2 % 1000000) * 1000};
      sig = sigtimedwait(&set, NULL, &half);
      if (ld_server_loops_turning((double)wd_usec / 2e6)) ld_notify("WATCHDOG=1");
      if (sig < 0) continue;
    } else if (sigwait(&set, &sig)) {
      continue;
    }
    if (sig == SIGHUP) {
      reload(&cfg, argc, argv);
      continue;
    }
    ld_log(LD_LOG_INFO, "got %s", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    break;
  }
  drain(&cfg);
  close(rootfd);
  if (cfg.root_made) rmdir(cfg.root);
  return 0;
}
