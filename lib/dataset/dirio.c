/* File access beneath a dataset directory: relative paths from manifests are checked (no
 * absolute paths, no ".." components), then opened with openat2(RESOLVE_BENEATH) so that no
 * symlink leads out of the dataset directory either; whole small files (manifests, deletion
 * files) are read with a size limit. */
#include "dataset.h"
#include "../util/error.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int path_ok(const char *rel) {
  if (!rel[0] || rel[0] == '/') return 0;
  const char *p = rel;
  while (*p) {
    const char *slash = strchr(p, '/');
    size_t n = slash ? (size_t)(slash - p) : strlen(p);
    if (n == 0 || (n == 2 && p[0] == '.' && p[1] == '.')) return 0;
    p += n;
    if (*p == '/') p++;
  }
  return 1;
}

int lnc_ds_openat(int dirfd, const char *rel, int flags, const char *what,
                  struct lnc_error *err) {
  if (!path_ok(rel))
    return -lnc_errf(err, LNC_ECORRUPT, "%s: refusing path '%s' (absolute or with '..')", what,
                     rel);
  int fd = lnc_open_beneath(dirfd, rel, flags);
  if (fd < 0 && (errno == EXDEV || errno == ELOOP))
    return -lnc_errf(err, LNC_ECORRUPT, "%s: %s leads outside the dataset directory", what, rel);
  if (fd < 0) {
    int e = errno;
    return -lnc_errf(err, lnc_code_from_errno(e), "%s: %s: %s", what, rel, strerror(e));
  }
  return fd;
}

int lnc_ds_read_file(int dirfd, const char *rel, size_t limit, const char *what, uint8_t **out,
                     size_t *len, struct lnc_error *err) {
  *out = NULL;
  *len = 0;
  int fd = lnc_ds_openat(dirfd, rel, O_RDONLY, what, err);
  if (fd < 0) return -fd;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return lnc_errf(err, LNC_EIO, "%s: %s: %s", what, rel, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return lnc_errf(err, LNC_ECORRUPT, "%s: %s is not a regular file", what, rel);
  }
  if ((uint64_t)st.st_size > limit) {
    close(fd);
    return lnc_errf(err, LNC_ELIMIT, "%s: %s is %lld bytes, more than the %zu allowed", what,
                    rel, (long long)st.st_size, limit);
  }
  size_t size = (size_t)st.st_size;
  uint8_t *buf = malloc(size ? size : 1);
  if (!buf) {
    close(fd);
    return lnc_errf(err, LNC_ENOMEM, "%s: out of memory reading %s", what, rel);
  }
  size_t got = 0;
  while (got < size) {
    ssize_t r = pread(fd, buf + got, size - got, (off_t)got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      int e = r < 0 ? errno : 0;
      free(buf);
      close(fd);
      return lnc_errf(err, LNC_EIO, "%s: reading %s: %s", what, rel,
                      e ? strerror(e) : "file shrank while reading");
    }
    got += (size_t)r;
  }
  close(fd);
  *out = buf;
  *len = size;
  return 0;
}
