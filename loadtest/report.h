/* Output of lanced-load: the once-a-second progress line on stderr, the final human summary
 * and the --json machine-readable report (every figure plus the configuration). */
#ifndef LD_REPORT_H
#define LD_REPORT_H
#include "hist.h"
#include "options.h"
#include "stats.h"
#include "verify.h"
#include <stdbool.h>
#include <stdio.h>

typedef struct ld_report {
  const ld_options *opt;
  unsigned threads;  /* threads actually used */
  uint64_t num_rows; /* 0 in --raw-path mode */
  double elapsed_s;  /* measured run time */
  ld_stats stats;
  const ld_hist *hist;
  bool verify_ran;
  ld_verify_result verify;
  int exit_code;
  const char *verdict; /* why the exit code is not 0, or "ok" */
} ld_report;

/* cur - prev over dt seconds; interval holds the latencies of that second. */
void ld_report_progress(FILE *f, bool tty, double t, const ld_stats *cur, const ld_stats *prev,
                        const ld_hist *interval, double dt);
void ld_report_human(FILE *f, const ld_report *r);
int ld_report_json(FILE *f, const ld_report *r);

#endif
