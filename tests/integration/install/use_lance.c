/* A program outside the tree, built against an installed liblance with
 * `cc use_lance.c $(pkg-config --cflags --libs lance)`: opens a Lance file, prints its row
 * count and the JSON body of one row of one column (what `lancectl take` prints). */
#include <lance.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: use_lance FILE ID COLUMN\n");
    return 2;
  }
  lnc_file *f;
  struct lnc_error err = {0};
  if (lnc_file_open(argv[1], &f, &err)) {
    fprintf(stderr, "open: %s\n", err.message);
    return 1;
  }
  uint64_t id = 0;
  sscanf(argv[2], "%llu", (unsigned long long *)&id);
  const char *cols[1] = {argv[3]};
  struct ArrowSchema s;
  struct ArrowArray a;
  struct lnc_buf body = {0};
  int rc = lnc_take(f, &id, 1, cols, 1, &s, &a, NULL, &err);
  if (!rc) rc = lnc_encode_json(&s, &a, &body, &err);
  if (rc) {
    fprintf(stderr, "take: %s\n", err.message);
    return 1;
  }
  printf("rows %llu\n%.*s\n", (unsigned long long)lnc_file_num_rows(f), (int)body.len, (const char *)body.data);
  lnc_buf_free(&body);
  s.release(&s);
  a.release(&a);
  lnc_file_close(f);
  return 0;
}
