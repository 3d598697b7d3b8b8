/* See support.h. */
#include "support.h"
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

uint8_t *tsup_read_file(const char *path, size_t *len) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size < 0) {
    close(fd);
    return NULL;
  }
  size_t n = (size_t)st.st_size;
  uint8_t *buf = malloc(n + 1);
  size_t got = 0;
  while (buf && got < n) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r <= 0) {
      free(buf);
      buf = NULL;
      break;
    }
    got += (size_t)r;
  }
  close(fd);
  if (!buf) return NULL;
  buf[n] = 0;
  if (len) *len = n;
  return buf;
}

int tsup_write_file(const char *path, const void *data, size_t len) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  const uint8_t *p = data;
  while (len) {
    ssize_t w = write(fd, p, len);
    if (w <= 0) {
      close(fd);
      return -1;
    }
    p += w;
    len -= (size_t)w;
  }
  return close(fd) == 0 ? 0 : -1;
}

int tsup_run(Suite *s) {
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed != 0;
}

char *tsup_mkdtemp(const char *prefix) {
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp) tmp = "/tmp";
  size_t n = strlen(tmp) + strlen(prefix) + 16;
  char *p = malloc(n);
  if (!p) return NULL;
  snprintf(p, n, "%s/%sXXXXXX", tmp, prefix);
  if (!mkdtemp(p)) {
    free(p);
    return NULL;
  }
  return p;
}

char *tsup_mkdtemp_by_exe(const char *rel) {
  char exe[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return NULL;
  exe[n] = 0;
  char *slash = strrchr(exe, '/');
  if (!slash) return NULL;
  *slash = 0; /* <build>/tests */
  size_t cap = strlen(exe) + strlen(rel) + 16;
  char *p = malloc(cap);
  if (!p) return NULL;
  snprintf(p, cap, "%s/%sXXXXXX", exe, rel);
  if (!mkdtemp(p)) {
    free(p);
    return NULL;
  }
  return p;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  remove(path);
  return 0;
}

void tsup_rmtree(const char *dir) {
  if (dir) nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

char *tsup_path(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  if (p) snprintf(p, n, "%s/%s", dir, name);
  return p;
}

void tsup_sh(const char *fmt, ...) {
  char cmd[4096];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  ck_assert_msg(n >= 0 && (size_t)n < sizeof cmd, "command too long: %s", cmd);
  ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

uint64_t tsup_xorshift64(uint64_t *state) {
  uint64_t x = *state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *state = x;
}
