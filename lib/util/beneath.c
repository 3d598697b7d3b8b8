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

int lnc_abs_path(const char *uri, char *out, size_t cap) {
  const char *p = strncmp(uri, "file://", 7) ? uri : uri + 7;
  if (p[0] != '/' || cap < 2) return -1;
  size_t o = 0;
  while (*p) {
    while (*p == '/') p++;
    size_t n = strcspn(p, "/");
    if (!n) break;
    if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) return -1;
    if (o + 1 + n + 1 > cap) return -1;
    out[o++] = '/';
    memcpy(out + o, p, n);
    o += n;
    p += n;
  }
  if (!o) out[o++] = '/';
  out[o] = 0;
  return 0;
}
