/* systemd integration through libsystemd (Debian's libsystemd-dev; why: the service manager's
 * own client for readiness, the watchdog and socket activation, which get subtle details right
 * — abstract sockets, $LISTEN_PID checks, credentials — that a hand-written copy had to
 * re-derive): sd_notify for READY/RELOADING/STOPPING/WATCHDOG, sd_watchdog_enabled for the
 * watchdog interval, sd_listen_fds for sockets passed by a .socket unit. Silent when not run by
 * systemd; failures are logged, never fatal. */
#include "lanced.h"
#include "server.h"
#include <string.h>
#include <systemd/sd-daemon.h>

void ld_notify(const char *state) {
  int rc = sd_notify(0, state);
  if (rc < 0) ld_log(LD_LOG_WARN, "sd_notify %.40s: %s", state, strerror(-rc));
}

uint64_t ld_watchdog_usec(void) {
  uint64_t usec = 0;
  return sd_watchdog_enabled(0, &usec) > 0 ? usec : 0;
}

int ld_listen_fds(int *fds, int max) {
  int n = sd_listen_fds(1); /* unsets $LISTEN_FDS: children of ours never see them */
  if (n <= 0) return 0;
  if (n > max) n = max;
  for (int i = 0; i < n; i++) fds[i] = SD_LISTEN_FDS_START + i;
  return n;
}
