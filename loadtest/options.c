/* Command-line parsing for lanced-load (see options.h). Strict: a typo in a number or an
 * unknown format is a usage error (exit 1), never silently a different experiment. */
#include "options.h"
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void ld_options_usage(FILE *f) {
  fputs(
      "usage: lanced-load --url http://127.0.0.1:8080 (--path FILE | --raw-path PATH) [options]\n"
      "       lanced-load [-c CONNS] [-d DURATION] [-t THREADS] http://HOST:PORT/PATH   (as wrk)\n"
      "\n"
      "  -c, -d, -t           wrk's spellings of --connections, --duration, --threads; a\n"
      "                       duration may end in s, m or h (10s, 2m); a URL given as the last\n"
      "                       argument is GET as it is (--raw-path) unless --path names a file\n"
      "  --version, -v        print the version and exit\n"
      "  --url URL            server base URL (http only; a path becomes a prefix)\n"
      "  --path FILE          Lance file to read, relative to the server's root\n"
      "  --raw-path PATH      GET this fixed path instead of the rows API (HTTP baseline)\n"
      "  --batch N            row ids per request (default 1)\n"
      "  --connections C      keep-alive connections in total (default 16)\n"
      "  --duration S         seconds to run (default 10)\n"
      "  --rate R             open loop at R requests/s in total; default closed loop\n"
      "  --format F           json | arrow | proto (default: the server's, json)\n"
      "  --columns a,b        project these columns\n"
      "  --ids KIND           uniform | zipf[:S] (S default 1.1) | sequential (default uniform)\n"
      "  --seed N             seed of the id generators (default 1)\n"
      "  --threads T          event-loop threads (default: number of CPUs)\n"
      "  --post-threshold K   POST when a request has more than K ids (default: when the\n"
      "                       GET request target would exceed 2048 bytes)\n"
      "  --timeout S          per-request timeout in seconds (default 10)\n"
      "  --busy-poll US       poll up to US microseconds before sleeping while answers are\n"
      "                       due (default 0); for a generator with CPUs of its own\n"
      "  --max-error-rate F   exit 2 when errors exceed this fraction of requests (default 0.01)\n"
      "  --num-rows N         row count to draw ids from; skips the metadata request\n"
      "  --verify N           compare N sampled responses with `lancectl take`\n"
      "  --verify-file PATH   local path of the file for lancectl (default: --path)\n"
      "  --lancectl PATH      lancectl binary (default bin/lancectl)\n"
      "  --json               final report as JSON on stdout\n"
      "  --quiet              no progress line\n"
      "  --help\n"
      "\n"
      "exit status: 0 ok, 1 bad usage, 2 server unreachable or too many errors, 3 verify mismatch\n",
      f);
}

static int bad(const char *opt, const char *val) {
  fprintf(stderr, "lanced-load: invalid value for --%s: '%s'\n", opt, val);
  return 1;
}

static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out) {
  if (!s || !*s || *s == '-' || *s == '+') return -1;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

/* "10", "10s", "500ms", "2m", "1h" (wrk's habit) -> seconds. */
static int parse_duration(const char *s, double *out) {
  char buf[32];
  size_t n = s ? strlen(s) : 0;
  if (!n || n >= sizeof buf) return -1;
  memcpy(buf, s, n + 1);
  double mult = 1;
  if (n > 2 && !strcmp(buf + n - 2, "ms"))
    mult = 0.001, buf[n - 2] = 0;
  else if (buf[n - 1] == 's')
    buf[n - 1] = 0;
  else if (buf[n - 1] == 'm')
    mult = 60, buf[n - 1] = 0;
  else if (buf[n - 1] == 'h')
    mult = 3600, buf[n - 1] = 0;
  char *end;
  errno = 0;
  double v = strtod(buf, &end);
  if (!buf[0] || errno || *end || !isfinite(v)) return -1;
  v *= mult;
  if (v < 0.001 || v > 86400) return -1;
  *out = v;
  return 0;
}

static int parse_double(const char *s, double lo, double hi, double *out) {
  if (!s || !*s) return -1;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || *end || !isfinite(v) || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

/* http://host[:port][/prefix]; host may be [v6]. */
static int parse_url(ld_options *o) {
  const char *u = o->url;
  if (strncmp(u, "http://", 7) != 0) {
    fprintf(stderr, "lanced-load: --url must start with http://\n");
    return -1;
  }
  u += 7;
  const char *slash = strchr(u, '/');
  size_t auth_len = slash ? (size_t)(slash - u) : strlen(u);
  const char *port = NULL;
  size_t host_len;
  const char *host = u;
  if (*u == '[') {
    const char *rb = memchr(u, ']', auth_len);
    if (!rb) return -1;
    host = u + 1;
    host_len = (size_t)(rb - host);
    if (rb + 1 < u + auth_len) {
      if (rb[1] != ':') return -1;
      port = rb + 2;
    }
  } else {
    const char *colon = memchr(u, ':', auth_len);
    host_len = colon ? (size_t)(colon - u) : auth_len;
    if (colon) port = colon + 1;
  }
  if (host_len == 0 || host_len >= sizeof o->host) return -1;
  memcpy(o->host, host, host_len);
  o->host[host_len] = 0;
  size_t port_len = port ? (size_t)(u + auth_len - port) : 0;
  if (port) {
    uint64_t p;
    char tmp[8];
    if (port_len == 0 || port_len >= sizeof tmp) return -1;
    memcpy(tmp, port, port_len);
    tmp[port_len] = 0;
    if (parse_u64(tmp, 1, 65535, &p) < 0) return -1;
    snprintf(o->port, sizeof o->port, "%u", (unsigned)p);
  } else {
    snprintf(o->port, sizeof o->port, "80");
  }
  if (auth_len >= sizeof o->host_header) return -1;
  memcpy(o->host_header, u, auth_len);
  o->host_header[auth_len] = 0;
  const char *pre = slash ? slash : "";
  size_t pl = strlen(pre);
  while (pl && pre[pl - 1] == '/') pl--;
  if (pl >= sizeof o->prefix || memchr(pre, '?', pl) || memchr(pre, '#', pl)) return -1;
  memcpy(o->prefix, pre, pl);
  o->prefix[pl] = 0;
  return 0;
}

enum {
  OPT_URL = 256,
  OPT_PATH,
  OPT_RAW,
  OPT_BATCH,
  OPT_CONNS,
  OPT_DURATION,
  OPT_RATE,
  OPT_FORMAT,
  OPT_COLUMNS,
  OPT_IDS,
  OPT_SEED,
  OPT_THREADS,
  OPT_POSTT,
  OPT_TIMEOUT,
  OPT_MAXERR,
  OPT_NROWS,
  OPT_VERIFY,
  OPT_VFILE,
  OPT_LANCECTL,
  OPT_JSON,
  OPT_QUIET,
  OPT_HELP,
  OPT_BUSYPOLL,
  OPT_VERSION,
};

/* A URL given as wrk takes it (positional, with its path): the base goes to o->url, the path
 * and query to o->raw_path unless --path names a file. Storage is static: one per process. */
static int positional_url(ld_options *o, const char *arg) {
  static char base[512], raw[4096];
  if (strncmp(arg, "http://", 7) != 0) return -1;
  const char *slash = strchr(arg + 7, '/');
  size_t bl = slash ? (size_t)(slash - arg) : strlen(arg);
  if (bl >= sizeof base || (slash && strlen(slash) >= sizeof raw)) return -1;
  memcpy(base, arg, bl);
  base[bl] = 0;
  o->url = base;
  if (!o->path && !o->raw_path) {
    snprintf(raw, sizeof raw, "%s", slash ? slash : "/");
    o->raw_path = raw;
  }
  return 0;
}

int ld_options_parse(int argc, char **argv, ld_options *o) {
  static const struct option longopts[] = {
      {"url", required_argument, 0, OPT_URL},
      {"path", required_argument, 0, OPT_PATH},
      {"raw-path", required_argument, 0, OPT_RAW},
      {"batch", required_argument, 0, OPT_BATCH},
      {"connections", required_argument, 0, OPT_CONNS},
      {"duration", required_argument, 0, OPT_DURATION},
      {"rate", required_argument, 0, OPT_RATE},
      {"format", required_argument, 0, OPT_FORMAT},
      {"columns", required_argument, 0, OPT_COLUMNS},
      {"ids", required_argument, 0, OPT_IDS},
      {"seed", required_argument, 0, OPT_SEED},
      {"threads", required_argument, 0, OPT_THREADS},
      {"post-threshold", required_argument, 0, OPT_POSTT},
      {"timeout", required_argument, 0, OPT_TIMEOUT},
      {"busy-poll", required_argument, 0, OPT_BUSYPOLL},
      {"max-error-rate", required_argument, 0, OPT_MAXERR},
      {"num-rows", required_argument, 0, OPT_NROWS},
      {"verify", required_argument, 0, OPT_VERIFY},
      {"verify-file", required_argument, 0, OPT_VFILE},
      {"lancectl", required_argument, 0, OPT_LANCECTL},
      {"json", no_argument, 0, OPT_JSON},
      {"quiet", no_argument, 0, OPT_QUIET},
      {"help", no_argument, 0, OPT_HELP},
      {"version", no_argument, 0, OPT_VERSION},
      {0, 0, 0, 0},
  };
  memset(o, 0, sizeof *o);
  o->batch = 1;
  o->connections = 16;
  o->duration = 10;
  o->ids.kind = LD_IDS_UNIFORM;
  o->seed = 1;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  o->threads = ncpu > 0 ? (unsigned)ncpu : 1;
  o->timeout = 10;
  o->max_error_rate = 0.01;
  o->lancectl = "bin/lancectl";
  uint64_t u;
  int c;
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, "c:d:t:hv", longopts, NULL)) != -1) {
    const char *name = c >= OPT_URL && c <= OPT_HELP ? longopts[c - OPT_URL].name : "?";
    if (c == 'c')
      c = OPT_CONNS, name = "connections";
    else if (c == 'd')
      c = OPT_DURATION, name = "duration";
    else if (c == 't')
      c = OPT_THREADS, name = "threads";
    else if (c == 'h')
      c = OPT_HELP;
    else if (c == 'v')
      c = OPT_VERSION;
    switch (c) {
    case OPT_VERSION: printf("lanced-load %s\n", LD_LOAD_VERSION); return 2;
    case OPT_URL: o->url = optarg; break;
    case OPT_PATH: o->path = optarg; break;
    case OPT_RAW: o->raw_path = optarg; break;
    case OPT_BATCH:
      if (parse_u64(optarg, 1, 1000000, &u) < 0) return bad(name, optarg);
      o->batch = (size_t)u;
      break;
    case OPT_CONNS:
      if (parse_u64(optarg, 1, 100000, &u) < 0) return bad(name, optarg);
      o->connections = (unsigned)u;
      break;
    case OPT_DURATION:
      if (parse_duration(optarg, &o->duration) < 0) return bad(name, optarg);
      break;
    case OPT_RATE:
      if (parse_double(optarg, 0.001, 1e8, &o->rate) < 0) return bad(name, optarg);
      break;
    case OPT_FORMAT:
      if (strcmp(optarg, "json") && strcmp(optarg, "arrow") && strcmp(optarg, "proto")) return bad(name, optarg);
      o->format = optarg;
      break;
    case OPT_COLUMNS:
      if (!*optarg || optarg[0] == ',' || optarg[strlen(optarg) - 1] == ',' || strstr(optarg, ",,"))
        return bad(name, optarg);
      o->columns = optarg;
      break;
    case OPT_IDS:
      if (ld_ids_spec_parse(optarg, &o->ids) < 0) return bad(name, optarg);
      break;
    case OPT_SEED:
      if (parse_u64(optarg, 0, UINT64_MAX, &o->seed) < 0) return bad(name, optarg);
      break;
    case OPT_THREADS:
      if (parse_u64(optarg, 1, 1024, &u) < 0) return bad(name, optarg);
      o->threads = (unsigned)u;
      break;
    case OPT_POSTT:
      if (parse_u64(optarg, 1, 100000000, &u) < 0) return bad(name, optarg);
      o->post_threshold = (size_t)u;
      break;
    case OPT_TIMEOUT:
      if (parse_double(optarg, 0.001, 3600, &o->timeout) < 0) return bad(name, optarg);
      break;
    case OPT_BUSYPOLL:
      if (parse_u64(optarg, 0, 1000000, &u) < 0) return bad(name, optarg);
      o->busy_poll_us = (unsigned)u;
      break;
    case OPT_MAXERR:
      if (parse_double(optarg, 0, 1, &o->max_error_rate) < 0) return bad(name, optarg);
      break;
    case OPT_NROWS:
      if (parse_u64(optarg, 1, UINT64_MAX, &o->num_rows) < 0) return bad(name, optarg);
      break;
    case OPT_VERIFY:
      if (parse_u64(optarg, 1, 100000, &u) < 0) return bad(name, optarg);
      o->verify = (size_t)u;
      break;
    case OPT_VFILE: o->verify_file = optarg; break;
    case OPT_LANCECTL: o->lancectl = optarg; break;
    case OPT_JSON: o->json = true; break;
    case OPT_QUIET: o->quiet = true; break;
    case OPT_HELP: ld_options_usage(stdout); return 2;
    default:
      fprintf(stderr, "lanced-load: unknown or incomplete option '%s'\n", argv[optind - 1]);
      ld_options_usage(stderr);
      return 1;
    }
  }
  if (optind + 1 == argc && !o->url && positional_url(o, argv[optind]) == 0) optind++;
  if (optind < argc) {
    fprintf(stderr, "lanced-load: unexpected argument '%s'\n", argv[optind]);
    return 1;
  }
  if (!o->url) {
    fprintf(stderr, "lanced-load: --url is required\n");
    return 1;
  }
  if (parse_url(o) < 0) return bad("url", o->url);
  if (!o->path == !o->raw_path) {
    fprintf(stderr, "lanced-load: give exactly one of --path and --raw-path\n");
    return 1;
  }
  if (o->raw_path && (o->verify || o->columns || o->format)) {
    fprintf(stderr, "lanced-load: --verify, --columns and --format apply to the rows API, not --raw-path\n");
    return 1;
  }
  if (!o->verify_file) o->verify_file = o->path;
  if (o->threads > o->connections) o->threads = o->connections;
  return 0;
}
