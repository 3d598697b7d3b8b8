/* Incremental HTTP/1.1 response parser (see http_parse.h). A state machine over bytes
 * rather than over whole lines so a response can arrive one byte at a time or share a read
 * with the next one; bodies are skipped by length, which keeps the client off the profile. */
#include "http_parse.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum {
  ST_STATUS,     /* reading the status line */
  ST_HEADER,     /* reading header lines until the empty one */
  ST_BODY_LEN,   /* Content-Length body */
  ST_BODY_CLOSE, /* body delimited by connection close */
  ST_CHUNK_SIZE, /* chunk-size line */
  ST_CHUNK_DATA,
  ST_CHUNK_CRLF, /* CRLF after chunk data */
  ST_TRAILER,    /* trailer lines after the last chunk */
  ST_DONE,
};

void ld_http_resp_reset(ld_http_resp *p, bool head_request, bool capture) {
  char *body = p->body;
  size_t cap = p->body_cap;
  p->state = ST_STATUS;
  p->status = 0;
  p->minor = 1;
  p->chunked = p->close = p->keep_alive_hdr = p->no_body = false;
  p->head_request = head_request;
  p->content_length = -1;
  p->remaining = 0;
  p->header_bytes = p->body_bytes = 0;
  p->content_type[0] = 0;
  p->capture = capture;
  p->body = body;
  p->body_cap = cap;
  p->body_len = 0;
  p->line_len = 0;
  p->error[0] = 0;
}

void ld_http_resp_free(ld_http_resp *p) {
  free(p->body);
  p->body = NULL;
  p->body_cap = p->body_len = 0;
}

bool ld_http_resp_untouched(const ld_http_resp *p) {
  return p->state == ST_STATUS && p->line_len == 0 && p->header_bytes == 0;
}

bool ld_http_resp_headers_done(const ld_http_resp *p) { return p->state > ST_HEADER; }

static ld_http_result parse_fail(ld_http_resp *p, const char *msg) {
  snprintf(p->error, sizeof p->error, "%s", msg);
  return LD_HTTP_ERROR;
}

static int capture(ld_http_resp *p, const char *d, size_t n) {
  p->body_bytes += n;
  if (!p->capture || n == 0) return 0;
  if (p->body_len + n > p->body_cap) {
    size_t cap = p->body_cap ? p->body_cap : 4096;
    while (cap < p->body_len + n) cap *= 2;
    char *nb = realloc(p->body, cap);
    if (!nb) return -1;
    p->body = nb;
    p->body_cap = cap;
  }
  memcpy(p->body + p->body_len, d, n);
  p->body_len += n;
  return 0;
}

/* Token list match for Connection / Transfer-Encoding values ("keep-alive, Upgrade"). */
static bool has_token(const char *v, const char *tok) {
  size_t tl = strlen(tok);
  while (*v) {
    while (*v == ' ' || *v == '\t' || *v == ',') v++;
    const char *s = v;
    while (*v && *v != ',') v++;
    const char *e = v;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t')) e--;
    if ((size_t)(e - s) == tl && strncasecmp(s, tok, tl) == 0) return true;
  }
  return false;
}

static ld_http_result parse_status(ld_http_resp *p, char *line) {
  /* HTTP/1.x SP 3DIGIT [SP reason] */
  if (strncmp(line, "HTTP/1.", 7) != 0 || !isdigit((unsigned char)line[7]) || line[8] != ' ')
    return parse_fail(p, "bad status line");
  p->minor = line[7] - '0';
  const char *c = line + 9;
  if (!isdigit((unsigned char)c[0]) || !isdigit((unsigned char)c[1]) || !isdigit((unsigned char)c[2]) ||
      (c[3] && c[3] != ' '))
    return parse_fail(p, "bad status code");
  p->status = (c[0] - '0') * 100 + (c[1] - '0') * 10 + (c[2] - '0');
  if (p->status < 100) return parse_fail(p, "bad status code");
  return LD_HTTP_MORE;
}

static ld_http_result parse_header(ld_http_resp *p, char *line) {
  char *colon = strchr(line, ':');
  if (!colon || colon == line) return parse_fail(p, "bad header line");
  *colon = 0;
  char *v = colon + 1;
  while (*v == ' ' || *v == '\t') v++;
  size_t vl = strlen(v);
  while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t')) v[--vl] = 0;
  if (strcasecmp(line, "content-length") == 0) {
    if (!*v) return parse_fail(p, "bad content-length");
    char *end;
    unsigned long long n = strtoull(v, &end, 10);
    if (*end || !isdigit((unsigned char)*v)) return parse_fail(p, "bad content-length");
    if (p->content_length >= 0 && (unsigned long long)p->content_length != n)
      return parse_fail(p, "conflicting content-length");
    if (n > (unsigned long long)INT64_MAX) return parse_fail(p, "content-length too large");
    p->content_length = (int64_t)n;
  } else if (strcasecmp(line, "transfer-encoding") == 0) {
    if (has_token(v, "chunked")) p->chunked = true;
  } else if (strcasecmp(line, "connection") == 0) {
    if (has_token(v, "close")) p->close = true;
    if (has_token(v, "keep-alive")) p->keep_alive_hdr = true;
  } else if (strcasecmp(line, "content-type") == 0) {
    snprintf(p->content_type, sizeof p->content_type, "%s", v);
  }
  return LD_HTTP_MORE;
}

/* Headers complete: decide how the body is delimited (RFC 9112 section 6.3). */
static ld_http_result headers_end(ld_http_resp *p) {
  if (p->minor == 0 && !p->keep_alive_hdr) p->close = true;
  if (p->status < 200) {
    /* Interim response (100 Continue): it is followed by the real one on the same stream. */
    p->state = ST_STATUS;
    p->line_len = 0;
    return LD_HTTP_MORE;
  }
  if (p->head_request || p->status == 204 || p->status == 304) {
    p->no_body = true;
    p->state = ST_DONE;
    return LD_HTTP_DONE;
  }
  if (p->chunked) {
    p->content_length = -1; /* chunked wins over Content-Length */
    p->state = ST_CHUNK_SIZE;
  } else if (p->content_length >= 0) {
    p->remaining = (uint64_t)p->content_length;
    if (p->remaining == 0) {
      p->state = ST_DONE;
      return LD_HTTP_DONE;
    }
    p->state = ST_BODY_LEN;
  } else {
    p->close = true;
    p->state = ST_BODY_CLOSE;
  }
  return LD_HTTP_MORE;
}

static ld_http_result parse_chunk_size(ld_http_resp *p, char *line) {
  char *end;
  if (!isxdigit((unsigned char)line[0])) return parse_fail(p, "bad chunk size");
  unsigned long long n = strtoull(line, &end, 16);
  while (*end == ' ' || *end == '\t') end++;
  if (*end && *end != ';') return parse_fail(p, "bad chunk size");
  if (n > (1ULL << 48)) return parse_fail(p, "chunk too large");
  if (n == 0) {
    p->state = ST_TRAILER;
  } else {
    p->remaining = n;
    p->state = ST_CHUNK_DATA;
  }
  return LD_HTTP_MORE;
}

/* Appends to the line buffer up to LF. Returns 1 with a NUL-terminated line (CR and LF
 * stripped) when complete, 0 when more input is needed, -1 when the line is too long. */
static int take_line(ld_http_resp *p, const char *d, size_t len, size_t *i) {
  const char *lf = memchr(d + *i, '\n', len - *i);
  size_t n = lf ? (size_t)(lf - (d + *i)) : len - *i;
  if (p->line_len + n >= LD_HTTP_LINE_MAX) return -1;
  memcpy(p->line + p->line_len, d + *i, n);
  p->line_len += n;
  *i += n;
  if (!lf) return 0;
  (*i)++; /* the LF */
  if (p->line_len && p->line[p->line_len - 1] == '\r') p->line_len--;
  p->line[p->line_len] = 0;
  return 1;
}

ld_http_result ld_http_resp_feed(ld_http_resp *p, const char *d, size_t len, size_t *used) {
  size_t i = 0;
  ld_http_result r = LD_HTTP_MORE;
  while (i < len && r == LD_HTTP_MORE) {
    switch (p->state) {
    case ST_STATUS:
    case ST_HEADER:
    case ST_CHUNK_SIZE:
    case ST_TRAILER: {
      size_t before = i;
      int got = take_line(p, d, len, &i);
      if (p->state == ST_STATUS || p->state == ST_HEADER) p->header_bytes += i - before;
      if (got < 0) {
        r = parse_fail(p, "line too long");
        break;
      }
      if (got == 0) break;
      char *line = p->line;
      size_t ll = p->line_len;
      p->line_len = 0;
      if (p->state == ST_STATUS) {
        if (ll == 0 && p->status == 0 && p->header_bytes <= 2) continue; /* stray CRLF */
        r = parse_status(p, line);
        if (r == LD_HTTP_MORE) p->state = ST_HEADER;
      } else if (p->state == ST_HEADER) {
        r = ll == 0 ? headers_end(p) : parse_header(p, line);
      } else if (p->state == ST_CHUNK_SIZE) {
        r = parse_chunk_size(p, line);
      } else if (ll == 0) { /* ST_TRAILER: the empty line ends the message */
        p->state = ST_DONE;
        r = LD_HTTP_DONE;
      }
      break;
    }
    case ST_BODY_LEN:
    case ST_CHUNK_DATA: {
      size_t n = len - i;
      if (n > p->remaining) n = (size_t)p->remaining;
      if (capture(p, d + i, n) < 0) {
        r = parse_fail(p, "out of memory");
        break;
      }
      i += n;
      p->remaining -= n;
      if (p->remaining == 0) {
        if (p->state == ST_BODY_LEN) {
          p->state = ST_DONE;
          r = LD_HTTP_DONE;
        } else
          p->state = ST_CHUNK_CRLF;
      }
      break;
    }
    case ST_CHUNK_CRLF: {
      /* Exactly CRLF (a bare LF is tolerated); a byte split between reads is fine. */
      char c = d[i++];
      if (c == '\r' && p->line_len == 0) {
        p->line_len = 1;
        break;
      }
      if (c != '\n') {
        r = parse_fail(p, "missing CRLF after chunk");
        break;
      }
      p->line_len = 0;
      p->state = ST_CHUNK_SIZE;
      break;
    }
    case ST_BODY_CLOSE:
      if (capture(p, d + i, len - i) < 0) {
        r = parse_fail(p, "out of memory");
        break;
      }
      i = len;
      break;
    case ST_DONE:
      r = LD_HTTP_DONE;
      break;
    }
  }
  if (r == LD_HTTP_MORE && p->state == ST_DONE) r = LD_HTTP_DONE;
  *used = i;
  return r;
}

ld_http_result ld_http_resp_eof(ld_http_resp *p) {
  if (p->state == ST_DONE) return LD_HTTP_DONE;
  if (p->state == ST_BODY_CLOSE) {
    p->state = ST_DONE;
    return LD_HTTP_DONE;
  }
  if (p->state == ST_STATUS || p->state == ST_HEADER) return parse_fail(p, "connection closed in headers");
  return parse_fail(p, "connection closed before end of body");
}
