/* lnc_read_probe (lance.h): the device's own rate for the reads a take makes, through the
 * reader the takes use, so a tool can put a take's rows/s beside what the disk allows
 * (`lancectl bench`'s device-limit ratio) without reaching below the public API. */
#include "../lance.h"
#include "ring.h"
#include "../util/clock.h"
#include "../util/error.h"
#include <stdlib.h>

/* Reads are whole blocks of this size, at block-aligned offsets, as a device benchmark
 * reads (and as the ring's O_DIRECT reads are). */
#define PROBE_BLOCK 4096u

/* One batch of depth random reads into buf (depth slots of len + one block). */
static void probe_plan(const struct lnc_probe *p, uint64_t *seed, uint8_t *buf, struct lnc_read *reads) {
  uint64_t span = p->size > p->len ? p->size - p->len : 1;
  for (unsigned i = 0; i < p->depth; i++) {
    uint64_t off = (lnc_xorshift64(seed) % span) & ~(uint64_t)(PROBE_BLOCK - 1);
    bool longer = (double)(lnc_xorshift64(seed) % 1000000) / 1e6 < p->p_long;
    uint64_t len = p->len + (longer ? PROBE_BLOCK : 0);
    if (len > p->size) len = p->size; /* a file smaller than the reads */
    if (off + len > p->size) off = (p->size - len) & ~(uint64_t)(PROBE_BLOCK - 1);
    reads[i] = (struct lnc_read){off, len, buf + (uint64_t)i * (p->len + PROBE_BLOCK)};
  }
}

int lnc_read_probe(const struct lnc_probe *p, uint64_t *reads_done, struct lnc_error *err) {
  if (!p || !reads_done || p->depth == 0 || p->len == 0 || p->depth > 4096 || p->len > (64u << 20))
    return lnc_errf(err, LNC_EINVAL, "lnc_read_probe: needs 1..4096 reads of 1 byte..64 MiB");
  *reads_done = 0;
  struct lnc_ring_config cfg;
  lnc_ring_config_default(&cfg);
  struct lnc_ring *ring;
  int rc = lnc_ring_new(&cfg, &ring, err);
  if (rc) return rc;
  struct lnc_read *reads = calloc(p->depth, sizeof *reads);
  uint8_t *buf = malloc((size_t)p->depth * (p->len + PROBE_BLOCK));
  if (!reads || !buf) rc = lnc_errf(err, LNC_ENOMEM, "lnc_read_probe: out of memory");
  uint64_t seed = p->seed ? p->seed : 1;
  double deadline = lnc_now_s() + p->seconds;
  while (!rc && lnc_now_s() < deadline) {
    probe_plan(p, &seed, buf, reads);
    struct lnc_take_stats st = {0};
    rc = lnc_ring_read_batch(ring, p->fd, p->direct, p->size, reads, p->depth, &st, err);
    *reads_done += st.reads;
  }
  free(reads);
  free(buf);
  lnc_ring_free(ring);
  return rc;
}
