/* Logging: one line per event on stderr, "LEVEL message", which journald timestamps and
 * tags itself. A line is written with a single write(2) so threads never interleave. When
 * stderr is the journal (systemd says so in $JOURNAL_STREAM, "device:inode" of the stream it
 * connected), each line begins with its syslog priority, "<3>" for an error (sd-daemon(3)'s
 * SD_ERR prefixes), which journald strips and keeps as the priority: `journalctl -p err`
 * finds the errors. Elsewhere (a terminal, a file, the tests) lines are as they were. */
#include "lanced.h"
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

int ld_log_level = LD_LOG_INFO;

static const char *const names[] = {"error", "warn", "info", "debug"};
/* syslog(3) priorities of the levels: LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG. */
static const char *const priorities[] = {"<3>", "<4>", "<6>", "<7>"};
static atomic_int to_journal = -1; /* -1: not looked at yet */

/* Whether fd 2 is the stream $JOURNAL_STREAM names (systemd.exec(5)). */
static bool stderr_is_journal(void) {
  const char *js = getenv("JOURNAL_STREAM");
  unsigned long long dev, ino;
  struct stat st;
  if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(2, &st) != 0) return false;
  return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

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
  int journal = atomic_load(&to_journal);
  if (journal < 0) atomic_store(&to_journal, journal = stderr_is_journal());
  char line[2048];
  int n = snprintf(line, sizeof line, "%slanced %s: ", journal ? priorities[level] : "", names[level]);
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
