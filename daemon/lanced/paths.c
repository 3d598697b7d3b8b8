/* Safe path resolution: a client-supplied relative path becomes a read-only descriptor
 * beneath the data root or an error. Lexical checks give clear 400s; liblance's one helper,
 * lnc_open_beneath (openat2 RESOLVE_BENEATH, or a no-symlink walk), is the real guarantee. */
#include "lanced.h"
#include "service.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ld_path_check(const char *rel, struct ld_err *e) {
  size_t n = strlen(rel);
  if (n == 0) return ld_errf(e, LD_INVALID, "empty path");
  if (n > 1024) return ld_errf(e, LD_INVALID, "path longer than 1024 bytes");
  if (rel[0] == '/') return ld_errf(e, LD_INVALID, "absolute paths are not allowed");
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)rel[i] < 0x20 || rel[i] == 0x7f)
      return ld_errf(e, LD_INVALID, "control characters are not allowed in paths");
  /* Segment by segment: no "..", no ".", no empty segment ("a//b", trailing "/"). */
  const char *s = rel;
  while (1) {
    const char *slash = strchr(s, '/');
    size_t len = slash ? (size_t)(slash - s) : strlen(s);
    if (len == 0) return ld_errf(e, LD_INVALID, "empty path segment");
    if ((len == 1 && s[0] == '.') || (len == 2 && s[0] == '.' && s[1] == '.'))
      return ld_errf(e, LD_INVALID, "'.' and '..' are not allowed in paths");
    if (!slash) break;
    s = slash + 1;
  }
  return 0;
}

/* rel beneath rootfd with flags (O_RDONLY | O_CLOEXEC added), never leaving the root. */
static int open_beneath(int rootfd, const char *rel, int flags, struct ld_err *e) {
  if (ld_path_check(rel, e)) return -1;
  int fd = lnc_open_beneath(rootfd, rel, flags | O_NOCTTY); /* liblance's one helper */
  if (fd < 0) {
    int er = errno;
    if (er == ENOENT || er == ENOTDIR)
      ld_errf(e, LD_NOT_FOUND, "no such file: %s", rel);
    else if (er == EXDEV || er == ELOOP)
      ld_errf(e, LD_FORBIDDEN, "%s resolves outside the data root", rel);
    else if (er == EACCES)
      ld_errf(e, LD_FORBIDDEN, "%s: permission denied", rel);
    else if (er == EMFILE || er == ENFILE)
      ld_errf(e, LD_UNAVAILABLE, "out of file descriptors");
    else
      ld_errf(e, LD_INTERNAL, "%s: %s", rel, strerror(er));
    return -1;
  }
  return fd;
}

int ld_path_open_dir(int rootfd, const char *rel, struct ld_err *e) {
  if (!rel[0]) {
    /* A descriptor of its own, not a dup: a dup shares the root's directory offset with
     * every other listing of the root, and concurrent readdirs then skip or repeat entries. */
    int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) ld_errf(e, LD_UNAVAILABLE, "the data root: %s", strerror(errno));
    return fd;
  }
  int fd = open_beneath(rootfd, rel, O_DIRECTORY, e);
  struct stat st;
  if (fd >= 0 && (fstat(fd, &st) || !S_ISDIR(st.st_mode))) { /* the fallback walk's last step */
    close(fd);
    return ld_errf(e, LD_NOT_FOUND, "%s is not a directory", rel), -1;
  }
  return fd;
}

int ld_path_open(int rootfd, const char *rel, struct ld_err *e) {
  int fd = open_beneath(rootfd, rel, 0, e);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
    close(fd);
    ld_errf(e, LD_NOT_FOUND, "%s is not a regular file", rel);
    return -1;
  }
  return fd;
}
