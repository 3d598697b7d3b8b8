/* Configuration: defaults, the `key = value` file (conf/lanced.conf documents every key),
 * command-line flags that override it, validation for --check-config, and the live limits
 * that SIGHUP replaces. */
#include "lanced.h"
#include "config.h"
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* Timeouts are at most a day: anything longer is a mistake, and the arithmetic on them
 * stays far from wrapping. */
#define MAX_TIMEOUT_MS 86400000u

void ld_config_defaults(struct ld_config *c) {
  memset(c, 0, sizeof *c);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  c->workers = n > 0 ? (int)n : 1;
  /* Takes wait on the disk; several per core keep the device queue deep (O_DIRECT reads
   * are submitted as one batch per request) without holding the network threads. */
  c->take_threads = c->workers * 4 < 4 ? 4 : c->workers * 4;
  c->cache_budget = 1ull << 30;
  c->io_mode = LD_IO_DIRECT;
  c->rep_policy = LD_REP_ALWAYS;
  c->max_ids_per_request = 10000;
  c->max_body_bytes = 1 << 20;
  c->max_response_bytes = 64ull << 20;
  c->request_timeout_ms = 30000;
  /* How stale a cached file's identity or a dataset's latest version may be: checking them
   * costs ~4 system calls per request (stat, two directory opens, fstat), a third of a warm
   * request's CPU, while the answer changes only when a writer commits. 100 ms is far below
   * any trainer's commit-to-read gap, and at 50k requests/s it is one check in 5,000
   * requests (nginx's open_file_cache_valid reasons the same way, at 60 s for static files). */
  c->revalidate_ms = 100;
  /* A HEAD or a listing is a round trip to the store (tens of ms), not a stat: once a
   * second per object bounds what revalidation costs. */
  c->s3_revalidate_ms = 1000;
  c->s3_timeout_ms = 30000; /* the library's default, named here: the object-store threads use it too */
  /* A mount's first loads and descriptions wait on its store: a few at once per mount. */
  c->store_threads = 4;
  c->s3_cache_budget = 256ull << 20;
  c->s3_cache_block = 16u << 10;
  c->loop_max_ids = 0;     /* see docs/performance.md: decoding on the loop measured better */
  c->connection_limit = 0; /* sized from RLIMIT_NOFILE (ld_config_fit_fds) */
  c->header_timeout_ms = 10000;
  /* Off by default: a sidecar's clients, its health probe included, usually share one
   * address (127.0.0.1), which a cap would make compete; idle eviction and the header
   * deadline already bound what one client can hold. Set it when clients come from the
   * network. */
  c->max_conns_per_client = 0;
  c->max_inflight = 256;
  c->max_unsent_bytes = 1ull << 30;
  c->log_level = LD_LOG_INFO;
  c->request_log = false; /* a line per request costs more than the request at high rates */
}

/* "64M", "1GiB", "4096": binary multiples, because budgets are about memory. */
static int parse_size(const char *v, uint64_t *out) {
  char *end;
  errno = 0;
  if (!isdigit((unsigned char)*v)) return -1;
  unsigned long long n = strtoull(v, &end, 10);
  if (errno) return -1;
  uint64_t mul = 1;
  if (*end) {
    char u = (char)toupper((unsigned char)*end++);
    if (u == 'K')
      mul = 1ull << 10;
    else if (u == 'M')
      mul = 1ull << 20;
    else if (u == 'G')
      mul = 1ull << 30;
    else if (u == 'T')
      mul = 1ull << 40;
    else if (u == 'B' && !*end)
      mul = 1;
    else
      return -1;
    if (mul > 1 && *end && strcasecmp(end, "B") && strcasecmp(end, "iB")) return -1;
  }
  if (n > UINT64_MAX / mul) return -1;
  *out = n * mul;
  return 0;
}

static int parse_uint(const char *v, uint64_t *out) {
  return lnc_parse_u64(v, strlen(v), out) ? 0 : -1;
}

static int parse_bool(const char *v, bool *out) {
  if (!strcasecmp(v, "on") || !strcasecmp(v, "true") || !strcasecmp(v, "yes") || !strcmp(v, "1"))
    *out = true;
  else if (!strcasecmp(v, "off") || !strcasecmp(v, "false") || !strcasecmp(v, "no") ||
           !strcmp(v, "0"))
    *out = false;
  else
    return -1;
  return 0;
}

/* mount = NAME=s3://bucket[/prefix]: NAME one path component; repeated names are an error. */
static int set_mount(struct ld_config *c, const char *v, char *msg, size_t msglen) {
  const char *eq = strchr(v, '=');
  size_t n = eq ? (size_t)(eq - v) : 0;
  if (!eq || !n || n >= sizeof c->mounts[0].name || memchr(v, '/', n) || strncmp(eq + 1, "s3://", 5) ||
      strlen(eq + 1) >= sizeof c->mounts[0].url || (n <= 2 && !strncmp(v, "..", n))) {
    snprintf(msg, msglen, "bad value for mount: '%.200s' (expected NAME=s3://bucket[/prefix])", v);
    return -1;
  }
  for (int i = 0; i < c->nmounts; i++)
    if (strlen(c->mounts[i].name) == n && !strncmp(c->mounts[i].name, v, n)) {
      snprintf(msg, msglen, "mount name '%.*s' used twice", (int)n, v);
      return -1;
    }
  if (c->nmounts == LD_MAX_MOUNTS) {
    snprintf(msg, msglen, "too many mounts (at most %d)", LD_MAX_MOUNTS);
    return -1;
  }
  struct ld_mount *m = &c->mounts[c->nmounts++];
  memcpy(m->name, v, n);
  m->name[n] = 0;
  strcpy(m->url, eq + 1);
  return 0;
}

/* Copies v into a fixed field; -1 when it does not fit. */
static int set_str(char *dst, size_t cap, const char *v) {
  if (strlen(v) >= cap) return -1;
  strcpy(dst, v);
  return 0;
}

/* The s3_* keys: 0, -1 for a bad value, -2 for an unknown key. Credentials fail only on
 * their length, and set_key's message then leaves the value out. */
static int set_s3_key(struct ld_config *c, const char *k, const char *v) {
  if (!strcmp(k, "s3_endpoint")) return set_str(c->s3_endpoint, sizeof c->s3_endpoint, v);
  if (!strcmp(k, "s3_region")) return set_str(c->s3_region, sizeof c->s3_region, v);
  if (!strcmp(k, "s3_access_key_id")) return set_str(c->s3_access_key_id, sizeof c->s3_access_key_id, v);
  if (!strcmp(k, "s3_secret_access_key")) return set_str(c->s3_secret_access_key, sizeof c->s3_secret_access_key, v);
  if (!strcmp(k, "s3_session_token")) return set_str(c->s3_session_token, sizeof c->s3_session_token, v);
  if (!strcmp(k, "s3_addressing")) {
    c->s3_addressing = !strcmp(v, "auto") ? LNC_S3_AUTO : !strcmp(v, "path")  ? LNC_S3_PATH
                                                      : !strcmp(v, "virtual") ? LNC_S3_VIRTUAL
                                                                              : -1;
    return c->s3_addressing < 0 ? -1 : 0;
  }
  if (!strcmp(k, "s3_merge_gap")) return parse_size(v, &c->s3_merge_gap);
  if (!strcmp(k, "s3_max_parallel")) return parse_uint(v, &c->s3_max_parallel) || c->s3_max_parallel > 1024 ? -1 : 0;
  if (!strcmp(k, "s3_timeout_ms")) {
    if (parse_uint(v, &c->s3_timeout_ms) || c->s3_timeout_ms > 3600000) return -1;
    if (!c->s3_timeout_ms) c->s3_timeout_ms = 30000; /* 0 meant the library's default, and still does */
    return 0;
  }
  if (!strcmp(k, "s3_cache_budget")) return parse_size(v, &c->s3_cache_budget);
  if (!strcmp(k, "s3_cache_block"))
    return parse_size(v, &c->s3_cache_block) || c->s3_cache_block < 4096 || c->s3_cache_block > (4u << 20) ||
                   (c->s3_cache_block & (c->s3_cache_block - 1))
               ? -1
               : 0;
  if (!strcmp(k, "s3_revalidate_ms")) return parse_uint(v, &c->s3_revalidate_ms) || c->s3_revalidate_ms > 3600000 ? -1 : 0;
  return -2;
}

/* Applies one setting; `replace_listen` makes the first `listen` drop earlier ones, so a
 * file's listen lines (or the flags') form the whole list. Returns 0 or -1 with msg. */
static int set_key(struct ld_config *c, const char *k, const char *v, bool *listen_reset,
                   char *msg, size_t msglen) {
  uint64_t u;
  if (!strcmp(k, "root")) {
    if (strlen(v) >= sizeof c->root) goto bad;
    strcpy(c->root, v);
  } else if (!strcmp(k, "listen")) {
    if (!*listen_reset) c->nlisten = 0, *listen_reset = true;
    if (c->nlisten >= LD_MAX_LISTEN) {
      snprintf(msg, msglen, "too many listen addresses (at most %d)", LD_MAX_LISTEN);
      return -1;
    }
    char host[256];
    unsigned port;
    if (strlen(v) >= sizeof c->listen[0] || ld_split_hostport(v, host, sizeof host, &port))
      goto bad;
    strcpy(c->listen[c->nlisten++], v);
  } else if (!strcmp(k, "workers")) {
    if (parse_uint(v, &u) || u < 1 || u > 1024) goto bad;
    c->workers = (int)u;
  } else if (!strcmp(k, "take_threads")) {
    if (parse_uint(v, &u) || u < 1 || u > 1024) goto bad;
    c->take_threads = (int)u;
  } else if (!strcmp(k, "store_threads")) {
    if (parse_uint(v, &u) || u < 1 || u > 256) goto bad;
    c->store_threads = (int)u;
  } else if (!strcmp(k, "mount")) {
    return set_mount(c, v, msg, msglen);
  } else if (!strncmp(k, "s3_", 3)) {
    int r = set_s3_key(c, k, v);
    if (r == -2) {
      snprintf(msg, msglen, "unknown key '%s'", k);
      return -1;
    }
    if (r) goto bad;
  } else if (!strcmp(k, "cache_budget")) {
    if (parse_size(v, &c->cache_budget)) goto bad;
  } else if (!strcmp(k, "io_mode")) {
    if (!strcmp(v, "direct"))
      c->io_mode = LD_IO_DIRECT;
    else if (!strcmp(v, "buffered"))
      c->io_mode = LD_IO_BUFFERED;
    else
      goto bad;
  } else if (!strcmp(k, "rep_index_policy")) {
    if (!strcmp(v, "always"))
      c->rep_policy = LD_REP_ALWAYS;
    else if (!strcmp(v, "never"))
      c->rep_policy = LD_REP_NEVER;
    else if (!strncmp(v, "max:", 4) && !parse_size(v + 4, &c->rep_max_bytes))
      c->rep_policy = LD_REP_MAX;
    else
      goto bad;
  } else if (!strcmp(k, "max_ids_per_request")) {
    if (parse_uint(v, &c->max_ids_per_request) || !c->max_ids_per_request) goto bad;
  } else if (!strcmp(k, "max_body_bytes")) {
    if (parse_size(v, &c->max_body_bytes) || !c->max_body_bytes) goto bad;
  } else if (!strcmp(k, "max_response_bytes")) {
    if (parse_size(v, &c->max_response_bytes) || !c->max_response_bytes) goto bad;
  } else if (!strcmp(k, "request_timeout_ms")) {
    /* bounded, and never 0 (which would mean no timeout at all) */
    if (parse_uint(v, &c->request_timeout_ms) || !c->request_timeout_ms || c->request_timeout_ms > MAX_TIMEOUT_MS) goto bad;
  } else if (!strcmp(k, "loop_max_ids")) {
    if (parse_uint(v, &c->loop_max_ids)) goto bad;
  } else if (!strcmp(k, "revalidate_ms")) {
    if (parse_uint(v, &c->revalidate_ms) || c->revalidate_ms > 3600000) goto bad;
  } else if (!strcmp(k, "connection_limit")) {
    if (parse_uint(v, &c->connection_limit) || c->connection_limit > 1000000) goto bad;
  } else if (!strcmp(k, "client_header_timeout_ms")) {
    if (parse_uint(v, &c->header_timeout_ms) || !c->header_timeout_ms || c->header_timeout_ms > MAX_TIMEOUT_MS) goto bad;
  } else if (!strcmp(k, "max_connections_per_client")) {
    if (parse_uint(v, &c->max_conns_per_client)) goto bad;
  } else if (!strcmp(k, "max_unsent_bytes")) {
    if (parse_size(v, &c->max_unsent_bytes) || !c->max_unsent_bytes) goto bad;
  } else if (!strcmp(k, "max_inflight")) {
    if (parse_uint(v, &c->max_inflight) || !c->max_inflight || c->max_inflight > 1000000) goto bad;
  } else if (!strcmp(k, "log_level")) {
    int l = ld_log_level_parse(v);
    if (l < 0) goto bad;
    c->log_level = l;
  } else if (!strcmp(k, "request_log")) {
    if (parse_bool(v, &c->request_log)) goto bad;
  } else {
    snprintf(msg, msglen, "unknown key '%s'", k);
    return -1;
  }
  return 0;
bad:
  if (!strncmp(k, "s3_", 3) && (strstr(k, "secret") || strstr(k, "token") || strstr(k, "key_id"))) {
    snprintf(msg, msglen, "bad value for %s (too long; not shown: it is a credential)", k);
    return -1;
  }
  snprintf(msg, msglen, "bad value for %s: '%s'", k, v);
  return -1;
}

static char *trim(char *s) {
  while (isspace((unsigned char)*s)) s++;
  char *e = s + strlen(s);
  while (e > s && isspace((unsigned char)e[-1])) *--e = 0;
  return s;
}

int ld_config_load(struct ld_config *c, const char *path, char *msg, size_t msglen) {
  FILE *f = fopen(path, "re");
  if (!f) {
    snprintf(msg, msglen, "%s: %s", path, strerror(errno));
    return -1;
  }
  char line[4096], err[600];
  int lineno = 0, rc = 0;
  bool listen_reset = false;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    char *hash = strchr(line, '#'); /* no key or value ever contains '#' */
    if (hash) *hash = 0;
    char *s = trim(line);
    if (!*s) continue;
    char *eq = strchr(s, '=');
    if (!eq) {
      snprintf(msg, msglen, "%s:%d: expected 'key = value'", path, lineno);
      rc = -1;
      break;
    }
    *eq = 0;
    char *k = trim(s), *v = trim(eq + 1);
    if (set_key(c, k, v, &listen_reset, err, sizeof err)) {
      snprintf(msg, msglen, "%s:%d: %s", path, lineno, err);
      rc = -1;
      break;
    }
  }
  fclose(f);
  if (!rc && strlen(path) < sizeof c->config_path) strcpy(c->config_path, path);
  return rc;
}

static void usage(FILE *o) {
  fprintf(o,
          "usage: lanced --root DIR --listen HOST:PORT [options]\n"
          "Serves rows of the Lance files and datasets under DIR over HTTP (file versions 2.0,\n"
          "2.1, 2.2): GET /files/PATH/rows?ids=1,5,9 (see lanced(8) and docs/api.md).\n"
          "Every option is also a config-file key (dashes as underscores); defaults in ():\n"
          "  --config FILE                  read FILE first (flags override it)\n"
          "  --check-config                 validate the configuration and exit\n"
          "  --root DIR                     the data root (required unless only --mount is served)\n"
          "  --listen HOST:PORT             address to serve (repeatable; [v6]:PORT, :PORT)\n"
          "  --workers N                    network threads (CPUs)\n"
          "  --take-threads N               threads for what would block (4 x workers, >= 4)\n"
          "  --mount NAME=s3://BUCKET[/PREFIX]  serve an object-store prefix as /files/NAME/ (repeatable)\n"
          "  --store-threads N              per mount: threads for what waits on its store (4)\n"
          "  --s3-endpoint URL              S3-compatible endpoint (AWS_ENDPOINT_URL; AWS)\n"
          "  --s3-region R                  (AWS_REGION; us-east-1)\n"
          "  --s3-addressing auto|path|virtual  (auto: path style with an endpoint)\n"
          "  --s3-merge-gap SIZE            reads closer than this share one GET (64K)\n"
          "  --s3-max-parallel N            GETs in flight per request (32)\n"
          "  --s3-timeout-ms MS             a store call, retries included (30000)\n"
          "  --s3-revalidate-ms MS          re-HEAD objects / re-list versions (1000)\n"
          "  --s3-cache-budget SIZE         memory for fetched object pages (256M; 0 = none)\n"
          "  --s3-cache-block SIZE          their size, a power of two 4K..4M (16K)\n"
          "  (credentials: s3_access_key_id, s3_secret_access_key, s3_session_token in the\n"
          "   config file, else AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN)\n"
          "  --cache-budget SIZE            search-cache memory, e.g. 512M, 4G (1G)\n"
          "  --io-mode direct|buffered      O_DIRECT on the loop, or the page cache (direct)\n"
          "  --rep-index-policy always|never|max:SIZE  keep full-zip repetition indices (always)\n"
          "  --max-ids-per-request N        (10000)\n"
          "  --max-body-bytes SIZE          (1M)\n"
          "  --max-response-bytes SIZE      (64M)\n"
          "  --request-timeout-ms MS        idle limit; SIGTERM drain bound (30000)\n"
          "  --revalidate-ms MS             recheck cached files / latest versions (100; 0 = always)\n"
          "  --loop-max-ids N               takes of more ids go to take threads (0 = none)\n"
          "  --connection-limit N           (0 = a quarter of RLIMIT_NOFILE)\n"
          "  --client-header-timeout-ms MS  headers (and a body) due within (10000)\n"
          "  --max-connections-per-client N (0 = no cap)\n"
          "  --max-inflight N               requests at work at once, then 503 (256)\n"
          "  --max-unsent-bytes N           answers built, waiting on slow readers; over it 503 (1G)\n"
          "  --log-level error|warn|info|debug  (info)\n"
          "  --request-log on|off           a line per request (off)\n"
          "  --help, --version\n");
}

int ld_config_from_args(struct ld_config *c, int argc, char **argv, char *msg, size_t msglen) {
  /* Every file key is accepted as --key-with-dashes VALUE. */
  static const struct option opts[] = {
      {"config", required_argument, 0, 'c'},
      {"check-config", no_argument, 0, 'C'},
      {"help", no_argument, 0, 'h'},
      {"version", no_argument, 0, 'V'},
      {"root", required_argument, 0, 1},
      {"listen", required_argument, 0, 1},
      {"workers", required_argument, 0, 1},
      {"cache-budget", required_argument, 0, 1},
      {"take-threads", required_argument, 0, 1},
      {"mount", required_argument, 0, 1},
      {"store-threads", required_argument, 0, 1},
      {"s3-endpoint", required_argument, 0, 1},
      {"s3-region", required_argument, 0, 1},
      {"s3-addressing", required_argument, 0, 1},
      {"s3-merge-gap", required_argument, 0, 1},
      {"s3-max-parallel", required_argument, 0, 1},
      {"s3-timeout-ms", required_argument, 0, 1},
      {"s3-revalidate-ms", required_argument, 0, 1},
      {"s3-cache-budget", required_argument, 0, 1},
      {"s3-cache-block", required_argument, 0, 1},
      {"io-mode", required_argument, 0, 1},
      {"rep-index-policy", required_argument, 0, 1},
      {"max-ids-per-request", required_argument, 0, 1},
      {"max-body-bytes", required_argument, 0, 1},
      {"max-response-bytes", required_argument, 0, 1},
      {"request-timeout-ms", required_argument, 0, 1},
      {"revalidate-ms", required_argument, 0, 1},
      {"loop-max-ids", required_argument, 0, 1},
      {"connection-limit", required_argument, 0, 1},
      {"client-header-timeout-ms", required_argument, 0, 1},
      {"max-connections-per-client", required_argument, 0, 1},
      {"max-inflight", required_argument, 0, 1},
      {"max-unsent-bytes", required_argument, 0, 1},
      {"log-level", required_argument, 0, 1},
      {"request-log", required_argument, 0, 1},
      {0, 0, 0, 0}};
  /* Pass 1: find --config (and --help) so the file is read before flags override it. */
  const char *config = NULL;
  int idx, o;
  opterr = 0;
  optind = 1;
  while ((o = getopt_long(argc, argv, "", opts, &idx)) != -1) {
    if (o == 'c')
      config = optarg;
    else if (o == 'h') {
      usage(stdout);
      return 1;
    } else if (o == 'V') {
      printf("lanced %s\n", LD_VERSION);
      return 1;
    } else if (o == '?') {
      snprintf(msg, msglen, "unknown or incomplete option '%s'", argv[optind - 1]);
      return -1;
    }
  }
  if (optind < argc) {
    snprintf(msg, msglen, "unexpected argument '%s'", argv[optind]);
    return -1;
  }
  if (config && ld_config_load(c, config, msg, msglen)) return -1;
  optind = 1;
  bool listen_reset = false;
  while ((o = getopt_long(argc, argv, "", opts, &idx)) != -1) {
    if (o == 'C') c->check_only = true;
    if (o != 1) continue;
    char key[64], err[600];
    snprintf(key, sizeof key, "%s", opts[idx].name);
    for (char *p = key; *p; p++)
      if (*p == '-') *p = '_';
    if (set_key(c, key, optarg, &listen_reset, err, sizeof err)) {
      snprintf(msg, msglen, "--%s: %s", opts[idx].name, err);
      return -1;
    }
  }
  return 0;
}

int ld_split_hostport(const char *s, char *host, size_t hostlen, unsigned *port) {
  const char *colon;
  size_t hl;
  if (s[0] == '[') {
    const char *rb = strchr(s, ']');
    if (!rb || rb[1] != ':') return -1;
    hl = (size_t)(rb - s - 1);
    if (hl >= hostlen) return -1;
    memcpy(host, s + 1, hl);
    colon = rb + 1;
  } else {
    colon = strrchr(s, ':');
    if (!colon) return -1;
    hl = (size_t)(colon - s);
    if (hl >= hostlen || memchr(s, ':', hl)) return -1; /* bare IPv6 needs brackets */
    memcpy(host, s, hl);
  }
  host[hl] = 0;
  uint64_t p;
  if (!lnc_parse_u64(colon + 1, strlen(colon + 1), &p) || p > 65535) return -1;
  *port = (unsigned)p;
  return 0;
}

int ld_config_validate(const struct ld_config *c, char *msg, size_t msglen) {
  struct stat st;
  if (!c->root[0] && !c->nmounts) {
    snprintf(msg, msglen, "no data root: set `root` or pass --root DIR (or serve object-store mounts only: --mount NAME=s3://...)");
    return -1;
  }
  errno = 0;
  if (c->root[0] && (stat(c->root, &st) || !S_ISDIR(st.st_mode))) {
    snprintf(msg, msglen, "root %s: %s", c->root, errno ? strerror(errno) : "not a directory");
    return -1;
  }
  const char *lfds = getenv("LISTEN_FDS"); /* socket activation: systemd passes the sockets */
  if (!c->nlisten && !(lfds && atoi(lfds) > 0)) {
    snprintf(msg, msglen, "no listen address: set `listen` or pass --listen HOST:PORT");
    return -1;
  }
  if (c->max_body_bytes > (1ull << 30)) {
    snprintf(msg, msglen, "max_body_bytes above 1G is not supported");
    return -1;
  }
  return 0;
}

/* Raises the soft RLIMIT_NOFILE to the hard one (the unit sets LimitNOFILE=65536), then
 * sizes connection_limit from it: a quarter of the descriptors for connections (each is one,
 * and up to half again above the limit are accepted to be told 503 or to make room), the
 * rest for the search cache's files (a sixth of the limit, up to three each) and datasets.
 * An explicit connection_limit above half the descriptors is lowered, with a warning, since
 * beyond it accept() would fail with EMFILE and nobody could be answered. */
void ld_config_fit_fds(struct ld_config *c) {
  struct rlimit rl;
  uint64_t nofile = 1024;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    if (rl.rlim_cur < rl.rlim_max) {
      rl.rlim_cur = rl.rlim_max;
      setrlimit(RLIMIT_NOFILE, &rl);
      getrlimit(RLIMIT_NOFILE, &rl);
    }
    nofile = rl.rlim_cur == RLIM_INFINITY ? 1u << 20 : (uint64_t)rl.rlim_cur;
  }
  uint64_t fit = nofile / 4 < 64 ? 64 : nofile / 4;
  if (!c->connection_limit) {
    c->connection_limit = fit;
  } else if (c->connection_limit > nofile / 2) {
    ld_log(LD_LOG_WARN, "connection_limit %llu is over half of RLIMIT_NOFILE (%llu); using %llu",
           (unsigned long long)c->connection_limit, (unsigned long long)nofile,
           (unsigned long long)fit);
    c->connection_limit = fit;
  }
}

/* ---- live limits -------------------------------------------------------------------------- */
static pthread_rwlock_t limits_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct ld_limits limits;

void ld_limits_set(const struct ld_config *c) {
  struct ld_limits l = {
      .max_ids = c->max_ids_per_request, .max_body = c->max_body_bytes, .max_response = c->max_response_bytes, .timeout_ms = c->request_timeout_ms, .connection_limit = c->connection_limit, .max_inflight = c->max_inflight, .max_unsent = c->max_unsent_bytes, .header_timeout_ms = c->header_timeout_ms, .max_conns_per_client = c->max_conns_per_client, .request_log = c->request_log};
  pthread_rwlock_wrlock(&limits_lock);
  limits = l;
  pthread_rwlock_unlock(&limits_lock);
  __atomic_store_n(&ld_log_level, c->log_level, __ATOMIC_RELAXED);
}

struct ld_limits ld_limits_get(void) {
  pthread_rwlock_rdlock(&limits_lock);
  struct ld_limits l = limits;
  pthread_rwlock_unlock(&limits_lock);
  return l;
}
