/* Tasks on an event loop (loop.c): the internal half of lnc_loop (lance.h). A task is a
 * function running on its own stack on the loop's thread; where a synchronous take would
 * wait for the device, the task parks instead and the loop's thread goes on serving other
 * work until the task's completions arrive. Nothing here is thread-safe: a loop, its tasks
 * and their rings belong to the loop's thread. */
#ifndef LNC_IO_LOOP_H
#define LNC_IO_LOOP_H
#include <stdbool.h>
#include <stdint.h>

struct lnc_task;
struct lnc_ring;
struct io_uring;

/* The task running on this thread, or NULL outside any task (then nothing may park). */
struct lnc_task *lnc_task_current(void);
/* The current task's ring: a guest of the loop's io_uring (its reads are submitted with the
 * loop's next io_uring_enter and the task parks until they complete). NULL outside a task. */
struct lnc_ring *lnc_task_ring(void);
/* Switches back to the loop; returns once someone called lnc_task_wake on the task. */
void lnc_task_park(void);
/* Makes a parked task runnable: it resumes in the loop's current or next iteration. */
void lnc_task_wake(struct lnc_task *t);
/* Whether the current task can park on the loop's io_uring (false outside a task, and where
 * io_uring is unavailable). */
bool lnc_task_can_park(void);
/* Inside a task that can park: parks until fd is readable (a one-shot POLLIN on the loop's
 * io_uring) or timeout_ms passed (< 0: no timeout), and returns 0. Elsewhere returns -1 at
 * once: the caller waits by itself. How the object-store client (s3.c) waits for its sockets
 * on a loop: its epoll descriptor is the fd. */
int lnc_task_wait_fd(int fd, int timeout_ms);
/* Parks the current task for one loop iteration (lets the loop serve others, e.g. while
 * another task of this thread loads a file this one needs). No-op outside a task. */
void lnc_task_yield(void);

/* user_data values the loop owns (odd, below 4096): everything else that completes on the
 * loop's io_uring is a guest ring's read, routed by lnc_ring_route (ring.c). */
#define LNC_LOOP_TAG_WATCH(i)   ((uint64_t)(i) << 1 | 1u) /* a watched fd, i < 64 */
#define LNC_LOOP_TAG_IS_OWN(ud) (((ud)&1u) != 0)

/* ring.c: guest rings share a loop's io_uring. buf_slot >= 0: an empty slot of host's sparse
 * buffer table where the guest registers its pool (-1: reads into it are not fixed). */
int lnc_ring_new_guest(struct io_uring *host, int buf_slot, struct lnc_ring **out);
/* Routes one completion of host to the guest read it belongs to (ud = its user_data); wakes
 * the guest's task once what it waits for has arrived. */
void lnc_ring_route(uint64_t ud, int res);

#endif
