/* Prometheus counters (metrics.c): routes and formats as counted. */
#ifndef LANCED_METRICS_H
#define LANCED_METRICS_H
#include "lanced.h"

/* ---- metrics.c: Prometheus counters ------------------------------------------------------- */
enum ld_route { LD_R_ROWS,
                LD_R_FILE,
                LD_R_TAKE,
                LD_R_GETFILE,
                LD_R_HEALTHZ,
                LD_R_METRICS,
                LD_R_OTHER,
                LD_R_COUNT };
enum ld_format { LD_F_NONE,
                 LD_F_JSON,
                 LD_F_ARROW,
                 LD_F_PROTO,
                 LD_F_COUNT };
void ld_metrics_request(int route, int format, int status, double seconds);
void ld_metrics_rows(uint64_t rows, const struct lnc_take_stats *st);
/* An answer of n bytes left in their data files (ld_refs.file_bytes) is going out. */
void ld_metrics_file_bytes(uint64_t n);
void ld_metrics_render(struct lnc_buf *out, uint64_t connections, uint64_t inflight);
const char *ld_format_name(int format);

#endif
