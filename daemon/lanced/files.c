/* GET /files/<path>: the library's JSON description of one data file (lnc_file_describe_json)
 * wrapped with the daemon's view of it: {"path":..,"num_rows":..,"version":..,"file":{...}}. */
#include "lanced.h"
#include <string.h>

void ld_file_handle(struct ld_req *r, const char *rel, struct ld_response *out) {
  struct ld_file_info fi;
  struct ld_err e;
  (void)r;
  if (ld_service_describe(rel, &fi, &e)) return ld_json_error(out, &e);
  struct lnc_buf *b = &out->body;
  ld_buf_puts(b, "{\"path\":");
  ld_buf_json_str(b, rel, strlen(rel));
  ld_buf_printf(b, ",\"version\":\"%d.%d\",\"num_rows\":%llu,\"columns\":[", fi.major, fi.minor,
                (unsigned long long)fi.num_rows);
  for (int64_t i = 0; i < fi.schema.n_children; i++) {
    const struct ArrowSchema *ch = fi.schema.children[i];
    ld_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
    ld_buf_json_str(b, ch->name ? ch->name : "", ch->name ? strlen(ch->name) : 0);
    ld_buf_puts(b, ",\"type\":");
    struct lnc_buf t = {0};
    ld_arrow_type_name(ch, &t);
    ld_buf_json_str(b, (const char *)t.data, t.len);
    lnc_buf_free(&t);
    ld_buf_printf(b, ",\"nullable\":%s}", (ch->flags & ARROW_FLAG_NULLABLE) ? "true" : "false");
  }
  ld_buf_puts(b, "],\"file\":");
  if (fi.describe.len) ld_buf_append(b, fi.describe.data, fi.describe.len);
  else ld_buf_puts(b, "null");
  ld_buf_puts(b, "}\n");
  fi.schema.release(&fi.schema);
  lnc_buf_free(&fi.describe);
  out->status = 200;
  out->content_type = "application/json";
}
