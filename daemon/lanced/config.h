/* lanced settings: lanced.conf and the command line (config.c), and the limits requests read. */
#ifndef LANCED_CONFIG_H
#define LANCED_CONFIG_H
#include "lanced.h"

#define LD_MAX_LISTEN 16

/* ---- config.c: lanced.conf and the command line ----------------------------------------- */
enum { LD_IO_BUFFERED,
       LD_IO_DIRECT };
enum { LD_REP_ALWAYS,
       LD_REP_NEVER,
       LD_REP_MAX };

#define LD_MAX_MOUNTS 16
struct ld_config {
  char root[PATH_MAX]; /* "" with mounts only: main.c serves an empty directory as the root */
  bool root_made;      /* root is that empty directory (main.c), removed at exit */
  char listen[LD_MAX_LISTEN][256];
  int nlisten;
  int workers;
  int take_threads; /* threads that run takes off the network threads */
  /* Object-store roots: `mount = NAME=s3://bucket/prefix`, served as /files/NAME/...; the
   * S3 settings are shared by every mount (unset strings: AWS's environment variables). */
  struct ld_mount {
    char name[64];
    char url[1024];
  } mounts[LD_MAX_MOUNTS];
  int nmounts;
  int store_threads; /* per mount: threads for its requests that may not run on a loop */
  char s3_endpoint[512], s3_region[64], s3_access_key_id[256], s3_secret_access_key[256];
  char s3_session_token[4096];
  int s3_addressing; /* enum lnc_s3_addressing */
  uint64_t s3_merge_gap, s3_max_parallel, s3_timeout_ms, s3_revalidate_ms;
  uint64_t s3_cache_budget, s3_cache_block; /* the page cache of fetched blocks */
  uint64_t cache_budget;
  int io_mode;
  int rep_policy;
  uint64_t rep_max_bytes;
  uint64_t max_ids_per_request;
  uint64_t max_body_bytes;
  uint64_t max_response_bytes;
  uint64_t request_timeout_ms;
  uint64_t revalidate_ms;        /* recheck cached files / a dataset's latest at most this often */
  uint64_t loop_max_ids;         /* takes of more ids go to a take thread (0 = none do) */
  uint64_t connection_limit;     /* 0 = sized from RLIMIT_NOFILE at start-up */
  uint64_t header_timeout_ms;    /* client_header_timeout_ms: headers due within this */
  uint64_t max_conns_per_client; /* max_connections_per_client (0 = no cap) */
  uint64_t max_inflight;
  uint64_t max_unsent_bytes; /* answers built and queued, not yet taken by their clients */
  int log_level;
  bool request_log;
  char config_path[PATH_MAX]; /* "" when none */
  bool check_only;            /* --check-config */
};

void ld_config_defaults(struct ld_config *c);
/* Reads `key = value` lines into c; returns 0, or -1 with a message naming file and line. */
int ld_config_load(struct ld_config *c, const char *path, char *msg, size_t msglen);
/* Parses argv: --config is loaded first, the other flags override it. Returns 0, 1 when
 * --help/--version was printed (exit 0), or -1 with a message. */
int ld_config_from_args(struct ld_config *c, int argc, char **argv, char *msg, size_t msglen);
/* Sizes what depends on the descriptor limit (connection_limit 0 = auto), after raising the
 * soft RLIMIT_NOFILE to the hard one. */
void ld_config_fit_fds(struct ld_config *c);
/* Checks values that only make sense together (root is a directory, listen parses, ...). */
int ld_config_validate(const struct ld_config *c, char *msg, size_t msglen);
/* Splits "HOST:PORT", "[v6]:PORT" or ":PORT"; returns 0 or -1. host gets "" for any. */
int ld_split_hostport(const char *s, char *host, size_t hostlen, unsigned *port);

/* The limits requests read; replaced as a whole on SIGHUP (readers take the lock briefly). */
struct ld_limits {
  uint64_t max_ids, max_body, max_response, timeout_ms, connection_limit, max_inflight, max_unsent;
  uint64_t header_timeout_ms, max_conns_per_client;
  bool request_log;
};
void ld_limits_set(const struct ld_config *c);
struct ld_limits ld_limits_get(void);

#endif
