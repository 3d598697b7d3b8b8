/* Request rendering (see request.h). The per-request work is only formatting the ids
 * between two precomputed strings, so request building stays cheap even at 10^5 req/s. */
#include "request.h"
#include <ctype.h>
#include <string.h>

void ld_percent_encode(ld_sbuf *out, const char *s, const char *keep) {
  static const char hex[] = "0123456789ABCDEF";
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if (isalnum(*c) || strchr("-._~", *c) || (keep && *c && strchr(keep, *c))) {
      ld_sbuf_putc(out, (char)*c);
    } else {
      char e[3] = {'%', hex[*c >> 4], hex[*c & 15]};
      ld_sbuf_append(out, e, 3);
    }
  }
}

void ld_ids_join(ld_sbuf *out, const uint64_t *ids, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (i) ld_sbuf_putc(out, ',');
    ld_sbuf_u64(out, ids[i]);
  }
}

static void json_string(ld_sbuf *out, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  ld_sbuf_putc(out, '"');
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      ld_sbuf_putc(out, '\\');
      ld_sbuf_putc(out, (char)c);
    } else if (c < 0x20) {
      char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
      ld_sbuf_append(out, e, 6);
    } else {
      ld_sbuf_putc(out, (char)c);
    }
  }
  ld_sbuf_putc(out, '"');
}

/* Raw (baseline) requests carry only the Host header, byte for byte what wrk sends, so a
 * comparison of the two generators is not skewed by the server parsing more headers. */
static void common_headers(ld_sbuf *out, const ld_req_params *p, bool user_agent) {
  ld_sbuf_puts(out, " HTTP/1.1\r\nHost: ");
  ld_sbuf_puts(out, p->host_header);
  ld_sbuf_puts(out, user_agent ? "\r\nUser-Agent: lanced-load\r\n" : "\r\n");
}

void ld_req_tmpl_init(ld_req_tmpl *t, const ld_req_params *p) {
  memset(t, 0, sizeof *t);
  t->post_threshold = p->post_threshold;
  if (p->raw_path) {
    ld_sbuf_puts(&t->raw, "GET ");
    ld_sbuf_puts(&t->raw, p->prefix);
    if (p->raw_path[0] != '/') ld_sbuf_putc(&t->raw, '/');
    ld_percent_encode(&t->raw, p->raw_path, "/?&=%+,;:@!$'()*");
    common_headers(&t->raw, p, false);
    ld_sbuf_puts(&t->raw, "\r\n");
    return;
  }
  ld_sbuf path = {0};
  ld_sbuf_puts(&path, p->prefix);
  ld_sbuf_puts(&path, "/files/");
  ld_percent_encode(&path, p->file[0] == '/' ? p->file + 1 : p->file, "/");
  ld_sbuf_puts(&path, "/rows");

  ld_sbuf_puts(&t->get_head, "GET ");
  ld_sbuf_append(&t->get_head, path.p, path.len);
  ld_sbuf_puts(&t->get_head, "?ids=");

  ld_sbuf query_tail = {0}; /* what follows the ids in the GET target */
  if (p->columns) {
    ld_sbuf_puts(&query_tail, "&columns=");
    ld_percent_encode(&query_tail, p->columns, ",");
  }
  if (p->format) {
    ld_sbuf_puts(&query_tail, "&format=");
    ld_percent_encode(&query_tail, p->format, NULL);
  }
  t->target_fixed = path.len + strlen("?ids=") + query_tail.len;
  ld_sbuf_append(&t->get_tail, query_tail.p, query_tail.len);
  common_headers(&t->get_tail, p, true);
  ld_sbuf_puts(&t->get_tail, "\r\n");

  ld_sbuf_puts(&t->post_head, "POST ");
  ld_sbuf_append(&t->post_head, path.p, path.len);
  if (p->format) {
    ld_sbuf_puts(&t->post_head, "?format=");
    ld_percent_encode(&t->post_head, p->format, NULL);
  }
  common_headers(&t->post_head, p, true);
  ld_sbuf_puts(&t->post_head, "Content-Type: application/json\r\nContent-Length: ");

  if (p->columns) {
    ld_sbuf_puts(&t->post_cols, "],\"columns\":[");
    const char *c = p->columns;
    for (int first = 1;; first = 0) {
      const char *comma = strchr(c, ',');
      size_t n = comma ? (size_t)(comma - c) : strlen(c);
      if (!first) ld_sbuf_putc(&t->post_cols, ',');
      json_string(&t->post_cols, c, n);
      if (!comma) break;
      c = comma + 1;
    }
    ld_sbuf_puts(&t->post_cols, "]}");
  } else {
    ld_sbuf_puts(&t->post_cols, "]}");
  }
  ld_sbuf_free(&path);
  ld_sbuf_free(&query_tail);
}

void ld_req_tmpl_free(ld_req_tmpl *t) {
  ld_sbuf_free(&t->get_head);
  ld_sbuf_free(&t->get_tail);
  ld_sbuf_free(&t->post_head);
  ld_sbuf_free(&t->post_cols);
  ld_sbuf_free(&t->raw);
}

void ld_req_build(const ld_req_tmpl *t, const uint64_t *ids, size_t n, ld_sbuf *out, bool *is_post) {
  ld_sbuf_clear(out);
  if (t->raw.len) {
    ld_sbuf_append(out, t->raw.p, t->raw.len);
    *is_post = false;
    return;
  }
  size_t ids_len = n ? n - 1 : 0;
  for (size_t i = 0; i < n; i++) ids_len += ld_u64_digits(ids[i]);
  bool post = t->post_threshold ? n > t->post_threshold : t->target_fixed + ids_len > LD_AUTO_URL_LIMIT;
  *is_post = post;
  if (!post) {
    ld_sbuf_reserve(out, t->get_head.len + ids_len + t->get_tail.len);
    ld_sbuf_append(out, t->get_head.p, t->get_head.len);
    ld_ids_join(out, ids, n);
    ld_sbuf_append(out, t->get_tail.p, t->get_tail.len);
    return;
  }
  static const char open[] = "{\"ids\":[";
  size_t body_len = strlen(open) + ids_len + t->post_cols.len;
  ld_sbuf_reserve(out, t->post_head.len + 24 + body_len);
  ld_sbuf_append(out, t->post_head.p, t->post_head.len);
  ld_sbuf_u64(out, body_len);
  ld_sbuf_puts(out, "\r\n\r\n");
  ld_sbuf_puts(out, open);
  ld_ids_join(out, ids, n);
  ld_sbuf_append(out, t->post_cols.p, t->post_cols.len);
}
