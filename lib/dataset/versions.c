/* Version discovery in a dataset's `_versions/` directory: parses both manifest naming
 * schemes (V1 `<n>.manifest`, V2 `<u64::MAX - n>` zero-padded to 20 digits), lists the
 * versions present and picks the latest or a pinned one. */
#include "dataset.h"
#include "../util/buf.h"
#include "../util/error.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include "../util/parse.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SUFFIX     ".manifest"
#define SUFFIX_LEN 9
#define V2_DIGITS  20

int lnc_ds_parse_manifest_name(const char *name, struct lnc_ds_version *out) {
  size_t len = strlen(name);
  if (len <= SUFFIX_LEN || strcmp(name + len - SUFFIX_LEN, SUFFIX) != 0) return 0;
  size_t nd = len - SUFFIX_LEN;
  if (nd > V2_DIGITS) return 0;
  uint64_t v;
  if (!lnc_parse_u64(name, nd, &v)) return 0; /* includes detached "d..." names */
  if (nd == V2_DIGITS) {
    out->naming = LNC_DS_NAMING_V2;
    out->version = UINT64_MAX - v;
  } else {
    if (nd > 1 && name[0] == '0') return 0; /* V1 names are not padded */
    out->naming = LNC_DS_NAMING_V1;
    out->version = v;
  }
  return out->version > 0;
}

void lnc_ds_manifest_name(const struct lnc_ds_version *v, char *buf, size_t cap) {
  if (v->naming == LNC_DS_NAMING_V2)
    snprintf(buf, cap, "%020llu" SUFFIX, (unsigned long long)(UINT64_MAX - v->version));
  else
    snprintf(buf, cap, "%llu" SUFFIX, (unsigned long long)v->version);
}

static int cmp_version(const void *a, const void *b) {
  const struct lnc_ds_version *x = a, *y = b;
  if (x->version != y->version) return x->version < y->version ? -1 : 1;
  return (int)x->naming - (int)y->naming;
}

void lnc_ds_sort_versions(struct lnc_ds_version *vs, size_t n) {
  if (n > 1) qsort(vs, n, sizeof *vs, cmp_version);
}

int lnc_ds_list_versions(int vfd, const char *what, struct lnc_ds_version **out, size_t *n,
                         struct lnc_error *err) {
  *out = NULL;
  *n = 0;
  int fd = dup(vfd);
  if (fd < 0) return lnc_errf(err, LNC_EIO, "%s: _versions: %s", what, strerror(errno));
  DIR *d = fdopendir(fd);
  if (!d) {
    close(fd);
    return lnc_errf(err, LNC_EIO, "%s: _versions: %s", what, strerror(errno));
  }
  rewinddir(d);
  struct lnc_ds_version *vs = NULL;
  size_t cnt = 0, cap = 0;
  struct dirent *e;
  errno = 0;
  while ((e = readdir(d)) != NULL) {
    struct lnc_ds_version v;
    if (!lnc_ds_parse_manifest_name(e->d_name, &v)) continue;
    if (lnc_grow_array((void **)&vs, &cap, cnt + 1, sizeof *vs)) {
      free(vs);
      closedir(d);
      return lnc_errf(err, LNC_ENOMEM, "%s: out of memory listing _versions", what);
    }
    vs[cnt++] = v;
  }
  int rerr = errno;
  closedir(d);
  if (rerr) {
    free(vs);
    return lnc_errf(err, LNC_EIO, "%s: listing _versions: %s", what, strerror(rerr));
  }
  lnc_ds_sort_versions(vs, cnt);
  *out = vs;
  *n = cnt;
  return 0;
}

int lnc_ds_pick_version(const struct lnc_ds_version *vs, size_t n, uint64_t want,
                        const char *what, struct lnc_ds_version *out, struct lnc_error *err) {
  if (n == 0)
    return lnc_errf(err, LNC_ECORRUPT, "%s: no manifests in _versions (removed, or a dataset "
                                       "still being created?)",
                    what);
  if (want == 0) {
    *out = vs[n - 1];
    return 0;
  }
  /* Binary search; if both schemes hold the same version (a migration), prefer V2. */
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (vs[mid].version < want)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < n && vs[lo].version == want) {
    while (lo + 1 < n && vs[lo + 1].version == want) lo++;
    *out = vs[lo];
    return 0;
  }
  return lnc_errf(err, LNC_ENOTFOUND, "%s: version %llu not found (versions %llu..%llu exist, "
                                      "%zu in all)",
                  what, (unsigned long long)want,
                  (unsigned long long)vs[0].version, (unsigned long long)vs[n - 1].version, n);
}
