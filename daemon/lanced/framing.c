/* Message framing a proxy in front could read differently (request smuggling, RFC 9112
 * §6.3), checked once a request's headers are in and before any of its body is read:
 * Content-Length given twice with different values, Content-Length together with
 * Transfer-Encoding, a Transfer-Encoding other than exactly `chunked` (`gzip, chunked`, ...)
 * whitespace between a header's name and its colon (`Transfer-Encoding : chunked`) and either
 * framing header folded onto a second line (obs-fold) are each a 400 that closes the connection, so nothing pipelined behind a message whose
 * framing is in doubt is read as a request. Chunked bodies stay accepted (Node's HTTP client,
 * hence connect-node, sends them); libmicrohttpd 0.9.75 waits for the bytes of an absurd chunk
 * size (ffffffffffffffff) instead of refusing it, and the body deadline (conns.c, the header
 * deadline applied to the body) is what cuts such a request off.
 *
 * A raw NUL in the request line: libmicrohttpd 0.9.75 reads the line by length but hands the
 * URI on as a C string, so `GET /a\0/b HTTP/1.1` would be served as /a while a proxy saw
 * /a\0/b. MHD offers no length, so the URI is measured when MHD's URI log callback sees it,
 * before MHD cuts it up: the callback gets the URI in place in the connection's read buffer,
 * where the request line's space before the HTTP version was just overwritten by a NUL and
 * the version string follows it (the `version` the request handler gets). The URI's bytes
 * therefore run up to version - 1; a strlen shorter than that means a NUL inside. Newer
 * libmicrohttpd releases refuse such a line themselves; where the pointers are not in one
 * buffer (an HTTP/0.9 line has the static "" as version) the check does not apply. */
#include "lanced.h"
#include "server.h"
#include <microhttpd.h>
#include <string.h>
#include <strings.h>

struct framing {
  int n_cl, n_te, n_host;
  const char *cl, *te;
  bool cl_differ, space_in_name, folded;
};

/* key is name followed by more: what libmicrohttpd 0.9.75 makes of a folded line (obs-fold,
 * RFC 9112 5.2), which it appends to the header's name instead of its value. */
static bool name_glued(const char *key, const char *name) {
  size_t n = strlen(name);
  return !strncasecmp(key, name, n) && key[n];
}

static enum MHD_Result count(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
  (void)kind;
  struct framing *f = cls;
  /* libmicrohttpd 0.9.75 keeps `Transfer-Encoding : chunked` under the name with its space,
   * which no comparison below matches, while a proxy may take it for the header itself. */
  if (strpbrk(key, " \t")) f->space_in_name = true;
  /* `Transfer-Encoding:\r\n chunked` arrives as a header "Transfer-Encodingchunked" with an
   * empty value, `Content-Length:\r\n 11` as "Content-Length11": the message is framed by the
   * other header or as bodiless, while a proxy unfolding the line (as RFC 9112 5.2 allows)
   * frames it by this one. */
  if (name_glued(key, "Content-Length") || name_glued(key, "Transfer-Encoding")) f->folded = true;
  if (!strcasecmp(key, "Content-Length")) {
    if (f->n_cl++ && strcmp(f->cl, value ? value : "")) f->cl_differ = true;
    if (!f->cl) f->cl = value ? value : "";
  } else if (!strcasecmp(key, "Transfer-Encoding")) {
    f->n_te++;
    f->te = value ? value : "";
  } else if (!strcasecmp(key, "Host")) {
    f->n_host++;
  }
  return MHD_YES;
}

#define RAW_LINE_MAX ((size_t)LD_CONN_MEMORY) /* a request line lies in MHD's connection memory */

void *ld_framing_uri_seen(void *cls, const char *uri, struct MHD_Connection *c) {
  (void)cls;
  if (uri) ld_conn_note_uri(c, uri, strlen(uri));
  return NULL; /* no per-request context of ours yet: on_request makes it */
}

static bool nul_in_request_line(struct MHD_Connection *c, const char *version) {
  size_t seen = 0;
  const char *raw = ld_conn_raw_uri(c, &seen);
  if (!raw || !version || version <= raw || (size_t)(version - raw) > RAW_LINE_MAX) return false;
  size_t span = (size_t)(version - 1 - raw); /* the URI's bytes as MHD delimited them */
  return seen < span;
}

int ld_framing_check(struct MHD_Connection *c, const char *version, struct ld_err *e) {
  if (nul_in_request_line(c, version))
    return ld_errf(e, LD_INVALID, "a NUL byte in the request line");
  struct framing f = {0};
  MHD_get_connection_values(c, MHD_HEADER_KIND, count, &f);
  if (f.space_in_name) /* RFC 9112 §5.1: such a request MUST be answered 400 */
    return ld_errf(e, LD_INVALID, "whitespace between a header's name and its colon");
  if (f.folded) /* RFC 9112 §5.2: rejected, since libmicrohttpd cannot unfold it */
    return ld_errf(e, LD_INVALID, "Content-Length or Transfer-Encoding folded onto a second line (obs-fold)");
  if (f.cl_differ)
    return ld_errf(e, LD_INVALID, "conflicting Content-Length headers");
  if (f.n_cl && f.n_te)
    return ld_errf(e, LD_INVALID, "both Content-Length and Transfer-Encoding given");
  if (f.n_te > 1 || (f.n_te && strcasecmp(f.te, "chunked")))
    return ld_errf(e, LD_INVALID, "unsupported Transfer-Encoding (only a length-delimited body is accepted)");
  /* RFC 9112 §3.2: an HTTP/1.1 request without a Host, or any request with two, is a 400 (a
   * proxy may route by one Host and a server read the other). */
  if (f.n_host > 1) return ld_errf(e, LD_INVALID, "more than one Host header");
  if (!f.n_host && version && !strcmp(version, "HTTP/1.1")) return ld_errf(e, LD_INVALID, "an HTTP/1.1 request without a Host header");
  return 0;
}
