/* One column liblance cannot serve never sinks the others (issue 12, part 3), on a real file:
 * tests/fixtures/data/unsup22 (gen.mjs) holds a dictionary of booleans, a list of fixed-size
 * lists nested five deep, fixed-size lists of strings and of structs, a packed struct with a
 * fixed-size list child beside ordinary columns and a map (logical type "map"), which was the other
 * unserved column until maps were read (2026-11-26; their values are checked against Lance's
 * by the conformance test, map22). The
 * file opens, describes itself with the column marked, serves the others, and a take that
 * includes the column it cannot serve fails with LNC_EUNSUPPORTED naming that column. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lance.h"
#include "support/support.h"

static lnc_file *open_fixture(const char *name) {
  char *path = tsup_fixture_file(name);
  ck_assert_msg(path != NULL, "fixture %s missing from " TSUP_INDEX, name);
  lnc_file *f = NULL;
  struct lnc_error err = {0};
  int rc = lnc_file_open(path, &f, &err);
  ck_assert_msg(rc == 0, "open %s: %s", path, err.message);
  free(path);
  return f;
}

static lnc_file *open_unsup(void) { return open_fixture("unsup22"); }

START_TEST(test_open_and_describe) {
  lnc_file *f = open_unsup();
  struct lnc_buf json = {0};
  ck_assert_int_eq(lnc_file_describe_json(f, &json, NULL), 0);
  ck_assert_ptr_null(memmem(json.data, json.len, "logical type 'map'", 18));
  ck_assert_ptr_nonnull(memmem(json.data, json.len, "dictionary of bool values", 25));
  ck_assert_ptr_nonnull(memmem(json.data, json.len, "fixed-size list of string items", 31));
  lnc_buf_free(&json);
  /* The schema still exports: the unserved column as Arrow null, the map as a map. */
  struct ArrowSchema s;
  ck_assert_int_eq(lnc_file_schema(f, &s, NULL), 0);
  ck_assert_int_eq(s.n_children, 10);
  ck_assert_str_eq(s.children[2]->name, "m");
  ck_assert_str_eq(s.children[2]->format, "+m");
  ck_assert_str_eq(s.children[3]->name, "db");
  ck_assert_str_eq(s.children[3]->format, "n");
  s.release(&s);
  lnc_file_close(f);
}
END_TEST

START_TEST(test_other_columns_served) {
  lnc_file *f = open_unsup();
  const char *cols[] = {"x", "id", "s"};
  uint64_t ids[] = {299, 0, 5, 5};
  struct ArrowSchema s;
  struct ArrowArray a;
  struct lnc_error err = {0};
  int rc = lnc_take(f, ids, 4, cols, 3, &s, &a, NULL, &err);
  ck_assert_msg(rc == 0, "take x,id,s: %s", err.message);
  char *body = tsup_json(&s, &a);
  ck_assert_ptr_nonnull(strstr(body, "\"columns\":[\"x\",\"id\",\"s\"]"));
  ck_assert_ptr_nonnull(strstr(body, "\"id\":299"));
  free(body);
  a.release(&a);
  s.release(&s);
  lnc_file_close(f);
}
END_TEST

static void expect_refused(lnc_file *f, const char *const *cols, size_t ncols, const char *name) {
  uint64_t ids[] = {1};
  struct ArrowSchema s;
  struct ArrowArray a;
  struct lnc_error err = {0};
  int rc = lnc_take(f, ids, 1, cols, ncols, &s, &a, NULL, &err);
  ck_assert_int_eq(rc, LNC_EUNSUPPORTED);
  char want[64];
  snprintf(want, sizeof want, "column '%s' cannot be served", name);
  ck_assert_msg(strstr(err.message, want), "message lacks \"%s\": %s", want, err.message);
  /* And with no error struct at all, the same code. */
  ck_assert_int_eq(lnc_take(f, ids, 1, cols, ncols, &s, &a, NULL, NULL), LNC_EUNSUPPORTED);
}

START_TEST(test_unserved_columns_refused_by_name) {
  lnc_file *f = open_unsup();
  expect_refused(f, NULL, 0, "db"); /* all columns: the one it cannot serve, by name */
  const char *db[] = {"id", "db"};
  expect_refused(f, db, 2, "db");
  /* A list whose item is fixed-size lists nested five deep: the item is what is not read. */
  const char *lff[] = {"lff", "id"};
  expect_refused(f, lff, 2, "item");
  /* A fixed-size list of strings (not fixed-width items): refused at open, by its name. */
  const char *fstr[] = {"id", "fstr"};
  expect_refused(f, fstr, 2, "fstr");
  /* A fixed-size list of structs: the file opens (it once did not), the column is refused. */
  const char *fst[] = {"fst"};
  expect_refused(f, fst, 1, "fst");
  /* One of three structs a row: its columns count three values a row, not corrupt. */
  const char *fst3[] = {"x", "fst3"};
  expect_refused(f, fst3, 2, "fst3");
  /* A packed struct with a fixed-size list child: refused at open, by its name. */
  const char *pfsl[] = {"pfsl", "id"};
  expect_refused(f, pfsl, 2, "pfsl");
  lnc_file_close(f);
}
END_TEST

/* The map beside it is served; a path into a map selects the whole map. */
START_TEST(test_map_served) {
  lnc_file *f = open_unsup();
  uint64_t ids[] = {2, 3};
  const char *cols[][2] = {{"id", "m"}, {"id", "m.entries.key"}};
  for (int k = 0; k < 2; k++) {
    struct ArrowSchema s;
    struct ArrowArray a;
    struct lnc_error err = {0};
    int rc = lnc_take(f, ids, 2, cols[k], 2, &s, &a, NULL, &err);
    ck_assert_msg(rc == 0, "take %s: %s", cols[k][1], err.message);
    char *body = tsup_json(&s, &a);
    ck_assert_str_eq(body, "{\"num_rows\":2,\"columns\":[\"id\",\"m\"],\"rows\":[{\"id\":2,\"m\":[{\"key\":\"k2\",\"value\":2}]},"
                           "{\"id\":3,\"m\":null}]}");
    free(body);
    a.release(&a);
    s.release(&s);
  }
  lnc_file_close(f);
}
END_TEST

/* A take of no rows is how a schema is asked for (a dataset's description reads one this way):
 * it succeeds, the unserved columns typed null. The list of fixed-size lists nested five deep comes back
 * as a list of null: its item's column is not read, and the assembly of the list once
 * dereferenced that unread column (a crash of lanced describing the dataset). */
START_TEST(test_zero_row_take_gives_schema) {
  lnc_file *f = open_unsup();
  struct ArrowSchema s;
  struct ArrowArray a;
  struct lnc_error err = {0};
  int rc = lnc_take(f, NULL, 0, NULL, 0, &s, &a, NULL, &err);
  ck_assert_msg(rc == 0, "take of no rows: %s", err.message);
  ck_assert_int_eq(s.n_children, 10);
  ck_assert_str_eq(s.children[2]->format, "+m");
  ck_assert_str_eq(s.children[3]->format, "n");
  ck_assert_str_eq(s.children[4]->format, "g");
  ck_assert_str_eq(s.children[5]->name, "lff");
  ck_assert_str_eq(s.children[5]->format, "+l");
  ck_assert_int_eq(s.children[5]->n_children, 1);
  ck_assert_str_eq(s.children[5]->children[0]->format, "n");
  ck_assert_str_eq(s.children[6]->name, "fstr");
  ck_assert_str_eq(s.children[6]->format, "n");
  ck_assert_str_eq(s.children[7]->name, "fst");
  ck_assert_str_eq(s.children[7]->format, "n");
  ck_assert_str_eq(s.children[8]->name, "fst3");
  ck_assert_str_eq(s.children[8]->format, "n");
  ck_assert_str_eq(s.children[9]->name, "pfsl");
  ck_assert_str_eq(s.children[9]->format, "n");
  ck_assert_int_eq(a.length, 0);
  ck_assert_int_eq(a.n_children, 10);
  ck_assert_int_eq(a.children[5]->length, 0);
  a.release(&a);
  s.release(&s);
  lnc_file_close(f);
}
END_TEST

/* File version 2.0: a fixed-size list of structs is one column of the file (its item's fields
 * have none); the file failed to open as corrupt ('struct field 'item' has no children', then
 * 'field needs column N'). Now it opens, the column after it is served and the list is
 * refused by name (tests/fixtures/data/unsup20). */
START_TEST(test_fsl_of_structs_20) {
  lnc_file *f = open_fixture("unsup20");
  struct lnc_error err = {0};
  struct lnc_buf json = {0};
  ck_assert_int_eq(lnc_file_describe_json(f, &json, NULL), 0);
  ck_assert_ptr_nonnull(memmem(json.data, json.len, "fixed-size list of struct items", 31));
  lnc_buf_free(&json);
  const char *cols[] = {"x", "id"};
  uint64_t ids[] = {199, 3};
  struct ArrowSchema s;
  struct ArrowArray a;
  int rc = lnc_take(f, ids, 2, cols, 2, &s, &a, NULL, &err);
  ck_assert_msg(rc == 0, "take x,id: %s", err.message);
  char *body = tsup_json(&s, &a);
  ck_assert_ptr_nonnull(strstr(body, "\"id\":199"));
  free(body);
  a.release(&a);
  s.release(&s);
  const char *fst[] = {"id", "fst"};
  expect_refused(f, fst, 2, "fst");
  lnc_file_close(f);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("unsupported");
  TCase *tc = tcase_create("columns");
  tcase_add_test(tc, test_open_and_describe);
  tcase_add_test(tc, test_other_columns_served);
  tcase_add_test(tc, test_unserved_columns_refused_by_name);
  tcase_add_test(tc, test_map_served);
  tcase_add_test(tc, test_zero_row_take_gives_schema);
  tcase_add_test(tc, test_fsl_of_structs_20);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  return tsup_run(suite());
}
