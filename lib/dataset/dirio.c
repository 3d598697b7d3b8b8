/* File access beneath a dataset directory: relative paths from manifests are checked (no
 * absolute paths, no ".." components), then opened with openat2(RESOLVE_BENEATH) so that no
 * symlink leads out of the dataset directory either; whole small files (manifests, deletion
 * files) are read with a size limit. A dataset in an object store is a key prefix of a mount
 * instead (struct lnc_ds_loc): listed and read through lib/io/s3.c. */
#include "dataset.h"
#include "../io/s3.h"
#include "../util/buf.h"
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

/* ---- a dataset's location: a directory or an object-store prefix ---------------------- */

struct version_list {
  struct lnc_ds_version *v;
  size_t n, cap;
};

/* One key below `_versions/`: a manifest name is kept (nothing deeper: S3 has no directories,
 * so "x/1.manifest" would list too). */
static int collect_version(void *ctx, const char *name, uint64_t size) {
  (void)size;
  struct version_list *l = ctx;
  struct lnc_ds_version v;
  if (strchr(name, '/') || !lnc_ds_parse_manifest_name(name, &v)) return 0;
  if (lnc_grow_array((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v)) return LNC_ENOMEM;
  l->v[l->n++] = v;
  return 0;
}

static int remote_versions(const struct lnc_ds_loc *loc, const char *what,
                           struct lnc_ds_version **out, size_t *n, struct lnc_error *err) {
  char pre[1100];
  if ((size_t)snprintf(pre, sizeof pre, "%s_versions/", loc->prefix ? loc->prefix : "") >= sizeof pre)
    return lnc_errf(err, LNC_EINVAL, "%s: path too long", what);
  struct version_list l = {0};
  int rc = lnc_s3_mount_list(loc->s3, pre, collect_version, &l, err);
  if (rc == LNC_ENOMEM) lnc_errf(err, rc, "%s: out of memory listing _versions", what);
  if (!rc && !l.n)
    rc = lnc_errf(err, LNC_ENOTFOUND, "%s: no _versions/ objects (not a Lance dataset?)", what);
  if (rc) {
    free(l.v);
    return rc;
  }
  lnc_ds_sort_versions(l.v, l.n);
  *out = l.v;
  *n = l.n;
  return 0;
}

void lnc_ds_loc_close(struct lnc_ds_loc *loc) {
  if (loc->fd >= 0) close(loc->fd);
  free(loc->prefix);
  *loc = (struct lnc_ds_loc){.fd = -1};
}

int lnc_ds_loc_versions(const struct lnc_ds_loc *loc, const char *what,
                        struct lnc_ds_version **out, size_t *n, struct lnc_error *err) {
  *out = NULL;
  *n = 0;
  if (loc->fd < 0 && loc->s3) return remote_versions(loc, what, out, n, err);
  struct lnc_error e2 = {0};
  int vfd = lnc_ds_openat(loc->fd, "_versions", O_RDONLY | O_DIRECTORY, what, &e2);
  if (vfd < 0)
    return lnc_errf(err, e2.code, "%s: no _versions directory (not a Lance dataset?): %s", what,
                    e2.message);
  int rc = lnc_ds_list_versions(vfd, what, out, n, err);
  close(vfd);
  return rc;
}

int lnc_ds_loc_read(const struct lnc_ds_loc *loc, const char *rel, size_t limit, const char *what,
                    uint8_t **out, size_t *len, struct lnc_error *err) {
  if (loc->fd >= 0 || !loc->s3) return lnc_ds_read_file(loc->fd, rel, limit, what, out, len, err);
  *out = NULL;
  *len = 0;
  if (!path_ok(rel))
    return lnc_errf(err, LNC_ECORRUPT, "%s: refusing path '%s' (absolute or with '..')", what, rel);
  char key[1100];
  if ((size_t)snprintf(key, sizeof key, "%s%s", loc->prefix ? loc->prefix : "", rel) >= sizeof key)
    return lnc_errf(err, LNC_EINVAL, "%s: path too long", what);
  return lnc_s3_mount_get(loc->s3, key, limit, out, len, err);
}
