/* Command line of lanced-load: parsing, validation and defaults, including splitting
 * --url into host, port and path prefix. Nothing here touches the network. */
#ifndef LD_OPTIONS_H
#define LD_OPTIONS_H
#define LD_LOAD_VERSION "0.1.0" /* lanced-load follows the daemon's version */
#include "idgen.h"
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ld_options {
  const char *url;
  char host[256]; /* without IPv6 brackets */
  char port[8];
  char prefix[512];      /* path part of --url without trailing '/', may be "" */
  char host_header[300]; /* host[:port] as sent in Host: */
  const char *path;      /* --path: file relative to the server root */
  const char *raw_path;  /* --raw-path: fixed URL path instead of the rows API */
  size_t batch;
  unsigned connections;
  double duration;    /* seconds */
  double rate;        /* total requests/s; 0 = closed loop */
  const char *format; /* NULL = server default (json) */
  const char *columns;
  ld_ids_spec ids;
  uint64_t seed;
  unsigned threads;
  size_t post_threshold; /* 0 = automatic (request target over ~2 KB) */
  bool json;
  bool quiet;
  size_t verify;
  const char *verify_file;
  const char *lancectl;
  double timeout;        /* seconds per request */
  unsigned busy_poll_us; /* polling before each sleep while answers are due; 0 = none */
  double max_error_rate; /* fraction of requests; above it the exit code is 2 */
  uint64_t num_rows;     /* --num-rows: skip the metadata request */
} ld_options;

/* 0: run; 1: usage error (message printed on stderr); 2: --help printed. */
int ld_options_parse(int argc, char **argv, ld_options *o);
void ld_options_usage(FILE *f);

#endif
