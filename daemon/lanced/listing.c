/* GET /files/ and GET /files/<dir>/: what is served beneath a directory of the root, as JSON
 * {"path":"<dir>","entries":[{"name":...,"kind":"dataset"|"file"|"directory"|"mount"}, ...]}
 * sorted by name: a directory holding _versions/ is a dataset, a regular file named *.lance a
 * data file, other directories are listed to descend into, and the root also lists the
 * object-store mounts (hiding local entries of their names); everything else (symbolic links
 * included: they may lead out of the root) is left out. Inside a mount: 501 (not listed). The
 * directory is opened beneath the root like every path (ld_path_open_dir); at most
 * LISTING_MAX entries are returned ("truncated": true beyond). Names are written through the
 * one JSON escaper, so a name that is not UTF-8 still gives valid JSON. */
#include "lanced.h"
#include "service.h"
#include "request.h"
#include "routes.h"
#include "util/buf.h"
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LISTING_MAX 10000

static int root_fd = -1;

void ld_listing_set_root(int rootfd) { root_fd = rootfd; }

static const char *kind_of(int dirfd, const char *name);

/* Served things (datasets, *.lance files) in the root and the directories right below it: a
 * start-up check that --root points where the data is. */
size_t ld_listing_count_served(int rootfd) {
  int fd = dup(rootfd);
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  if (!d) {
    if (fd >= 0) close(fd);
    return 0;
  }
  rewinddir(d); /* a dup shares the root descriptor's position */
  size_t found = 0;
  struct dirent *de;
  for (int seen = 0; (de = readdir(d)) != NULL && !found && seen < LISTING_MAX; seen++) {
    if (de->d_name[0] == '.') continue;
    const char *k = kind_of(dirfd(d), de->d_name);
    if (k && strcmp(k, "directory"))
      found++;
    else if (k) { /* one level down */
      int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
      DIR *sd = sub >= 0 ? fdopendir(sub) : NULL;
      if (!sd && sub >= 0) close(sub);
      struct dirent *se;
      for (int s2 = 0; sd && (se = readdir(sd)) != NULL && !found && s2 < LISTING_MAX; s2++) {
        const char *k2 = se->d_name[0] == '.' ? NULL : kind_of(dirfd(sd), se->d_name);
        if (k2 && strcmp(k2, "directory")) found++;
      }
      if (sd) closedir(sd);
    }
  }
  closedir(d);
  return found;
}

struct entry {
  char *name;
  const char *kind;
};

static int by_name(const void *a, const void *b) {
  return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

/* The kind of name inside dirfd, or NULL when it is not something served. */
static const char *kind_of(int dirfd, const char *name) {
  struct stat st;
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW)) return NULL;
  if (S_ISDIR(st.st_mode)) {
    char v[300];
    snprintf(v, sizeof v, "%s/_versions", name);
    return fstatat(dirfd, v, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) ? "dataset"
                                                                                   : "directory";
  }
  size_t n = strlen(name);
  return S_ISREG(st.st_mode) && n > 6 && !strcmp(name + n - 6, ".lance") ? "file" : NULL;
}

static void write_listing(const char *rel, struct entry *v, size_t n, bool truncated,
                          struct ld_response *out) {
  if (n > 1) qsort(v, n, sizeof *v, by_name); /* never qsort(NULL, 0): undefined, and UBSan says so */
  ld_buf_puts(&out->body, "{\"path\":");
  ld_buf_json_str(&out->body, rel, strlen(rel));
  ld_buf_puts(&out->body, ",\"entries\":[");
  for (size_t i = 0; i < n; i++) {
    ld_buf_puts(&out->body, i ? ",{\"name\":" : "{\"name\":");
    ld_buf_json_str(&out->body, v[i].name, strlen(v[i].name));
    ld_buf_printf(&out->body, ",\"kind\":\"%s\"}", v[i].kind);
  }
  ld_buf_printf(&out->body, "]%s}\n", truncated ? ",\"truncated\":true" : "");
  out->status = 200;
  out->content_type = "application/json";
}

/* Adds v[n] (growing v); aborts out of memory, as ld_buf_append: a daemon out of memory for a
 * listing cannot answer. */
static void add_entry(struct entry **v, size_t *n, size_t *cap, const char *name, const char *kind) {
  if (lnc_grow_array((void **)v, cap, *n + 1, sizeof **v)) abort();
  if (!((*v)[*n].name = strdup(name))) abort();
  (*v)[(*n)++].kind = kind;
}

/* A local entry of the root hidden by a mount of the same name (the mount is served). */
static bool hidden_by_mount(const char *rel, const char *name) {
  return !*rel && ld_service_mount_of(name) >= 0;
}

void ld_listing_handle(struct ld_req *r, const char *rel, struct ld_response *out) {
  (void)r;
  struct ld_err e;
  if (ld_service_mount_of(rel) >= 0) {
    ld_errf(&e, LD_UNIMPLEMENTED, "%.200s is below an object-store mount: listing it is not "
                                  "supported; ask for a file or dataset path under it",
            rel);
    return ld_json_error(out, &e);
  }
  int fd = ld_path_open_dir(root_fd, rel, &e);
  if (fd < 0) return ld_json_error(out, &e);
  DIR *d = fdopendir(fd);
  if (!d) {
    close(fd);
    ld_errf(&e, LD_UNAVAILABLE, "cannot list %s", rel);
    return ld_json_error(out, &e);
  }
  rewinddir(d); /* the root's descriptor is a dup: it shares its position */
  struct entry *v = NULL;
  size_t n = 0, cap = 0;
  bool truncated = false;
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    if (de->d_name[0] == '.' || strlen(de->d_name) > 255) continue;
    const char *kind = kind_of(dirfd(d), de->d_name);
    if (!kind || hidden_by_mount(rel, de->d_name)) continue;
    if (n == LISTING_MAX) {
      truncated = true;
      break;
    }
    add_entry(&v, &n, &cap, de->d_name, kind);
  }
  closedir(d);
  for (int i = 0; !*rel && i < ld_service_mounts(); i++) add_entry(&v, &n, &cap, ld_service_mount_name(i), "mount");
  write_listing(rel, v, n, truncated, out);
  for (size_t i = 0; i < n; i++) free(v[i].name);
  free(v);
}
