/* s3check: liblance's object-store reader (lib/io/s3.c) from the command line, for
 * tests/s3/objstore.mjs, which runs it against s3rver behind the fault-injecting proxy.
 *
 *   s3check head KEY                        -> "SIZE ETAG"
 *   s3check list PREFIX                     -> "SIZE KEY" per object, in the store's order
 *   s3check read KEY OFF:LEN[,OFF:LEN...]   -> the bytes of each read, in order, on stdout;
 *                                              "gets=N bytes=M hwm_kb=K" on stderr (K: the
 *                                              peak resident memory since exec, VmHWM; -1
 *                                              under ASan)
 *   (read takes --size N --etag E before KEY to skip the HEAD and use a remembered version)
 *
 * Settings from the environment: S3_ENDPOINT, S3_BUCKET, S3_REGION, S3_PATH_STYLE (1),
 * AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, and the knobs S3_MERGE_GAP,
 * S3_MAX_ATTEMPTS, S3_DEADLINE_MS, S3_ATTEMPT_TIMEOUT_MS, S3_BACKOFF_BASE_MS, S3_LIST_PAGE,
 * S3_MAX_MERGED, S3_MAX_PARALLEL.
 * Exit 0, or 1 with "error <code>: <message>" on stderr. */
#include "io/s3.h"
#include "util/error.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t env_u64(const char *name) {
  const char *v = getenv(name);
  return v && *v ? strtoull(v, NULL, 10) : 0;
}

static void config_from_env(struct lnc_s3_config *c) {
  memset(c, 0, sizeof *c);
  c->endpoint = getenv("S3_ENDPOINT");
  c->bucket = getenv("S3_BUCKET");
  c->region = getenv("S3_REGION");
  c->path_style = env_u64("S3_PATH_STYLE") == 1;
  c->access_key = getenv("AWS_ACCESS_KEY_ID");
  c->secret_key = getenv("AWS_SECRET_ACCESS_KEY");
  c->session_token = getenv("AWS_SESSION_TOKEN");
  c->merge_gap = env_u64("S3_MERGE_GAP");
  c->max_attempts = (unsigned)env_u64("S3_MAX_ATTEMPTS");
  c->deadline_ms = (uint32_t)env_u64("S3_DEADLINE_MS");
  c->attempt_timeout_ms = (uint32_t)env_u64("S3_ATTEMPT_TIMEOUT_MS");
  c->backoff_base_ms = (uint32_t)env_u64("S3_BACKOFF_BASE_MS");
  c->list_page_keys = (unsigned)env_u64("S3_LIST_PAGE");
  c->max_merged = env_u64("S3_MAX_MERGED");
  c->max_parallel = (unsigned)env_u64("S3_MAX_PARALLEL");
}

/* VmHWM of /proc/self/status: the peak resident set of this program (getrusage's ru_maxrss
 * would include the parent's before exec: a node test runner's tens of MB). -1 under ASan,
 * whose quarantine keeps freed memory: the peak says nothing of what the code holds. */
static long peak_kb(void) {
#ifdef __SANITIZE_ADDRESS__
  return -1;
#endif
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
  if (f) fclose(f);
  return kb;
}

static int fail(const struct lnc_error *e, int rc) {
  fprintf(stderr, "error %d: %s\n", rc, e->message);
  return 1;
}

/* "OFF:LEN,OFF:LEN" into reads with buffers. */
static size_t parse_reads(char *spec, struct lnc_read **out) {
  size_t n = 1;
  for (const char *p = spec; *p; p++) n += *p == ',';
  struct lnc_read *r = calloc(n, sizeof *r);
  size_t k = 0;
  for (char *tok = strtok(spec, ","); tok && r; tok = strtok(NULL, ",")) {
    if (sscanf(tok, "%" SCNu64 ":%" SCNu64, &r[k].off, &r[k].len) != 2 || r[k].len > (256u << 20)) {
      fprintf(stderr, "bad read '%s' (OFF:LEN, LEN up to 256 MiB)\n", tok);
      exit(2);
    }
    if (!(r[k].dst = malloc(r[k].len ? r[k].len : 1))) exit(2);
    k++;
  }
  *out = r;
  return k;
}

static int do_read(struct lnc_s3 *s, int argc, char **argv, struct lnc_error *e) {
  struct lnc_s3_object obj = {0};
  bool have = false;
  int i = 2;
  for (; i + 1 < argc && !strncmp(argv[i], "--", 2); i += 2) {
    if (!strcmp(argv[i], "--size"))
      obj.size = strtoull(argv[i + 1], NULL, 10), have = true;
    else if (!strcmp(argv[i], "--etag"))
      snprintf(obj.etag, sizeof obj.etag, "%s", argv[i + 1]);
  }
  if (i + 2 != argc) return fprintf(stderr, "usage: s3check read [--size N --etag E] KEY OFF:LEN,...\n"), 2;
  int rc;
  if (!have && (rc = lnc_s3_head(s, argv[i], &obj, e))) return fail(e, rc);
  struct lnc_read *r;
  size_t n = parse_reads(argv[i + 1], &r);
  struct lnc_take_stats st = {0};
  if ((rc = lnc_s3_read_batch(s, argv[i], &obj, r, n, &st, e))) return fail(e, rc);
  for (size_t k = 0; k < n; k++) fwrite(r[k].dst, 1, r[k].len, stdout);
  fprintf(stderr, "gets=%" PRIu64 " bytes=%" PRIu64 " hwm_kb=%ld\n", st.reads, st.bytes_read, peak_kb());
  for (size_t k = 0; k < n; k++) free(r[k].dst);
  free(r);
  return 0;
}

static int print_object(void *ctx, const char *key, uint64_t size) {
  (void)ctx;
  printf("%" PRIu64 " %s\n", size, key);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) return fprintf(stderr, "usage: s3check head KEY | list PREFIX | read [--size N --etag E] KEY OFF:LEN,...\n"), 2;
  struct lnc_s3_config cfg;
  config_from_env(&cfg);
  struct lnc_error e = {0};
  struct lnc_s3 *s;
  int rc = lnc_s3_new(&cfg, &s, &e);
  if (rc) return fail(&e, rc);
  int out = 2;
  if (!strcmp(argv[1], "head")) {
    struct lnc_s3_object obj;
    if ((rc = lnc_s3_head(s, argv[2], &obj, &e)))
      out = fail(&e, rc);
    else
      out = (printf("%" PRIu64 " %s\n", obj.size, obj.etag), 0);
  } else if (!strcmp(argv[1], "list")) {
    if ((rc = lnc_s3_list(s, argv[2], print_object, NULL, &e)))
      out = fail(&e, rc);
    else
      out = 0;
  } else if (!strcmp(argv[1], "read")) {
    out = do_read(s, argc, argv, &e);
  }
  lnc_s3_free(s);
  return out;
}
