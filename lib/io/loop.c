/* lnc_loop (lance.h): one io_uring per thread that carries both the thread's device reads and
 * its readiness waits, and tasks — functions on stacks of their own — that park where a
 * synchronous take would block.
 *
 * Why tasks rather than a take rewritten as a state machine: a take reads in rounds whose
 * shape depends on what the previous round returned (list offsets, then binary ends, then
 * bytes; 2.0's walks; a file's search cache on first use), written as plain calls in a dozen
 * places. A task keeps that code as it is: only the ring's wait (ring.c wait_guest) changes,
 * from io_uring_enter to a park. A switch costs two swapcontext calls, a fraction of one
 * system call's price, and removes the hand-off to a take thread (a futex wake, a context
 * switch, an eventfd to resume the connection) that direct reads paid before.
 *
 * One iteration (lnc_loop_wait): arm a one-shot POLLIN for each watched descriptor not
 * already armed, submit everything queued — the reads of every task parked since the last
 * call — and wait, in one io_uring_enter; route completions (a guest's read to its ring, which
 * wakes its task once what it waits for is in; a watch to the caller's ready mask; a sleep
 * to its task); then resume the runnable tasks. Ownership: the loop owns its tasks and their
 * stacks and rings; a task's argument stays the caller's. */
#include "../lance.h"
#include "loop.h"
#include "ring.h"
#include "../util/error.h"
#include "../util/assert.h"
#include <errno.h>
#include <liburing.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>

#if defined(__SANITIZE_ADDRESS__)
#define LOOP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LOOP_ASAN 1
#endif
#endif
#ifdef LOOP_ASAN
#include <sanitizer/common_interface_defs.h>
#define STACK_BYTES (1u << 20) /* ASan's redzones and fake frames need room */
#else
#define STACK_BYTES (256u << 10)
#endif
#define GUARD_BYTES   4096u /* one page below each stack: an overflow faults, never corrupts */
#define MAX_WATCH     64    /* watched descriptors: a bit each in the ready mask */
#define SLEEP_TAG_MIN 4096u /* odd user_data at or above this: a sleeping task (its address | 1),
                               or (address | 3) a struct fd_wait */

/* The switch itself. glibc's swapcontext saves and restores the signal mask with a system
 * call each time (five per request: make, enter, park, resume, end); nothing here changes
 * the mask, so on x86-64 a switch is a few register moves (the System V ABI's callee-saved
 * registers, the x87 control word and MXCSR, as Boost.Context saves). Elsewhere, ucontext. */
#if defined(__x86_64__)
#define LOOP_ASM_SWITCH 1
/* Saves the callee-saved state on the current stack, stores its top in *from, continues on
 * `to` (a stack top saved by this function, or made by ctx_make). */
void lnc_loop_ctx_switch(void **from, void *to);
__asm__(".text\n"
        ".globl lnc_loop_ctx_switch\n"
        ".hidden lnc_loop_ctx_switch\n"
        ".type lnc_loop_ctx_switch,@function\n"
        "lnc_loop_ctx_switch:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  subq $16, %rsp\n  stmxcsr 8(%rsp)\n  fnstcw (%rsp)\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  fldcw (%rsp)\n  ldmxcsr 8(%rsp)\n  addq $16, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n"
        ".size lnc_loop_ctx_switch, .-lnc_loop_ctx_switch\n");
#define X87_CW_DEFAULT 0x037Fu /* the x87 control word at process start (ABI default) */
#define MXCSR_DEFAULT  0x1F80u /* MXCSR at process start: all exceptions masked, round nearest */
#endif

struct lnc_task {
#ifdef LOOP_ASM_SWITCH
  void *sp; /* saved stack top while not running */
#else
  ucontext_t ctx;
#endif
  uint8_t *map; /* guard page + stack (mmap) */
  struct lnc_loop *loop;
  void (*fn)(void *);
  void *arg;
  struct lnc_ring *ring; /* guest of the loop's io_uring; kept across uses */
  struct lnc_task *next; /* run queue or free list */
  bool queued;
  struct __kernel_timespec sleep_ts;
#ifdef LOOP_ASAN
  void *fake_stack;
#endif
};

struct lnc_loop {
  struct io_uring ring;
  bool uring;     /* false: io_uring unavailable, reads go through pread */
  bool buf_slots; /* a sparse buffer table of max_tasks slots: task i registers its pool in slot i */
#ifdef LOOP_ASM_SWITCH
  void *main_sp;
#else
  ucontext_t main_ctx;
#endif
  struct lnc_task *cur; /* running task, NULL on the loop's own stack */
  struct lnc_task *runq, *runq_tail, *free_tasks;
  unsigned live, max_tasks;
  bool armed[MAX_WATCH]; /* a POLLIN is in flight for watch i */
  uint64_t ready;        /* watches that fired since the caller last looked */
  struct lnc_loop_stats stats;
#ifdef LOOP_ASAN
  void *main_fake;
  const void *main_bottom;
  size_t main_size;
#endif
};

static __thread struct lnc_loop *this_loop; /* the loop whose task runs on this thread */

struct lnc_task *lnc_task_current(void) {
  return this_loop ? this_loop->cur : NULL;
}

struct lnc_ring *lnc_task_ring(void) {
  struct lnc_task *t = lnc_task_current();
  return t ? t->ring : NULL;
}

/* ---- switching ------------------------------------------------------------------------- */
static void switch_to_task(struct lnc_loop *l, struct lnc_task *t) {
  LNC_ASSERT(l->cur == NULL);
  l->cur = t;
  this_loop = l;
#ifdef LOOP_ASAN
  __sanitizer_start_switch_fiber(&l->main_fake, t->map + GUARD_BYTES, STACK_BYTES);
#endif
#ifdef LOOP_ASM_SWITCH
  lnc_loop_ctx_switch(&l->main_sp, t->sp);
#else
  swapcontext(&l->main_ctx, &t->ctx);
#endif
#ifdef LOOP_ASAN
  __sanitizer_finish_switch_fiber(l->main_fake, NULL, NULL);
#endif
  l->cur = NULL;
}

/* From the running task back to the loop; `ending` = the task will never resume on this use. */
static void switch_to_loop(struct lnc_task *t, bool ending) {
  struct lnc_loop *l = t->loop;
#ifdef LOOP_ASAN
  __sanitizer_start_switch_fiber(ending ? NULL : &t->fake_stack, l->main_bottom, l->main_size);
#else
  (void)ending;
#endif
#ifdef LOOP_ASM_SWITCH
  lnc_loop_ctx_switch(&t->sp, l->main_sp);
#else
  swapcontext(&t->ctx, &l->main_ctx);
#endif
#ifdef LOOP_ASAN
  __sanitizer_finish_switch_fiber(t->fake_stack, &l->main_bottom, &l->main_size);
#endif
}

static void trampoline(void) {
  struct lnc_task *t = this_loop->cur;
#ifdef LOOP_ASAN
  __sanitizer_finish_switch_fiber(NULL, &t->loop->main_bottom, &t->loop->main_size);
#endif
  t->fn(t->arg);
  /* Back to the loop for good on this use; lnc_loop_spawn's caller or the loop recycles
   * the task (its stack is not in use any more once the switch is made). */
  t->fn = NULL;
  switch_to_loop(t, true);
}

void lnc_task_park(void) {
  struct lnc_task *t = lnc_task_current();
  LNC_ASSERT(t != NULL);
  if (!t) return;
  t->loop->stats.parks++;
  switch_to_loop(t, false);
}

void lnc_task_wake(struct lnc_task *t) {
  struct lnc_loop *l = t->loop;
  if (t->queued) return;
  t->queued = true;
  t->next = NULL;
  if (l->runq_tail)
    l->runq_tail->next = t;
  else
    l->runq = t;
  l->runq_tail = t;
}

bool lnc_task_can_park(void) {
  struct lnc_task *t = lnc_task_current();
  return t && t->loop->uring;
}

/* One lnc_task_wait_fd: a POLLIN linked to a timeout, so exactly two completions arrive (the
 * one that fired and the other, cancelled); the first wakes the task, the second frees this. */
struct fd_wait {
  struct lnc_task *task;
  struct __kernel_timespec ts;
  int pending;
};
#define FD_WAIT_TAG 3u

int lnc_task_wait_fd(int fd, int timeout_ms) {
  if (!lnc_task_can_park()) return -1;
  struct lnc_task *t = lnc_task_current();
  struct lnc_loop *l = t->loop;
  struct fd_wait *w = malloc(sizeof *w);
  if (!w) return -1;
  bool timed = timeout_ms >= 0;
  *w = (struct fd_wait){.task = t, .pending = timed ? 2 : 1, .ts = {.tv_sec = timed ? timeout_ms / 1000 : 0, .tv_nsec = timed ? (long long)(timeout_ms % 1000) * 1000000 : 0}};
  /* Both SQEs or neither: a poll without its timeout could wait forever. */
  if (io_uring_sq_space_left(&l->ring) < 2) io_uring_submit(&l->ring);
  if (io_uring_sq_space_left(&l->ring) < 2) {
    free(w);
    return -1;
  }
  struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);
  io_uring_prep_poll_add(sqe, fd, POLLIN);
  io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)w | FD_WAIT_TAG);
  if (timed) {
    sqe->flags |= IOSQE_IO_LINK;
    sqe = io_uring_get_sqe(&l->ring);
    io_uring_prep_link_timeout(sqe, &w->ts, 0);
    io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)w | FD_WAIT_TAG);
  }
  lnc_task_park();
  return 0;
}

static void fd_wait_done(struct fd_wait *w) {
  if (w->task) lnc_task_wake(w->task);
  w->task = NULL; /* the task may be gone by the second completion */
  if (--w->pending == 0) free(w);
}

void lnc_task_yield(void) {
  struct lnc_task *t = lnc_task_current();
  if (!t) return;
  lnc_task_wake(t);
  lnc_task_park();
}

/* ---- tasks ---------------------------------------------------------------------------- */
static void task_free(struct lnc_task *t) {
  lnc_ring_free(t->ring);
  munmap(t->map, GUARD_BYTES + STACK_BYTES);
  free(t);
}

static int task_get(struct lnc_loop *l, struct lnc_task **out, struct lnc_error *err) {
  struct lnc_task *t = l->free_tasks;
  if (t) {
    l->free_tasks = t->next;
    *out = t;
    return 0;
  }
  if (l->live >= l->max_tasks)
    return lnc_errf(err, LNC_ELIMIT, "loop: %u tasks already in flight", l->max_tasks);
  t = calloc(1, sizeof *t);
  if (!t) return lnc_errf(err, LNC_ENOMEM, "loop: out of memory");
  t->map = mmap(NULL, GUARD_BYTES + STACK_BYTES, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (t->map == MAP_FAILED) {
    free(t);
    return lnc_errf(err, LNC_ENOMEM, "loop: cannot map a task stack");
  }
  mprotect(t->map, GUARD_BYTES, PROT_NONE);
  /* Tasks are only freed with the loop, so live numbers them: slot `live` is this one's. */
  int rc = lnc_ring_new_guest(l->uring ? &l->ring : NULL, l->buf_slots ? (int)l->live : -1, &t->ring);
  if (rc) {
    munmap(t->map, GUARD_BYTES + STACK_BYTES);
    free(t);
    return lnc_errf(err, rc, "loop: out of memory for a task's ring");
  }
  t->loop = l;
  l->live++;
  *out = t;
  return 0;
}

static void task_put(struct lnc_loop *l, struct lnc_task *t) {
  t->next = l->free_tasks;
  l->free_tasks = t;
}

/* Prepares t's stack so that switching to it enters trampoline() at its top. */
static void ctx_make(struct lnc_task *t) {
#ifdef LOOP_ASM_SWITCH
  /* From the 16-aligned top down: a zero (trampoline's return address: it never returns),
   * trampoline's address (lnc_loop_ctx_switch's `ret` goes there, leaving rsp 8 mod 16 as a
   * function entry expects), six callee-saved registers, then the x87 control word and
   * MXCSR, as lnc_loop_ctx_switch restores them. */
  uint64_t *top = (uint64_t *)(t->map + GUARD_BYTES + STACK_BYTES);
  uint64_t *sp = top - 10;
  memset(sp, 0, 10 * sizeof *sp);
  sp[0] = X87_CW_DEFAULT;
  sp[1] = MXCSR_DEFAULT;
  sp[8] = (uint64_t)(uintptr_t)trampoline;
  t->sp = sp;
#else
  getcontext(&t->ctx);
  t->ctx.uc_stack.ss_sp = t->map + GUARD_BYTES;
  t->ctx.uc_stack.ss_size = STACK_BYTES;
  t->ctx.uc_link = NULL;
  makecontext(&t->ctx, trampoline, 0);
#endif
}

int lnc_loop_spawn(lnc_loop *l, void (*fn)(void *arg), void *arg, int *parked,
                   struct lnc_error *err) {
  if (!l || !fn || !parked) return lnc_errf(err, LNC_EINVAL, "lnc_loop_spawn: NULL argument");
  if (l->cur) return lnc_errf(err, LNC_EINVAL, "lnc_loop_spawn: called from inside a task");
  struct lnc_task *t = NULL;
  int rc = task_get(l, &t, err);
  if (rc) return rc;
  t->fn = fn;
  t->arg = arg;
  t->queued = false;
  ctx_make(t);
  l->stats.tasks++;
  switch_to_task(l, t);
  *parked = t->fn != NULL;
  if (!*parked)
    task_put(l, t);
  else
    l->stats.parked_tasks++;
  return 0;
}

/* ---- one iteration -------------------------------------------------------------------- */
static void arm_watches(struct lnc_loop *l, const int *fds, int nfds) {
  for (int i = 0; i < nfds && i < MAX_WATCH; i++) {
    if (l->armed[i] || fds[i] < 0) continue;
    struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);
    if (!sqe) {
      io_uring_submit(&l->ring);
      sqe = io_uring_get_sqe(&l->ring);
      if (!sqe) return; /* armed on the next call */
    }
    io_uring_prep_poll_add(sqe, fds[i], POLLIN);
    io_uring_sqe_set_data64(sqe, LNC_LOOP_TAG_WATCH(i));
    l->armed[i] = true;
  }
}

static void route(struct lnc_loop *l, uint64_t ud, int res) {
  if (!LNC_LOOP_TAG_IS_OWN(ud)) {
    lnc_ring_route(ud, res);
  } else if (ud >= SLEEP_TAG_MIN && (ud & 3u) == FD_WAIT_TAG) {
    fd_wait_done((struct fd_wait *)(uintptr_t)(ud & ~(uint64_t)3));
  } else if (ud >= SLEEP_TAG_MIN) {
    lnc_task_wake((struct lnc_task *)(uintptr_t)(ud & ~(uint64_t)1));
  } else {
    unsigned i = (unsigned)(ud >> 1);
    l->armed[i] = false;
    l->ready |= (uint64_t)1 << i;
  }
}

/* Without io_uring: poll(2) for the watches; tasks never park (their reads are pread). */
static int wait_poll(struct lnc_loop *l, const int *fds, int nfds, int timeout_ms) {
  struct pollfd pf[MAX_WATCH];
  int n = nfds < MAX_WATCH ? nfds : MAX_WATCH;
  for (int i = 0; i < n; i++) pf[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
  int r = poll(pf, (nfds_t)n, l->runq ? 0 : timeout_ms);
  for (int i = 0; r > 0 && i < n; i++)
    if (pf[i].revents) l->ready |= (uint64_t)1 << i;
  return 0;
}

static void run_ready(struct lnc_loop *l) {
  /* Only the tasks runnable now: one that yields goes to the next iteration. */
  struct lnc_task *t = l->runq;
  l->runq = l->runq_tail = NULL;
  while (t) {
    struct lnc_task *next = t->next;
    t->queued = false;
    switch_to_task(l, t);
    if (!t->fn) task_put(l, t);
    t = next;
  }
}

int lnc_loop_wait(lnc_loop *l, const int *fds, int nfds, int timeout_ms, uint64_t *ready,
                  struct lnc_error *err) {
  if (!l || nfds < 0 || nfds > MAX_WATCH || (nfds && !fds))
    return lnc_errf(err, LNC_EINVAL, "lnc_loop_wait: bad arguments");
  l->stats.waits++;
  if (!l->uring) {
    wait_poll(l, fds, nfds, timeout_ms);
  } else {
    arm_watches(l, fds, nfds);
    struct __kernel_timespec ts = {.tv_sec = timeout_ms / 1000,
                                   .tv_nsec = (long long)(timeout_ms % 1000) * 1000000};
    if (l->runq) ts.tv_sec = ts.tv_nsec = 0;
    unsigned queued = io_uring_sq_ready(&l->ring);
    struct io_uring_cqe *cqe;
    /* A wait that may not block (the caller has work due now, or tasks are runnable) with
     * nothing to submit needs no system call: completions are posted to the CQ ring as they
     * arrive, and what is there is reaped below. It is one iteration in two at 4 connections
     * (libmicrohttpd asks for another turn after a connection resumes), each an
     * io_uring_enter that could only time out. */
    if (queued || (timeout_ms != 0 && !l->runq)) {
      int s = io_uring_submit_and_wait_timeout(&l->ring, &cqe, 1, timeout_ms < 0 && !l->runq ? NULL : &ts, NULL);
      l->stats.enters++;
      l->stats.submitted += queued;
      if (s < 0 && s != -ETIME && s != -EINTR && s != -EAGAIN && s != -EBUSY)
        return lnc_errf(err, LNC_EIO, "io_uring_enter failed: %s", strerror(-s));
    }
    unsigned head, seen = 0;
    io_uring_for_each_cqe(&l->ring, head, cqe) {
      route(l, io_uring_cqe_get_data64(cqe), cqe->res);
      seen++;
    }
    io_uring_cq_advance(&l->ring, seen);
    l->stats.completions += seen;
  }
  run_ready(l);
  if (ready) *ready = l->ready;
  l->ready = 0;
  return 0;
}

void lnc_loop_sleep(unsigned ms) {
  struct lnc_task *t = lnc_task_current();
  if (!t || !t->loop->uring) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    return;
  }
  struct lnc_loop *l = t->loop;
  t->sleep_ts = (struct __kernel_timespec){.tv_sec = ms / 1000, .tv_nsec = (long long)(ms % 1000) * 1000000};
  struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);
  if (!sqe && io_uring_submit(&l->ring) >= 0) sqe = io_uring_get_sqe(&l->ring);
  if (!sqe) return;
  io_uring_prep_timeout(sqe, &t->sleep_ts, 0, 0);
  io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)t | 1u);
  lnc_task_park();
}

/* ---- life ------------------------------------------------------------------------------ */
int lnc_loop_new(unsigned depth, lnc_loop **out, struct lnc_error *err) {
  if (!out) return lnc_errf(err, LNC_EINVAL, "lnc_loop_new: NULL argument");
  struct lnc_loop *l = calloc(1, sizeof *l);
  if (!l) return lnc_errf(err, LNC_ENOMEM, "loop: out of memory");
  if (!depth) depth = 1024;
  /* Reads of many parked tasks share the SQ; the CQ (twice the SQ) takes their completions
   * and the kernel keeps any overflow (IORING_FEAT_NODROP) until the next reap. */
  l->max_tasks = 4096;
  const char *pr = getenv("LNC_RING_PREAD");
  if (!(pr && *pr && strcmp(pr, "0"))) l->uring = io_uring_queue_init(depth, &l->ring, 0) == 0;
  if (l->uring) l->buf_slots = io_uring_register_buffers_sparse(&l->ring, l->max_tasks) == 0;
  *out = l;
  return 0;
}

void lnc_loop_free(lnc_loop *l) {
  if (!l) return;
  LNC_ASSERT(l->cur == NULL);
  /* Parked tasks (a shutdown that did not wait for them) are not resumed: their stacks are
   * released with the ring, which cancels what they had in flight. */
  if (l->uring) io_uring_queue_exit(&l->ring);
  for (struct lnc_task *t = l->free_tasks, *n; t; t = n) {
    n = t->next;
    task_free(t);
  }
  if (this_loop == l) this_loop = NULL;
  free(l);
}

bool lnc_loop_uses_uring(const lnc_loop *l) { return l && l->uring; }

void lnc_loop_get_stats(const lnc_loop *l, struct lnc_loop_stats *out) {
  if (!out) return;
  if (!l) {
    memset(out, 0, sizeof *out);
    return;
  }
  *out = l->stats;
  out->tasks_live = l->live;
}
