/* Small generic helpers shared by the Check unit tests (linked into every tests/unit/test_*):
 * whole-file read/write and a scratch directory. Names start with tsup_. */
#ifndef TESTS_UNIT_SUPPORT_H
#define TESTS_UNIT_SUPPORT_H
#include <stddef.h>
#include <stdint.h>

/* Reads a whole file into a malloc'd buffer (NUL-terminated, *len excludes the NUL).
 * Returns NULL on failure. */
uint8_t *tsup_read_file(const char *path, size_t *len);
/* Writes len bytes to path (created/truncated, mode 0644). Returns 0 or -1. */
int tsup_write_file(const char *path, const void *data, size_t len);
/* Creates a fresh directory under $TMPDIR (or /tmp) named <prefix>XXXXXX; returns a
 * malloc'd path or NULL. */
char *tsup_mkdtemp(const char *prefix);
/* Removes a directory tree made by the test (best effort). */
void tsup_rmtree(const char *dir);
/* malloc'd "<dir>/<name>" */
char *tsup_path(const char *dir, const char *name);

#endif
