/* Opening beneath a directory (beneath.c): the one helper for every path liblance opens under
 * a root or a dataset directory. */
#ifndef LNC_UTIL_BENEATH_H
#define LNC_UTIL_BENEATH_H
#include <stdbool.h>

/* rel beneath dirfd with O_RDONLY | O_CLOEXEC | flags; -1 and errno (EXDEV: would leave;
 * ELOOP: a symlink the walk refuses). force_walk: the fallback even where openat2 works. */
int lnc_beneath_open(int dirfd, const char *rel, int flags, bool force_walk);
/* The fallback alone: every component opened with O_NOFOLLOW. */
int lnc_beneath_walk(int dirfd, const char *rel, int flags);

#endif
