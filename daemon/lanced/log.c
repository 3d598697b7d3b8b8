/* Logging: one line per event on stderr, "LEVEL message", which journald timestamps and
 * tags itself. A line is written with a single write(2) so threads never interleave. */
#include "lanced.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

int ld_log_level = LD_LOG_INFO;

static const char *const names[] = {"error", "warn", "info", "debug"};

const char *ld_log_level_name(int level) {
  return level >= 0 && level <= LD_LOG_DEBUG ? names[level] : "?";
}

int ld_log_level_parse(const char *s) {
  for (int i = 0; i <= LD_LOG_DEBUG; i++)
    if (strcasecmp(s, names[i]) == 0) return i;
  if (strcasecmp(s, "warning") == 0) return LD_LOG_WARN;
  return -1;
}

void ld_log(int level, const char *fmt, ...) {
  if (level > __atomic_load_n(&ld_log_level, __ATOMIC_RELAXED)) return;
  char line[2048];
  int n = snprintf(line, sizeof line, "lanced %s: ", names[level]);
  va_list ap;
  va_start(ap, fmt);
  int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
  va_end(ap);
  size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
  if (len > sizeof line - 2) len = sizeof line - 2;
  /* Control bytes from clients (paths, ids) must not forge extra log lines. */
  for (size_t i = (size_t)n; i < len; i++)
    if ((unsigned char)line[i] < 0x20) line[i] = '?';
  line[len++] = '\n';
  ssize_t w = write(2, line, len);
  (void)w;
}
