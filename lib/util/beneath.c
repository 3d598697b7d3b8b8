/* The one way liblance (and lanced, through lnc_open_beneath) opens a path beneath a directory
 * without leaving it. openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS) where the kernel has it;
 * elsewhere (older kernels, seccomp filters that refuse openat2 with EPERM or ENOSYS) a walk
 * that opens one component at a time with O_NOFOLLOW, so a symlink is refused in *every*
 * component — stricter than openat2, which follows symlinks that stay beneath — and that
 * refuses absolute paths and ".." itself. Either way the result is a descriptor beneath dirfd
 * or -1 with errno: EXDEV for a path that would leave, ELOOP for a symlink the walk refuses. */
#include "../lance.h"
#include "beneath.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BENEATH_PATH_MAX 4096 /* PATH_MAX: the longest path the kernel takes */

/* Absolute, or with a ".." component: refused before any system call, on every kernel. */
static bool leaves(const char *rel) {
  if (rel[0] == '/') return true;
  for (const char *p = rel; *p;) {
    size_t n = strcspn(p, "/");
    if (n == 2 && p[0] == '.' && p[1] == '.') return true;
    p += n;
    while (*p == '/') p++;
  }
  return false;
}

int lnc_beneath_walk(int dirfd, const char *rel, int flags) {
  char buf[BENEATH_PATH_MAX];
  if ((size_t)snprintf(buf, sizeof buf, "%s", rel) >= sizeof buf) {
    errno = ENAMETOOLONG;
    return -1;
  }
  int dir = dirfd, fd = -1;
  char *s = buf;
  for (;;) {
    char *slash = strchr(s, '/');
    if (slash) *slash = 0;
    if (!*s || !strcmp(s, ".")) { /* empty or "." component: stay where we are */
      fd = dir == dirfd ? openat(dirfd, ".", (slash ? O_DIRECTORY : flags) | O_RDONLY | O_CLOEXEC) : dir;
    } else {
      fd = openat(dir, s, (slash ? O_RDONLY | O_DIRECTORY : flags | O_RDONLY) | O_NOFOLLOW | O_CLOEXEC);
      int saved = errno;
      /* O_NOFOLLOW | O_DIRECTORY on a symlink says ENOTDIR: say what it is, a refused link. */
      struct stat st;
      if (fd < 0 && saved == ENOTDIR && !fstatat(dir, s, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode))
        saved = ELOOP;
      if (dir != dirfd) close(dir);
      errno = saved;
    }
    if (fd < 0) return -1;
    if (!slash) return fd;
    dir = fd;
    s = slash + 1;
  }
}

int lnc_beneath_open(int dirfd, const char *rel, int flags, bool force_walk) {
  if (!rel || !*rel || leaves(rel)) {
    errno = rel && *rel ? EXDEV : ENOENT;
    return -1;
  }
  if (!force_walk) {
    struct open_how how = {.flags = (uint64_t)(flags | O_RDONLY | O_CLOEXEC),
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};
    int fd = (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
    if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return fd;
  }
  return lnc_beneath_walk(dirfd, rel, flags);
}

int lnc_open_beneath(int dirfd, const char *rel, int flags) {
  static int forced = -1; /* LNC_BENEATH_WALK=1: the fallback on every kernel (tests) */
  if (forced < 0) {
    const char *v = getenv("LNC_BENEATH_WALK");
    forced = v && *v && strcmp(v, "0") ? 1 : 0;
  }
  return lnc_beneath_open(dirfd, rel, flags, forced == 1);
}

/* The value of hex digit c, or -1. */
static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* One path component p[0..n) into seg (cap bytes), percent-decoded when url: the length, or
 * -1 for a bad escape, an escaped NUL or '/', or a component longer than cap. */
static long component(const char *p, size_t n, bool url, char *seg, size_t cap) {
  size_t sn = 0;
  for (size_t i = 0; i < n; i++) {
    char ch = p[i];
    if (url && ch == '%') {
      int h = i + 2 < n ? hexval(p[i + 1]) : -1, l = h >= 0 ? hexval(p[i + 2]) : -1;
      if (l < 0) return -1;
      ch = (char)(h * 16 + l);
      if (ch == 0 || ch == '/') return -1;
      i += 2;
    }
    if (sn == cap) return -1;
    seg[sn++] = ch;
  }
  return (long)sn;
}

int lnc_abs_path(const char *uri, char *out, size_t cap) {
  bool url = !strncmp(uri, "file://", 7);
  const char *p = url ? uri + 7 : uri;
  if (url && !strncmp(p, "localhost/", 10)) p += 9; /* file://localhost/x is file:///x */
  if (p[0] != '/' || cap < 2) return -1;
  size_t o = 0;
  char seg[NAME_MAX + 1];
  while (*p) {
    while (*p == '/') p++;
    size_t n = strcspn(p, "/");
    if (!n) break;
    long sn = component(p, n, url, seg, sizeof seg);
    p += n;
    if (sn < 0) return -1;
    if (sn == 1 && seg[0] == '.') continue;
    if (sn == 2 && seg[0] == '.' && seg[1] == '.') { /* up one, lexically; "/.." stays "/" */
      while (o > 0 && out[o - 1] != '/') o--;
      if (o > 0) o--;
      continue;
    }
    if (o + 1 + (size_t)sn + 1 > cap) return -1;
    out[o++] = '/';
    memcpy(out + o, seg, (size_t)sn);
    o += (size_t)sn;
  }
  if (!o) out[o++] = '/';
  out[o] = 0;
  return 0;
}
