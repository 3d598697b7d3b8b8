/* Message framing a proxy in front could read differently (request smuggling, RFC 9112
 * §6.3), checked once a request's headers are in and before any of its body is read:
 * Content-Length given twice with different values, Content-Length together with
 * Transfer-Encoding, a Transfer-Encoding other than exactly `chunked` (`gzip, chunked`, ...)
 * are each a 400 that closes the connection, so nothing pipelined behind a message whose
 * framing is in doubt is read as a request. Chunked bodies stay accepted (Node's HTTP client,
 * hence connect-node, sends them); libmicrohttpd 0.9.75 waits for the bytes of an absurd chunk
 * size (ffffffffffffffff) instead of refusing it, and the body deadline (conns.c, the header
 * deadline applied to the body) is what cuts such a request off. */
#include "lanced.h"
#include <microhttpd.h>
#include <string.h>
#include <strings.h>

struct framing {
  int n_cl, n_te;
  const char *cl, *te;
  bool cl_differ;
};

static enum MHD_Result count(void *cls, enum MHD_ValueKind kind, const char *key, const char *value) {
  (void)kind;
  struct framing *f = cls;
  if (!strcasecmp(key, "Content-Length")) {
    if (f->n_cl++ && strcmp(f->cl, value ? value : "")) f->cl_differ = true;
    if (!f->cl) f->cl = value ? value : "";
  } else if (!strcasecmp(key, "Transfer-Encoding")) {
    f->n_te++;
    f->te = value ? value : "";
  }
  return MHD_YES;
}

int ld_framing_check(struct MHD_Connection *c, struct ld_err *e) {
  struct framing f = {0};
  MHD_get_connection_values(c, MHD_HEADER_KIND, count, &f);
  if (f.cl_differ)
    return ld_errf(e, 400, "invalid_argument", "conflicting Content-Length headers");
  if (f.n_cl && f.n_te)
    return ld_errf(e, 400, "invalid_argument", "both Content-Length and Transfer-Encoding given");
  if (f.n_te > 1 || (f.n_te && strcasecmp(f.te, "chunked")))
    return ld_errf(e, 400, "invalid_argument", "unsupported Transfer-Encoding (only a length-delimited body is accepted)");
  return 0;
}
