/* General compression (LZ4 / ZSTD) of Lance buffers, framed as Lance writes them: LZ4 = u32
 * uncompressed length + one raw LZ4 block; ZSTD = u64 uncompressed length + frame, or a bare
 * frame. Declared sizes are bounded before anything is allocated. */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_decompressBound: a real upper bound from block headers */
#include <limits.h>
#include <lz4.h>
#include <pthread.h>
#include <zstd.h>
#include "internal.h"

/* One decompression context per thread, freed when the thread exits. */
static pthread_key_t dctx_key;
static pthread_once_t dctx_once = PTHREAD_ONCE_INIT;

static void dctx_free(void *p) { ZSTD_freeDCtx(p); }
static void dctx_init(void) { (void)pthread_key_create(&dctx_key, dctx_free); }

static ZSTD_DCtx *dctx_get(void) {
  pthread_once(&dctx_once, dctx_init);
  ZSTD_DCtx *d = pthread_getspecific(dctx_key);
  if (!d) {
    d = ZSTD_createDCtx();
    if (d && pthread_setspecific(dctx_key, d) != 0) {
      ZSTD_freeDCtx(d);
      d = NULL;
    }
  }
  return d;
}

static int lz4_decompress(struct lnc_slice in, struct lnc_arena *a, struct lnc_slice *out,
                          struct lnc_error *err) {
  if (in.len < 4) return lnc_errf(err, LNC_ECORRUPT, "lz4 buffer of %zu bytes has no length", in.len);
  uint64_t want = lnc_rd32(in.p);
  size_t clen = in.len - 4;
  /* LZ4 cannot expand more than ~255x; refuse declared sizes no block could produce. */
  if (want > LNC_ENC_MAX_DECOMPRESSED || want > (uint64_t)clen * 255 + 16 || clen > INT_MAX)
    return lnc_errf(err, LNC_ECORRUPT, "lz4 buffer declares %llu bytes from %zu compressed",
                    (unsigned long long)want, clen);
  uint8_t *dst = lnc_arena_alloc(a, want ? want : 1);
  if (!dst) return lnc_enc_nomem(err, "lz4 output");
  int got = LZ4_decompress_safe((const char *)in.p + 4, (char *)dst, (int)clen, (int)want);
  if (got < 0) return lnc_errf(err, LNC_ECORRUPT, "lz4 block is corrupt");
  out->p = dst;
  out->len = (size_t)got;
  return 0;
}

static int zstd_into(const uint8_t *src, size_t len, uint64_t cap, int exact, struct lnc_arena *a,
                     struct lnc_slice *out, struct lnc_error *err) {
  unsigned long long bound = ZSTD_decompressBound(src, len);
  if (bound == ZSTD_CONTENTSIZE_ERROR) return lnc_errf(err, LNC_ECORRUPT, "zstd frame is corrupt");
  if (cap == UINT64_MAX) cap = bound; /* bare frame: the bound is all we know */
  if (cap > bound || cap > LNC_ENC_MAX_DECOMPRESSED)
    return lnc_errf(err, LNC_ECORRUPT, "zstd buffer declares %llu bytes, frame holds at most %llu",
                    (unsigned long long)cap, bound);
  uint8_t *dst = lnc_arena_alloc(a, cap ? cap : 1);
  if (!dst) return lnc_enc_nomem(err, "zstd output");
  ZSTD_DCtx *d = dctx_get();
  if (!d) return lnc_enc_nomem(err, "zstd context");
  size_t got = ZSTD_decompressDCtx(d, dst, cap, src, len);
  if (ZSTD_isError(got))
    return lnc_errf(err, LNC_ECORRUPT, "zstd: %s", ZSTD_getErrorName(got));
  if (exact && got != cap)
    return lnc_errf(err, LNC_ECORRUPT, "zstd frame gave %zu bytes, %llu declared", got,
                    (unsigned long long)cap);
  out->p = dst;
  out->len = got;
  return 0;
}

static int zstd_decompress(struct lnc_slice in, struct lnc_arena *a, struct lnc_slice *out,
                           struct lnc_error *err) {
  /* A bare frame starts with the magic and has the descriptor's reserved bit clear; Lance's
   * reader treats anything shorter than the 8-byte prefix as bare too. */
  int bare = in.len < 8 || (lnc_rd32(in.p) == 0xFD2FB528u && (in.p[4] & 0x10) == 0);
  if (bare) return zstd_into(in.p, in.len, UINT64_MAX, 0, a, out, err);
  return zstd_into(in.p + 8, in.len - 8, lnc_rd64(in.p), 1, a, out, err);
}

int lnc_enc_decompress(int scheme, struct lnc_slice in, struct lnc_arena *a,
                       struct lnc_slice *out, struct lnc_error *err) {
  if (in.len == 0) {
    out->p = in.p;
    out->len = 0;
    return 0;
  }
  switch (scheme) {
  case LANCE__ENCODINGS21__COMPRESSION_SCHEME__COMPRESSION_ALGORITHM_LZ4:
    return lz4_decompress(in, a, out, err);
  case LANCE__ENCODINGS21__COMPRESSION_SCHEME__COMPRESSION_ALGORITHM_ZSTD:
    return zstd_decompress(in, a, out, err);
  default:
    return lnc_errf(err, LNC_EUNSUPPORTED, "unsupported compression scheme %d", scheme);
  }
}

int lnc_enc_maybe_decompress(const lnc_bufcomp *c, struct lnc_slice in, struct lnc_arena *a,
                             struct lnc_slice *out, struct lnc_error *err) {
  if (!c || c->scheme == LANCE__ENCODINGS21__COMPRESSION_SCHEME__COMPRESSION_ALGORITHM_UNSPECIFIED) {
    *out = in;
    return 0;
  }
  return lnc_enc_decompress(c->scheme, in, a, out, err);
}
