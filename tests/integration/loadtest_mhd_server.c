/* Minimal static responder on 127.0.0.1 (libmicrohttpd, epoll, thread pool) for
 * loadtest/compare-wrk.sh: fast enough that the numbers measure the load generators
 * rather than the server. Answers every GET with the same 64-byte body; prints its port. */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct MHD_Response *resp;

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *data, size_t *size, void **state) {
  (void)cls;
  (void)url;
  (void)method;
  (void)version;
  (void)data;
  (void)size;
  /* Answering on the first call (headers only) is an "early response" that makes MHD close
   * the connection; the second call comes once the request is complete. */
  static int marker;
  if (!*state) {
    *state = &marker;
    return MHD_YES;
  }
  return MHD_queue_response(c, MHD_HTTP_OK, resp);
}

int main(int argc, char **argv) {
  unsigned threads = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
  unsigned seconds = argc > 2 ? (unsigned)atoi(argv[2]) : 120; /* bounded lifetime */
  static const char body[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n";
  resp = MHD_create_response_from_buffer(sizeof body - 1, (void *)body, MHD_RESPMEM_PERSISTENT);
  MHD_add_response_header(resp, "Content-Type", "text/plain");
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD, 0, NULL, NULL, answer, NULL,
                                          MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_THREAD_POOL_SIZE,
                                          threads, MHD_OPTION_CONNECTION_LIMIT, 10000u, MHD_OPTION_END);
  if (!d) {
    fprintf(stderr, "cannot start server\n");
    return 1;
  }
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
  printf("%u\n", info ? info->port : 0);
  fflush(stdout);
  sleep(seconds);
  MHD_stop_daemon(d);
  MHD_destroy_response(resp);
  return 0;
}
