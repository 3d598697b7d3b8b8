/* lnc_file_open* (lance.h): a file is opened in two floors. The format floor reads and checks
 * the structure (footer, metadata, schema, columns, pages and their 2.1 layouts); this floor
 * then parses what only the layouts understand — a 2.0 page's ArrayEncoding tree — and links
 * the 2.0 columns (each list page's first item, a list's items against its child column).
 * Either failing closes the file and fails the open. */
#include "open.h"
#include "v20.h"
#include "../io/s3.h"
#include "../util/error.h"
#include <unistd.h>

/* Every 2.0 page's ArrayEncoding, parsed from the Any the format floor kept, which is freed
 * once parsed (the tree is what takes walk). */
static int parse_v20_pages(struct lnc_file *f, struct lnc_error *err) {
  for (uint32_t ci = 0; ci < f->n_columns; ci++) {
    struct lnc_column *c = &f->columns[ci];
    for (uint32_t p = 0; p < c->n_pages; p++) {
      struct lnc_page *pg = &c->pages[p];
      if (!pg->enc20_any) continue;
      int rc = lnc_v20_parse_page(f, ci, p, pg->enc20_any->value.data, pg->enc20_any->value.len, err);
      lance__file__v2__any_message__free_unpacked(pg->enc20_any, NULL);
      pg->enc20_any = NULL;
      if (rc) return rc;
    }
  }
  return 0;
}

/* The layout floor's pass over a file the format floor opened; closes it on failure. */
static int bind_layouts(int rc, lnc_file **out, struct lnc_error *err) {
  if (rc || !(*out)->v20) return rc;
  if (!(rc = parse_v20_pages(*out, err))) rc = lnc_v20_link(*out, err);
  if (rc) {
    lnc_file_close(*out);
    *out = NULL;
  }
  return rc;
}

int lnc_file_open(const char *path, lnc_file **out, struct lnc_error *err) {
  if (!path || !out) return lnc_errf(err, LNC_EINVAL, "lnc_file_open: no path or output");
  return bind_layouts(lnc_format_open_path(path, out, err), out, err);
}

int lnc_file_open_fd(int fd, const char *name, lnc_file **out, struct lnc_error *err) {
  if (!out) {
    if (fd >= 0) close(fd); /* ours in every case (lance.h) */
    return lnc_errf(err, LNC_EINVAL, "lnc_file_open_fd: no output");
  }
  return bind_layouts(lnc_format_open_fd(fd, name, out, err), out, err);
}

int lnc_file_open_source(struct lnc_s3_source *src, const char *name, lnc_file **out,
                         struct lnc_error *err) {
  return bind_layouts(lnc_format_open_source(src, name, out, err), out, err);
}

int lnc_file_open_s3(const char *url, lnc_file **out, struct lnc_error *err) {
  if (!url || !out) return lnc_errf(err, LNC_EINVAL, "lnc_file_open_s3: no URL or output");
  *out = NULL;
  struct lnc_s3_source *src = NULL;
  int rc = lnc_s3_source_open(url, &src, err);
  return rc ? rc : lnc_file_open_source(src, url, out, err);
}
