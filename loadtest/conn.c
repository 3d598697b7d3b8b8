/* Client connection state machine (see conn.h). Level-triggered epoll: EPOLLIN is always
 * armed (so a server closing an idle keep-alive is noticed), EPOLLOUT only while connecting
 * or while a request did not fit in the socket buffer. */
#include "conn.h"
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

void ld_conn_init(ld_conn *c, int epfd, uint32_t index) {
  memset(c, 0, sizeof *c);
  c->fd = -1;
  c->epfd = epfd;
  c->index = index;
  c->verify_slot = -1;
  ld_http_resp_reset(&c->resp, false, false);
}

void ld_conn_destroy(ld_conn *c) {
  ld_conn_close(c);
  ld_sbuf_free(&c->out);
  ld_http_resp_free(&c->resp);
}

static void set_events(ld_conn *c, uint32_t ev) {
  if (c->events == ev) return;
  struct epoll_event e = {.events = ev, .data.u32 = c->index};
  epoll_ctl(c->epfd, EPOLL_CTL_MOD, c->fd, &e);
  c->events = ev;
}

void ld_conn_close(ld_conn *c) {
  if (c->fd >= 0) {
    epoll_ctl(c->epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
  }
  c->fd = -1;
  c->state = LD_CONN_CLOSED;
  c->events = 0;
  c->served = 0;
}

static ld_conn_event conn_fail(ld_conn *c, ld_err_kind kind, int err) {
  c->err = kind;
  c->sys_errno = err;
  ld_conn_close(c);
  return kind == LD_ERR_CONNECT ? LD_CEV_CONNECT_FAILED : LD_CEV_ERROR;
}

/* The server may close a keep-alive connection just as we reuse it (RFC 9112 9.3.1); a
 * request that got no byte of answer on a reused connection is safely resent once. */
static ld_conn_event io_failure(ld_conn *c, ld_err_kind kind, int err) {
  if (c->served > 0 && !c->retried && ld_http_resp_untouched(&c->resp)) {
    c->sys_errno = err;
    ld_conn_close(c);
    return LD_CEV_RETRY;
  }
  return conn_fail(c, kind, err);
}

ld_conn_event ld_conn_connect(ld_conn *c, const struct sockaddr *sa, socklen_t len) {
  ld_conn_close(c);
  int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return conn_fail(c, LD_ERR_CONNECT, errno);
  int one = 1;
  /* Requests are written whole; Nagle would only delay the POST bodies that span segments. */
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  c->fd = fd;
  int r = connect(fd, sa, len);
  if (r < 0 && errno != EINPROGRESS) {
    int e = errno;
    close(fd);
    c->fd = -1;
    return conn_fail(c, LD_ERR_CONNECT, e);
  }
  c->events = EPOLLIN | (r < 0 ? EPOLLOUT : 0);
  struct epoll_event e = {.events = c->events, .data.u32 = c->index};
  if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd, &e) < 0) {
    int err = errno;
    close(fd);
    c->fd = -1;
    return conn_fail(c, LD_ERR_CONNECT, err);
  }
  if (r == 0) {
    c->state = LD_CONN_IDLE;
    return LD_CEV_CONNECTED;
  }
  c->state = LD_CONN_CONNECTING;
  return LD_CEV_NONE;
}

static ld_conn_event flush_out(ld_conn *c) {
  while (c->out_off < c->out.len) {
    ssize_t n = send(c->fd, c->out.p + c->out_off, c->out.len - c->out_off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        set_events(c, EPOLLIN | EPOLLOUT);
        return LD_CEV_NONE;
      }
      return io_failure(c, LD_ERR_IO, errno);
    }
    c->out_off += (size_t)n;
  }
  set_events(c, EPOLLIN);
  return LD_CEV_NONE;
}

ld_conn_event ld_conn_send(ld_conn *c, bool capture) {
  c->state = LD_CONN_BUSY;
  c->out_off = 0;
  c->bytes_in = 0;
  ld_http_resp_reset(&c->resp, false, capture);
  return flush_out(c);
}

static ld_conn_event on_readable(ld_conn *c, char *rbuf, size_t rcap) {
  /* Bounded: a fast server cannot keep one connection in this loop forever. */
  for (int rounds = 0; rounds < 64; rounds++) {
    ssize_t n = read(c->fd, rbuf, rcap);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return LD_CEV_NONE;
      if (c->state != LD_CONN_BUSY) {
        ld_conn_close(c);
        return LD_CEV_IDLE_CLOSED;
      }
      return io_failure(c, LD_ERR_IO, errno);
    }
    if (n == 0) {
      if (c->state != LD_CONN_BUSY) {
        ld_conn_close(c);
        return LD_CEV_IDLE_CLOSED;
      }
      if (ld_http_resp_untouched(&c->resp)) return io_failure(c, LD_ERR_SHORT_BODY, 0);
      if (ld_http_resp_eof(&c->resp) == LD_HTTP_DONE) {
        c->served++;
        ld_conn_close(c); /* the response was delimited by the close */
        return LD_CEV_RESPONSE;
      }
      return conn_fail(c, LD_ERR_SHORT_BODY, 0);
    }
    if (c->state != LD_CONN_BUSY) return conn_fail(c, LD_ERR_PARSE, 0); /* unsolicited bytes */
    c->bytes_in += (uint64_t)n;
    size_t used;
    ld_http_result r = ld_http_resp_feed(&c->resp, rbuf, (size_t)n, &used);
    if (r == LD_HTTP_ERROR) return conn_fail(c, LD_ERR_PARSE, 0);
    if (r == LD_HTTP_DONE) {
      /* One request in flight per connection, so anything past the response is garbage. */
      if (used != (size_t)n) return conn_fail(c, LD_ERR_PARSE, 0);
      c->served++;
      /* A server may answer (413, 400) before reading all of a request: the rest of it
       * would be taken as the next request, so such a connection is not reused. */
      if (c->resp.close || c->out_off < c->out.len)
        ld_conn_close(c);
      else {
        c->state = LD_CONN_IDLE;
        set_events(c, EPOLLIN);
      }
      return LD_CEV_RESPONSE;
    }
    if ((size_t)n < rcap) return LD_CEV_NONE; /* drained; level-triggered epoll calls back */
  }
  return LD_CEV_NONE;
}

ld_conn_event ld_conn_on_event(ld_conn *c, uint32_t events, char *rbuf, size_t rcap) {
  if (c->fd < 0) return LD_CEV_NONE; /* stale event for a connection closed this round */
  if (c->state == LD_CONN_CONNECTING) {
    if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) return LD_CEV_NONE;
    int err = 0;
    socklen_t el = sizeof err;
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0) err = errno;
    if (err) return conn_fail(c, LD_ERR_CONNECT, err);
    c->state = LD_CONN_IDLE;
    set_events(c, EPOLLIN);
    return LD_CEV_CONNECTED;
  }
  if (c->state == LD_CONN_BUSY && (events & EPOLLOUT) && c->out_off < c->out.len) {
    ld_conn_event ev = flush_out(c);
    if (ev != LD_CEV_NONE) return ev;
  }
  if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) return on_readable(c, rbuf, rcap);
  return LD_CEV_NONE;
}
