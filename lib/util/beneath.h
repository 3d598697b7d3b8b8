/* Opening beneath a directory (beneath.c): the one helper for every path liblance opens under
 * a root or a dataset directory. */
#ifndef LNC_UTIL_BENEATH_H
#define LNC_UTIL_BENEATH_H
#include <stdbool.h>
#include <stddef.h>

/* rel beneath dirfd with O_RDONLY | O_CLOEXEC | flags; -1 and errno (EXDEV: would leave;
 * ELOOP: a symlink the walk refuses). force_walk: the fallback even where openat2 works. */
int lnc_beneath_open(int dirfd, const char *rel, int flags, bool force_walk);
/* The fallback alone: every component opened with O_NOFOLLOW. */
int lnc_beneath_walk(int dirfd, const char *rel, int flags);
/* An absolute path (or a file:// URL, percent-decoded; file://localhost/ too) lexically
 * normalised into out, as Lance takes a shallow clone's base path: empty and "." components
 * dropped, ".." taking the one before it away (no symlink is looked at), no trailing '/'. -1
 * when uri is not one (relative, another scheme or host, an escape that is bad or decodes to
 * NUL or '/') or does not fit cap. For comparing paths written elsewhere with a root: what is
 * opened then still goes through the helpers above, which is what confines it. */
int lnc_abs_path(const char *uri, char *out, size_t cap);

#endif
