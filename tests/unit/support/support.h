/* Helpers shared by the Check unit tests (every tests/unit/support/<name>.c is linked into every
 * tests/unit/test_*): running a suite, whole-file read/write, scratch directories, shell
 * steps, a PRNG, JSON rows bodies (encode, compare with a short excerpt of the difference),
 * fixtures (tests/fixtures/index.json, the datasets under tests/fixtures/datasets, answers
 * lines). Names start with tsup_. Paths are relative to the repository root. */
#ifndef TESTS_UNIT_SUPPORT_H
#define TESTS_UNIT_SUPPORT_H
#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ArrowSchema;
struct ArrowArray;
struct lnc_error;
struct json_t;

/* ---- running (support.c) ------------------------------------------------------------------ */
/* Runs the suite (CK_NORMAL, summary printed by Check), frees the runner; returns 1 when any
 * test failed, else 0: `return tsup_run(suite());` from main. */
int tsup_run(Suite *s);

/* ---- files and directories (support.c) ---------------------------------------------------- */
/* Reads a whole file into a malloc'd buffer (NUL-terminated, *len excludes the NUL).
 * Returns NULL on failure. */
uint8_t *tsup_read_file(const char *path, size_t *len);
/* Writes len bytes to path (created/truncated, mode 0644). Returns 0 or -1. */
int tsup_write_file(const char *path, const void *data, size_t len);
/* Creates a fresh directory under $TMPDIR (or /tmp) named <prefix>XXXXXX; returns a
 * malloc'd path or NULL. */
char *tsup_mkdtemp(const char *prefix);
/* Creates a fresh directory "<directory of the running test binary>/<rel>XXXXXX" (on the
 * build's disk, not tmpfs: O_DIRECT works there); rel may start with "../". Returns a
 * malloc'd path or NULL. */
char *tsup_mkdtemp_by_exe(const char *rel);
/* Removes a directory tree made by the test (best effort). */
void tsup_rmtree(const char *dir);
/* malloc'd "<dir>/<name>" */
char *tsup_path(const char *dir, const char *name);
/* Runs the printf-formatted command with system(3); asserts it exits 0. */
void tsup_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- numbers (support.c) ------------------------------------------------------------------ */
/* xorshift64 (13, 7, 17): advances *state and returns the new value. */
uint64_t tsup_xorshift64(uint64_t *state);

/* ---- JSON rows bodies (json.c) ------------------------------------------------------------ */
/* lnc_encode_json of the batch as a malloc'd NUL-terminated string; NULL when the encoder
 * fails, err->code then its (non-zero) code. Asserts nothing: usable in helper threads. */
char *tsup_json_try(struct ArrowSchema *s, struct ArrowArray *a, struct lnc_error *err);
/* The same, asserting the encoder succeeded. */
char *tsup_json(struct ArrowSchema *s, struct ArrowArray *a);
/* Asserts the batch's JSON rows body equals want, then releases the batch. */
void tsup_expect_json(struct ArrowSchema *s, struct ArrowArray *a, const char *want);
/* Index of the first byte where a and b differ (the shorter length when one is a prefix). */
size_t tsup_first_diff(const char *a, size_t an, const char *b, size_t bn);
/* An excerpt of s (n bytes) around byte `at`, at most ~100 chars, "..." where cut. */
void tsup_excerpt(char *dst, size_t cap, const char *s, size_t n, size_t at);
/* true when got equals want byte for byte; otherwise writes
 * "differs at byte N: want <excerpt> | got <excerpt>" to msg. */
bool tsup_body_eq(const char *want, size_t wn, const char *got, size_t gn, char *msg, size_t cap);

/* ---- fixtures (fixtures.c) ---------------------------------------------------------------- */
#define TSUP_INDEX "tests/fixtures/index.json"
/* Loads an index.json; NULL (with a message on stderr naming `who`) when it does not load or
 * has no "fixtures" array. */
struct json_t *tsup_load_index(const char *path, const char *who);
/* The "file" of fixture `name` in tests/fixtures/index.json (malloc'd), or NULL. */
char *tsup_fixture_file(const char *name);

/* The Lance datasets under tests/fixtures/datasets (gen-datasets.mjs) and their latest
 * versions; <name>.lance, <name>.answers, <name>.rowaddr. */
#define TSUP_DS_DIR "tests/fixtures/datasets"
struct tsup_ds_fixture {
  const char *name;
  uint64_t latest;
};
extern const struct tsup_ds_fixture tsup_ds_fixtures[];
extern const size_t tsup_n_ds_fixtures;
/* Shallow clones (LanceDB cloneTable; <name>.lance beside clonesrc_*.lance, .answers,
 * .rowaddr). Not committed: a clone names its source by absolute path, so `make
 * clone-fixtures` writes them here (git-ignored), where the tests read them. */
#define TSUP_CLONE_DIR "tests/fixtures/clones"
extern const struct tsup_ds_fixture tsup_clone_fixtures[];
extern const size_t tsup_n_clone_fixtures;
/* Rewrites the manifest file at path with fn applied to its message (protobuf-c: whatever fn
 * puts in must be malloc'd, as free_unpacked frees it); the tail's version and magic kept,
 * the rest re-framed. Asserted. */
struct Lance__Table__Manifest;
void tsup_edit_manifest(const char *path, void (*fn)(struct Lance__Table__Manifest *m, const void *arg),
                        const void *arg);
/* Lance's own tag list of a dataset fixture (<name>.tags: "tag\tversion" lines, written by
 * gen-datasets.mjs from LanceDB's checkout(tag)): up to cap entries into tags[] (names
 * malloc'd, freed by the caller) and versions[]; the count. Asserted. */
size_t tsup_ds_tags(const char *name, char **tags, uint64_t *versions, size_t cap);
/* Copies dataset fixture <name>.lance to <dir>/<as> (cp -r, asserted). */
void tsup_ds_copy(const char *name, const char *dir, const char *as);

/* Splits line in place at TABs into exactly n fields (the last keeps any further TABs);
 * returns false when there are fewer than n. */
bool tsup_split_tabs(char *line, char **fields, int n);
/* Parses "[1,2,3]" into a malloc'd array (asserting the form); *n is the count. */
uint64_t *tsup_parse_ids(const char *s, size_t *n);

#endif
