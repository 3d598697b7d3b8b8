/* One non-blocking HTTP/1.1 keep-alive client connection as a state machine driven by
 * epoll events: connect, write the request (resuming on EAGAIN), parse the response
 * incrementally, and tell the worker what happened. Scheduling is the worker's job. */
#ifndef LD_CONN_H
#define LD_CONN_H
#include "http_parse.h"
#include "sbuf.h"
#include "stats.h"
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

typedef enum { LD_CONN_CLOSED,
               LD_CONN_CONNECTING,
               LD_CONN_IDLE,
               LD_CONN_BUSY } ld_conn_state;

typedef enum {
  LD_CEV_NONE,           /* nothing for the worker yet */
  LD_CEV_CONNECTED,      /* now IDLE */
  LD_CEV_CONNECT_FAILED, /* now CLOSED */
  LD_CEV_RESPONSE,       /* c->resp holds a complete response; conn IDLE (or CLOSED if the server closes) */
  LD_CEV_RETRY,          /* a reused connection was dropped before any answer: resend; now CLOSED */
  LD_CEV_ERROR,          /* c->err is set; now CLOSED */
  LD_CEV_IDLE_CLOSED,    /* the server closed an idle connection; now CLOSED */
} ld_conn_event;

typedef struct ld_conn {
  int fd;
  int epfd;
  ld_conn_state state;
  uint32_t events; /* currently registered epoll mask */
  ld_sbuf out;     /* request being written */
  size_t out_off;
  ld_http_resp resp;
  uint64_t served; /* responses on the current TCP connection */
  ld_err_kind err;
  int sys_errno;     /* errno behind the last failure, for messages */
  uint64_t bytes_in; /* of the current response, headers included */
  /* Worker bookkeeping for the outstanding request. */
  uint64_t t_origin; /* latency origin: intended (open loop) or actual send time, ns */
  uint64_t deadline; /* connect or response deadline, ns; 0 = none */
  uint64_t retry_at; /* CLOSED: do not reconnect before this, ns */
  unsigned backoff_ms;
  bool retried;
  bool resend; /* CLOSED after LD_CEV_RETRY: send c->out again once reconnected */
  bool post;
  int verify_slot;   /* -1 unless this request's body is kept for --verify */
  uint64_t *ids;     /* ids of the outstanding request (batch entries) */
  uint32_t index;    /* position in the worker's array (epoll user data) */
  uint32_t idle_pos; /* bookkeeping for the worker's idle stack */
} ld_conn;

void ld_conn_init(ld_conn *c, int epfd, uint32_t index);
void ld_conn_destroy(ld_conn *c);
/* Starts a non-blocking connect. Returns LD_CEV_NONE (in progress), LD_CEV_CONNECTED or
 * LD_CEV_CONNECT_FAILED. */
ld_conn_event ld_conn_connect(ld_conn *c, const struct sockaddr *sa, socklen_t len);
void ld_conn_close(ld_conn *c);
/* Sends c->out (already filled) on an IDLE connection; the conn becomes BUSY. Returns
 * LD_CEV_NONE, or LD_CEV_RETRY / LD_CEV_ERROR when the write fails at once. */
ld_conn_event ld_conn_send(ld_conn *c, bool capture);
/* Handles epoll readiness; rbuf is the thread's scratch read buffer. */
ld_conn_event ld_conn_on_event(ld_conn *c, uint32_t events, char *rbuf, size_t rcap);

#endif
