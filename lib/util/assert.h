/* Debug-build invariant checks (SQLite's habit): internal assumptions a caller cannot break
 * from the API — a lock held, a state reached — are asserted where they are assumed. Active
 * when LNC_DEBUG is defined (the ASan/UBSan build of `make asan` defines it), compiled out
 * otherwise, so release builds pay nothing. Input checks never go here: bad input is an
 * error return. */
#ifndef LNC_UTIL_ASSERT_H
#define LNC_UTIL_ASSERT_H

#ifdef LNC_DEBUG
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#define LNC_ASSERT(cond) assert(cond)
/* The mutex is held (by some thread; trylock cannot tell which, which is enough to catch a
 * helper called without it). */
#define LNC_ASSERT_LOCKED(m) assert(pthread_mutex_trylock(m) == EBUSY)
#else
#define LNC_ASSERT(cond)     ((void)0)
#define LNC_ASSERT_LOCKED(m) ((void)0)
#endif

#endif
