/* sd_notify(3) without libsystemd: one datagram to $NOTIFY_SOCKET ("READY=1", "STOPPING=1",
 * "RELOADING=1\nMONOTONIC_USEC=..."). A leading '@' names an abstract socket. Silent when
 * not run by systemd; failures are logged, never fatal. */
#include "lanced.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

void ld_notify(const char *state) {
  const char *path = getenv("NOTIFY_SOCKET");
  if (!path || !*path) return;
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  size_t n = strlen(path);
  if ((path[0] != '/' && path[0] != '@') || n >= sizeof sa.sun_path) {
    ld_log(LD_LOG_WARN, "NOTIFY_SOCKET '%s' is not a unix socket path", path);
    return;
  }
  memcpy(sa.sun_path, path, n);
  if (path[0] == '@') sa.sun_path[0] = 0;
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
  if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, len) < 0)
    ld_log(LD_LOG_WARN, "sd_notify %s: %s", state, strerror(errno));
  close(fd);
}
