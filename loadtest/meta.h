/* One-shot blocking HTTP exchange used before the run: reading the file metadata for
 * num_rows (so ids stay in range) and checking the server answers at all. */
#ifndef LD_META_H
#define LD_META_H
#include "http_parse.h"
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Sends request (complete HTTP text) and reads one response into resp (body captured).
 * 0 on success, -1 with a message in err. */
int ld_http_exchange(const struct sockaddr *sa, socklen_t salen, const char *request, int timeout_ms,
                     ld_http_resp *resp, char *err, size_t errcap);
/* Extracts the top-level "num_rows" of a metadata JSON document. */
int ld_meta_num_rows(const char *body, size_t len, uint64_t *out, char *err, size_t errcap);

#endif
