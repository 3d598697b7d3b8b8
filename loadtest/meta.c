/* Blocking one-shot HTTP exchange and metadata parsing (see meta.h). Runs once before the
 * measurement, so simplicity wins over speed; every wait is bounded by the timeout. */
#include "meta.h"
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for events on fd until the absolute deadline. 1 ready, 0 timed out, -1 error. */
static int wait_fd(int fd, short events, int64_t deadline) {
  for (;;) {
    int64_t left = deadline - now_ms();
    if (left <= 0) return 0;
    struct pollfd p = {.fd = fd, .events = events};
    int r = poll(&p, 1, (int)left);
    if (r < 0 && errno == EINTR) continue;
    return r < 0 ? -1 : r;
  }
}

int ld_http_exchange(const struct sockaddr *sa, socklen_t salen, const char *request, int timeout_ms,
                     ld_http_resp *resp, char *err, size_t errcap) {
  int64_t deadline = now_ms() + timeout_ms;
  int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    snprintf(err, errcap, "socket: %s", strerror(errno));
    return -1;
  }
  int rc = -1;
  if (connect(fd, sa, salen) < 0) {
    if (errno != EINPROGRESS) {
      snprintf(err, errcap, "connect: %s", strerror(errno));
      goto out;
    }
    if (wait_fd(fd, POLLOUT, deadline) <= 0) {
      snprintf(err, errcap, "connect: timed out");
      goto out;
    }
    int e = 0;
    socklen_t el = sizeof e;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el);
    if (e) {
      snprintf(err, errcap, "connect: %s", strerror(e));
      goto out;
    }
  }
  size_t len = strlen(request), off = 0;
  while (off < len) {
    ssize_t n = send(fd, request + off, len - off, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (wait_fd(fd, POLLOUT, deadline) <= 0) {
        snprintf(err, errcap, "send: timed out");
        goto out;
      }
      continue;
    }
    if (n < 0) {
      snprintf(err, errcap, "send: %s", strerror(errno));
      goto out;
    }
    off += (size_t)n;
  }
  ld_http_resp_reset(resp, false, true);
  char buf[16384];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (wait_fd(fd, POLLIN, deadline) <= 0) {
        snprintf(err, errcap, "no response within %d ms", timeout_ms);
        goto out;
      }
      continue;
    }
    if (n < 0) {
      snprintf(err, errcap, "read: %s", strerror(errno));
      goto out;
    }
    if (n == 0) {
      if (ld_http_resp_eof(resp) != LD_HTTP_DONE) {
        snprintf(err, errcap, "%s", resp->error);
        goto out;
      }
      break;
    }
    size_t used;
    ld_http_result r = ld_http_resp_feed(resp, buf, (size_t)n, &used);
    if (r == LD_HTTP_ERROR) {
      snprintf(err, errcap, "bad response: %s", resp->error);
      goto out;
    }
    if (r == LD_HTTP_DONE) break;
  }
  rc = 0;
out:
  close(fd);
  return rc;
}

int ld_meta_num_rows(const char *body, size_t len, uint64_t *out, char *err, size_t errcap) {
  json_error_t je;
  json_t *root = json_loadb(body, len, 0, &je);
  if (!root) {
    snprintf(err, errcap, "metadata is not JSON: %s", je.text);
    return -1;
  }
  int rc = -1;
  json_t *n = json_is_object(root) ? json_object_get(root, "num_rows") : NULL;
  if (!n || !json_is_integer(n) || json_integer_value(n) < 0) {
    snprintf(err, errcap, "metadata has no non-negative integer \"num_rows\"");
  } else {
    *out = (uint64_t)json_integer_value(n);
    rc = 0;
  }
  json_decref(root);
  return rc;
}
