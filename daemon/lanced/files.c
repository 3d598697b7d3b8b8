/* GET /files/<path>: the library's JSON description wrapped with the daemon's view of it.
 * A data file: {"path":..,"version":"2.1","num_rows":..,"columns":[..],"file":{...}}
 * (lnc_file_describe_json). A dataset directory (?version=N pins one, else the latest):
 * {"path":..,"type":"dataset","version":N,"num_rows":live,"data_format":"2.1",
 *  "columns":[..],"dataset":{...}} (lnc_dataset_describe_json: versions, fragments with
 * physical/live rows, data files, deletion files). Also ?version= parsing for the routes. */
#include "lanced.h"
#include "service.h"
#include "request.h"
#include "routes.h"
#include <string.h>

static int version_text(struct ld_call *call, const char *rel, const char *v, uint64_t *out, struct ld_err *e) {
  /* Digits are a version number, anything else a tag (Lance's checkout takes either, by type;
   * a tag named with digits only is asked for with ?tag=, a JSON string or Connect's tag). */
  if (*v && strspn(v, "0123456789") == strlen(v)) {
    if (lnc_parse_u64(v, strlen(v), out) && *out) return 0;
    ld_errf(e, LD_INVALID, "version '%.40s' is not a dataset version (want a positive integer or a tag)", v);
    return -1;
  }
  return ld_service_tag(call, rel, v, out, e);
}

int ld_pin_tag(struct ld_call *call, const char *rel, const char *tag, uint64_t *version, struct ld_err *e) {
  if (!tag) return 0;
  if (*version) return ld_errf(e, LD_INVALID, "a request names a version or a tag, not both");
  return ld_service_tag(call, rel, tag, version, e);
}

int ld_version_arg(struct ld_req *r, const char *rel, uint64_t *out, struct ld_err *e) {
  struct ld_call *call = &r->call;
  const char *v = ld_arg(r, "version");
  const char *tag = ld_arg(r, "tag");
  if (v && tag) {
    ld_errf(e, LD_INVALID, "give version or tag, not both");
    return -1;
  }
  /* ?tag= is always a tag, so one named with digits only can be asked for too. */
  if (tag) return ld_service_tag(call, rel, tag, out, e) ? -1 : 0;
  if (!v) return 1;
  return version_text(call, rel, v, out, e) ? -1 : 0;
}

static void columns(struct lnc_buf *b, const struct ArrowSchema *s) {
  ld_buf_puts(b, "[");
  for (int64_t i = 0; i < s->n_children; i++) {
    const struct ArrowSchema *ch = s->children[i];
    ld_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
    ld_buf_json_str(b, ch->name ? ch->name : "", ch->name ? strlen(ch->name) : 0);
    ld_buf_puts(b, ",\"type\":");
    struct lnc_buf t = {0};
    ld_arrow_type_name(ch, &t);
    ld_buf_json_str(b, (const char *)t.data, t.len);
    lnc_buf_free(&t);
    ld_buf_printf(b, ",\"nullable\":%s}", (ch->flags & ARROW_FLAG_NULLABLE) ? "true" : "false");
  }
  ld_buf_puts(b, "]");
}

void ld_file_handle(struct ld_req *r, const char *rel, struct ld_response *out) {
  struct ld_file_info fi;
  struct ld_err e;
  uint64_t version;
  int vr = ld_version_arg(r, rel, &version, &e);
  if (vr < 0) return ld_json_error(out, &e);
  if (ld_service_describe(&r->call, rel, vr == 0 ? &version : NULL, &fi, &e)) return ld_json_error(out, &e);
  struct lnc_buf *b = &out->body;
  ld_buf_puts(b, "{\"path\":");
  ld_buf_json_str(b, rel, strlen(rel));
  if (fi.dataset)
    ld_buf_printf(b, ",\"type\":\"dataset\",\"version\":%llu,\"num_rows\":%llu,"
                     "\"data_format\":\"%d.%d\",\"columns\":",
                  (unsigned long long)fi.ds_version, (unsigned long long)fi.num_rows, fi.major,
                  fi.minor);
  else
    ld_buf_printf(b, ",\"version\":\"%d.%d\",\"num_rows\":%llu,\"columns\":", fi.major, fi.minor,
                  (unsigned long long)fi.num_rows);
  columns(b, &fi.schema);
  /* What a take may select besides the fields (docs/api.md, row ids). */
  if (fi.dataset)
    ld_buf_puts(b, ",\"pseudo_columns\":[{\"name\":\"_rowid\",\"type\":\"uint64\",\"nullable\":false},"
                   "{\"name\":\"_rowaddr\",\"type\":\"uint64\",\"nullable\":false}]");
  ld_buf_puts(b, fi.dataset ? ",\"dataset\":" : ",\"file\":");
  if (fi.describe.len)
    ld_buf_append(b, fi.describe.data, fi.describe.len);
  else
    ld_buf_puts(b, "null");
  ld_buf_puts(b, "}\n");
  fi.schema.release(&fi.schema);
  lnc_buf_free(&fi.describe);
  out->status = 200;
  out->content_type = "application/json";
}
