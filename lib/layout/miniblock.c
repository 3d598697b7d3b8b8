/* Mini-block pages: chunk table (byte range, values, rows started) from the chunk metadata
 * words and the repetition index, the page dictionary, and taking rows by reading only the
 * chunks that hold them. A row of a list column may start in one chunk and continue through
 * later chunks' preambles; the rep index says which. */
#include "page.h"
#include "../io/io.h"
#include "../util/error.h"
#include "../util/assert.h"
#include "../util/mem.h"
#include <stdlib.h>
#include <string.h>

/* A mini-block page's buffers (Lance 2.1 MiniBlockLayout): the chunk table, the chunks'
 * bytes, the dictionary when there is one, and the repetition index after it. */
enum { MB_BUF_CHUNKS = 0,
       MB_BUF_DATA = 1,
       MB_BUF_DICT = 2 };
/* A chunk table word is a little-endian u16, or a u32 when has_large_chunk: its low 4 bits
 * are log2 of the chunk's value count (every chunk but the last), the rest the chunk's size
 * in 8-byte units, minus one. */
#define MB_WORD_SMALL       2u
#define MB_WORD_LARGE       4u
#define MB_LOG2_VALUES_BITS 4
#define MB_SIZE_UNIT        8
/* Bounds that keep a damaged page from sizing allocations: chunks in a table, and values in
 * the last chunk (a full chunk holds at most 2^15, the most its 4-bit log2 can say). */
#define MB_MAX_CHUNKS       (1u << 26)
#define MB_MAX_CHUNK_VALUES 65536
/* A repetition index entry (depth 1): u64 rows that end in the chunk, u64 partial-row levels. */
#define MB_REPIDX_ENTRY 16

struct mb_chunk {
  uint64_t off;  /* byte offset in the file */
  uint32_t size; /* bytes */
  uint32_t n_values;
  uint64_t first_value;  /* page-local index of the chunk's first value */
  uint64_t first_row;    /* with a rep index: first row that starts in this chunk */
  uint32_t rows_started; /* with a rep index: rows that start in this chunk */
  uint8_t preamble, trailer;
};

struct mb_state {
  const Lance__Encodings21__MiniBlockLayout *mb;
  struct lnc_layers L;
  uint16_t vis_limit; /* page def values below it are visible (own a value slot) */
  uint32_t n_chunks;
  struct mb_chunk *chunks;
  bool has_dict;
  struct lnc_values dict; /* decoded dictionary; memory in dict_arena */
  struct lnc_arena dict_arena;
};

static void mb_free(void *p) {
  struct mb_state *s = p;
  if (!s) return;
  free(s->chunks);
  lnc_arena_free(&s->dict_arena);
  free(s);
}


/* Page def values are numbered layer by layer, innermost first, so the visible ones (valid,
 * or null below the innermost list) are a prefix 0..vis_limit-1: chunks count visible
 * levels with one comparison. lnc_layers_init numbers them so; checked, not assumed. */
static int mb_visible_prefix(struct lnc_take_ctx *c, struct mb_state *s) {
  while (s->vis_limit <= s->L.max_def && lnc_def_visible(&s->L, s->L.def_map[s->vis_limit])) s->vis_limit++;
  for (uint32_t v = s->vis_limit; v <= s->L.max_def; v++)
    if (lnc_def_visible(&s->L, s->L.def_map[v]))
      return lnc_page_err(c, LNC_EINTERNAL, "visible def values are not a prefix (def %u)", v);
  return 0;
}

/* Buffers: chunk table, chunk data, then the dictionary and the repetition index if any. */
static int mb_check_buffers(struct lnc_take_ctx *c, const struct lnc_page *pg, const struct mb_state *s) {
  const Lance__Encodings21__MiniBlockLayout *mb = s->mb;
  uint32_t need = 2 + (mb->dictionary ? 1 : 0) + (mb->repetition_index_depth ? 1 : 0);
  if (pg->n_buffers < need)
    return lnc_page_err(c, LNC_ECORRUPT, "mini-block page has %u buffers, needs %u", pg->n_buffers, need);
  if (mb->repetition_index_depth > 1)
    return lnc_page_err(c, LNC_EUNSUPPORTED, "repetition index depth %u", mb->repetition_index_depth);
  if ((mb->repetition_index_depth > 0) != (s->L.max_rep > 0))
    return lnc_page_err(c, LNC_ECORRUPT, "repetition index depth %u but %u list layers",
                        mb->repetition_index_depth, s->L.max_rep);
  return 0;
}

/* Which buffer holds the repetition index: it follows the dictionary when there is one. */
static uint32_t mb_repidx_buf(const Lance__Encodings21__MiniBlockLayout *mb) {
  return mb->dictionary ? MB_BUF_DICT + 1 : MB_BUF_DICT;
}

unsigned lnc_miniblock_init_bufs(const struct lnc_page *pg, uint32_t *bufs) {
  const Lance__Encodings21__MiniBlockLayout *mb = pg->layout->mini_block_layout;
  unsigned n = 0;
  if (!mb) return 0;
  bufs[n++] = MB_BUF_CHUNKS;
  if (mb->dictionary) bufs[n++] = MB_BUF_DICT;
  if (mb->repetition_index_depth) bufs[n++] = mb_repidx_buf(mb);
  return n;
}

/* Reads the chunk table and the repetition index in one batch (two reads at most); the
 * caller frees *meta and *repidx (NULL without a rep index). */
static int mb_read_tables(struct lnc_take_ctx *c, const struct lnc_page *pg, struct mb_state *s,
                          uint8_t **meta, uint8_t **repidx, unsigned *word) {
  const Lance__Encodings21__MiniBlockLayout *mb = s->mb;
  *word = mb->has_large_chunk ? MB_WORD_LARGE : MB_WORD_SMALL;
  uint64_t meta_len = pg->buf_len[MB_BUF_CHUNKS];
  if (meta_len % *word || meta_len / *word > MB_MAX_CHUNKS)
    return lnc_page_err(c, LNC_ECORRUPT, "chunk metadata of %llu bytes", (unsigned long long)meta_len);
  s->n_chunks = (uint32_t)(meta_len / *word);
  s->chunks = calloc(s->n_chunks ? s->n_chunks : 1, sizeof *s->chunks);
  *meta = malloc(meta_len ? meta_len : 1);
  if (!s->chunks || !*meta) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
  struct lnc_read reads[2];
  size_t nr = 0;
  reads[nr++] = (struct lnc_read){pg->buf_off[MB_BUF_CHUNKS], meta_len, *meta};
  if (mb->repetition_index_depth) {
    uint32_t ri_buf = mb_repidx_buf(mb);
    uint64_t ri_len = pg->buf_len[ri_buf];
    if (ri_len != (uint64_t)s->n_chunks * MB_REPIDX_ENTRY)
      return lnc_page_err(c, LNC_ECORRUPT, "repetition index is %llu bytes for %u chunks",
                          (unsigned long long)ri_len, s->n_chunks);
    *repidx = malloc(ri_len ? ri_len : 1);
    if (!*repidx) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
    reads[nr++] = (struct lnc_read){pg->buf_off[ri_buf], ri_len, *repidx};
  }
  return lnc_io_read(c->io, &c->f->src, reads, nr, c->stats, c->err);
}

/* The chunk table: each chunk's byte range, its values (a power of two but the last, which
 * holds what is left of the page's items) and, with a rep index, the rows that start in it
 * and whether it begins with the tail of a row (preamble) or ends inside one (trailer). The
 * table must cover the page's items and rows exactly. */
static int mb_build_chunks(struct lnc_take_ctx *c, const struct lnc_page *pg, struct mb_state *s,
                           const uint8_t *meta, unsigned word, const uint8_t *repidx) {
  const Lance__Encodings21__MiniBlockLayout *mb = s->mb;
  uint64_t off = pg->buf_off[MB_BUF_DATA], end = off + pg->buf_len[MB_BUF_DATA], value = 0, row = 0;
  bool prev_partial = false;
  for (uint32_t k = 0; k < s->n_chunks; k++) {
    uint64_t w = lnc_rdw(meta + (size_t)k * word, word);
    struct mb_chunk *ch = &s->chunks[k];
    uint64_t size = ((w >> MB_LOG2_VALUES_BITS) + 1) * MB_SIZE_UNIT;
    if (size > end - off)
      return lnc_page_err(c, LNC_ECORRUPT, "chunk %u (%llu bytes) runs past the data buffer", k,
                          (unsigned long long)size);
    ch->off = off;
    ch->size = (uint32_t)size;
    off += size;
    ch->first_value = value;
    if (k + 1 < s->n_chunks) {
      ch->n_values = 1u << (w & ((1u << MB_LOG2_VALUES_BITS) - 1));
    } else {
      if (mb->num_items < value)
        return lnc_page_err(c, LNC_ECORRUPT, "chunks hold more values than the page's %llu",
                            (unsigned long long)mb->num_items);
      uint64_t last = mb->num_items - value;
      if (last > MB_MAX_CHUNK_VALUES)
        return lnc_page_err(c, LNC_ECORRUPT, "last chunk holds %llu values", (unsigned long long)last);
      ch->n_values = (uint32_t)last;
    }
    value += ch->n_values;
    if (repidx) {
      uint64_t ends = lnc_rd64(repidx + MB_REPIDX_ENTRY * (size_t)k);
      uint64_t partial = lnc_rd64(repidx + MB_REPIDX_ENTRY * (size_t)k + 8);
      ch->preamble = prev_partial;
      ch->trailer = partial > 0;
      int64_t started = (int64_t)ends + ch->trailer - ch->preamble;
      if (started < 0 || ends > pg->rows)
        return lnc_page_err(c, LNC_ECORRUPT, "repetition index entry %u is inconsistent", k);
      ch->first_row = row;
      ch->rows_started = (uint32_t)started;
      row += (uint64_t)started;
      prev_partial = ch->trailer;
    } else {
      ch->first_row = ch->first_value;
      ch->rows_started = ch->n_values;
    }
  }
  if (value != mb->num_items || (repidx && row != pg->rows) || (!repidx && value != pg->rows))
    return lnc_page_err(c, LNC_ECORRUPT, "chunk table covers %llu values / %llu rows; page has %llu items, %llu rows",
                        (unsigned long long)value, (unsigned long long)(repidx ? row : value),
                        (unsigned long long)mb->num_items, (unsigned long long)pg->rows);
  return 0;
}

/* The page dictionary, read and decoded once into the state's arena. */
static int mb_load_dictionary(struct lnc_take_ctx *c, const struct lnc_page *pg, struct mb_state *s) {
  const Lance__Encodings21__MiniBlockLayout *mb = s->mb;
  uint64_t dl = pg->buf_len[MB_BUF_DICT];
  uint8_t *d = lnc_arena_alloc(&s->dict_arena, dl ? dl : 1);
  if (!d) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
  struct lnc_read r = {pg->buf_off[MB_BUF_DICT], dl, d};
  int rc = lnc_io_read(c->io, &c->f->src, &r, 1, c->stats, c->err);
  if (rc) return rc;
  rc = lnc_enc_block(mb->dictionary, (struct lnc_slice){d, dl}, mb->num_dictionary_items,
                     &s->dict_arena, &s->dict, c->err);
  if (rc) return lnc_page_err(c, rc, "dictionary: %s", c->err->message);
  s->has_dict = true;
  return 0;
}

static int mb_init(struct lnc_take_ctx *c, struct lnc_page *pg, struct mb_state **out) {
  const Lance__Encodings21__MiniBlockLayout *mb = pg->layout->mini_block_layout;
  if (!mb || !mb->value_compression)
    return lnc_page_err(c, LNC_ECORRUPT, "mini-block layout without a value encoding");
  struct mb_state *s = calloc(1, sizeof *s);
  if (!s) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
  lnc_arena_init(&s->dict_arena, 0);
  s->mb = mb;
  uint8_t *meta = NULL, *repidx = NULL;
  unsigned word = 0;
  int rc = lnc_page_layers(c, (const int *)mb->layers, mb->n_layers, &s->L);
  if (!rc) rc = mb_visible_prefix(c, s);
  if (!rc) rc = mb_check_buffers(c, pg, s);
  if (!rc) rc = mb_read_tables(c, pg, s, &meta, &repidx, &word);
  if (!rc) rc = mb_build_chunks(c, pg, s, meta, word, repidx);
  if (!rc && mb->dictionary) rc = mb_load_dictionary(c, pg, s);
  free(meta);
  free(repidx);
  if (rc) {
    mb_free(s);
    return rc;
  }
  pg->state_bytes = sizeof *s + (size_t)s->n_chunks * sizeof *s->chunks + s->dict_arena.total;
  pg->n_chunks = s->n_chunks;
  *out = s;
  return 0;
}

/* A chunk read and decoded for this take. A take usually wants one row of a chunk of ~1000
 * levels, so rows are not indexed level by level: the chunk keeps how many rows start and how
 * many levels are visible before each block of MB_BLOCK levels (counted by loops compilers
 * vectorise), and a row is found by a binary search over blocks and a scan of one block. */
enum { MB_BLOCK = 64 };
struct mb_decoded {
  uint32_t n_levels;         /* levels in the chunk (= values when the page has no levels) */
  const uint16_t *rep, *def; /* page values; NULL when absent */
  struct lnc_values vals;    /* dictionary indices when the page has a dictionary */
  uint32_t n_starts;         /* levels that start a row (rep == max_rep, or every level without rep) */
  uint32_t *blk_starts;      /* with list layers: row starts before each block (n_blocks + 1) */
  uint32_t *blk_vis;         /* with list layers: visible levels before each block (n_blocks + 1) */
};

static inline bool lv_start(const struct mb_state *s, const struct mb_decoded *d, uint32_t i) {
  return !d->rep || d->rep[i] == s->L.max_rep;
}

static inline bool lv_visible(const struct mb_state *s, const struct mb_decoded *d, uint32_t i) {
  return !d->def || d->def[i] < s->vis_limit;
}

/* With list layers, the level after the row starting at level a: the next start or the
 * chunk's end (a row continuing into the next chunks goes on in their preambles). */
static uint32_t row_end(const struct mb_state *s, const struct mb_decoded *d, uint32_t a) {
  uint32_t b = a + 1;
  while (b < d->n_levels && !lv_start(s, d, b)) b++;
  return b;
}

/* Counts over one full block; the fixed trip count lets -O2 vectorise them. */
static uint32_t block_count_eq(const uint16_t *p, uint16_t v) {
  uint16_t n = 0;
  for (int i = 0; i < MB_BLOCK; i++) n += p[i] == v;
  return n;
}

static uint32_t block_count_below(const uint16_t *p, uint16_t v, uint16_t max, bool *bad) {
  uint16_t n = 0, over = 0;
  for (int i = 0; i < MB_BLOCK; i++) {
    n += p[i] < v;
    over |= p[i] > max;
  }
  *bad |= over != 0;
  return n;
}

static int find_start(struct lnc_take_ctx *c, const struct mb_state *s, const struct mb_decoded *d,
                      uint32_t kth, uint32_t *level, uint32_t *vis);

/* Decodes a chunk's values: only want[0..nwant) where the encoding allows (want NULL: all). */
static int decode_values(struct lnc_take_ctx *c, struct mb_state *s, uint32_t k, const struct lnc_slice *bufs,
                         size_t nb, const uint32_t *want, size_t nwant, struct mb_decoded *d) {
  const struct mb_chunk *ch = &s->chunks[k];
  struct lnc_values raw;
  int rc = lnc_enc_miniblock_pick(s->mb->value_compression, bufs, nb, ch->n_values, want, nwant, c->arena, &raw, c->err);
  if (rc) return lnc_page_err(c, rc, "chunk %u values: %s", k, c->err->message);
  if (raw.n != ch->n_values)
    return lnc_page_err(c, LNC_ECORRUPT, "chunk %u decoded %llu values, expected %u", k,
                        (unsigned long long)raw.n, ch->n_values);
  if (c->stats) c->stats->bytes_decoded += ch->size;
  if (s->has_dict) {
    /* Keep the indices; rows are mapped to dictionary items only when emitted, so a chunk
     * read for one row does not copy every item it refers to. */
    if (raw.kind != LNC_VALUES_FIXED || (raw.bits != 8 && raw.bits != 16 && raw.bits != 32 && raw.bits != 64))
      return lnc_page_err(c, LNC_ECORRUPT, "dictionary indices of %u bits", raw.bits);
  }
  d->vals = raw;
  return 0;
}

/* With list layers: the values of the rows starting at the chunk's row starts
 * starts[0..nstarts) (the part of each row in this chunk, as emit_range reads it), into
 * vwant. Returns their count, or 0 when there are more than MB_PICK_MAX (decode them all). */
enum { MB_PICK_MAX = 32 };
static size_t list_values_wanted(struct lnc_take_ctx *c, const struct mb_state *s, const struct mb_decoded *d,
                                 const uint32_t *starts, size_t nstarts, uint32_t *vwant) {
  size_t n = 0;
  for (size_t j = 0; j < nstarts; j++) {
    uint32_t a, vis;
    /* A start past the chunk's is reported by the caller when it emits that row. */
    if (starts[j] >= d->n_starts || find_start(c, s, d, starts[j], &a, &vis)) return 0;
    for (uint32_t i = a, end = row_end(s, d, a); i < end; i++) {
      if (!lv_visible(s, d, i)) continue;
      if (n == MB_PICK_MAX) return 0;
      vwant[n++] = vis++;
    }
  }
  return n;
}

/* want: NULL, or what the take reads of the chunk: without list layers its value indices,
 * with them the row starts (k-th start of the chunk) of its rows. */
static int decode_chunk(struct lnc_take_ctx *c, struct mb_state *s, uint32_t k, const uint8_t *p,
                        const uint32_t *want, size_t nwant, struct mb_decoded *d) {
  const Lance__Encodings21__MiniBlockLayout *mb = s->mb;
  const struct mb_chunk *ch = &s->chunks[k];
  size_t len = ch->size, pos = 0;
  bool has_rep = mb->rep_compression != NULL, has_def = mb->def_compression != NULL;
  int sw = mb->has_large_chunk ? 4 : 2;
  uint64_t nb = mb->num_buffers;
  if (nb == 0 || nb > 16) return lnc_page_err(c, LNC_ECORRUPT, "mini-block chunks with %llu value buffers", (unsigned long long)nb);
  size_t hdr = 2 + (has_rep ? 2 : 0) + (has_def ? 2 : 0) + (size_t)nb * (size_t)sw;
  if (hdr > len) return lnc_page_err(c, LNC_ECORRUPT, "chunk %u header does not fit", k);
  uint32_t n_levels = lnc_rd16(p);
  pos = 2;
  uint32_t rep_bytes = 0, def_bytes = 0;
  if (has_rep) {
    rep_bytes = lnc_rd16(p + pos);
    pos += 2;
  }
  if (has_def) {
    def_bytes = lnc_rd16(p + pos);
    pos += 2;
  }
  uint64_t sizes[16];
  for (uint64_t b = 0; b < nb; b++) {
    sizes[b] = lnc_rdw(p + pos, (unsigned)sw);
    pos += (size_t)sw;
  }
  pos = (pos + 7) & ~(size_t)7;
  struct lnc_slice rep_s = {0}, def_s = {0}, bufs[16];
  if (rep_bytes) {
    if (rep_bytes > len - pos) return lnc_page_err(c, LNC_ECORRUPT, "chunk %u rep buffer overruns", k);
    rep_s = (struct lnc_slice){p + pos, rep_bytes};
    pos = (pos + rep_bytes + 7) & ~(size_t)7;
  }
  if (def_bytes) {
    if (pos > len || def_bytes > len - pos) return lnc_page_err(c, LNC_ECORRUPT, "chunk %u def buffer overruns", k);
    def_s = (struct lnc_slice){p + pos, def_bytes};
    pos = (pos + def_bytes + 7) & ~(size_t)7;
  }
  for (uint64_t b = 0; b < nb; b++) {
    if (pos > len || sizes[b] > len - pos)
      return lnc_page_err(c, LNC_ECORRUPT, "chunk %u value buffer %llu overruns", k, (unsigned long long)b);
    bufs[b] = (struct lnc_slice){p + pos, (size_t)sizes[b]};
    pos = (pos + (size_t)sizes[b] + 7) & ~(size_t)7;
  }
  memset(d, 0, sizeof *d);
  int rc;
  if (!has_rep && !has_def) n_levels = ch->n_values;
  if (n_levels < ch->n_values)
    return lnc_page_err(c, LNC_ECORRUPT, "chunk %u has %u levels for %u values", k, n_levels, ch->n_values);
  d->n_levels = n_levels;
  if (has_rep && rep_bytes &&
      (rc = lnc_enc_levels(mb->rep_compression, rep_s, n_levels, c->arena, &d->rep, c->err)))
    return lnc_page_err(c, rc, "chunk %u rep levels: %s", k, c->err->message);
  /* Without list layers value i belongs to level i, nulls included (checked below), as
   * emit_range reads them: the def levels and values a take reads are those of its rows.
   * With them a row's values are found through the levels, decoded whole, and the block
   * counts below; then only its values are decoded. */
  bool lists = s->L.max_rep != 0;
  if (!lists && has_rep) want = NULL;
  if (has_def && def_bytes &&
      (rc = lnc_enc_levels_pick(mb->def_compression, def_s, n_levels, lists ? NULL : want, nwant, c->arena, &d->def, c->err)))
    return lnc_page_err(c, rc, "chunk %u def levels: %s", k, c->err->message);
  /* Block counts, for locating rows inside the chunk. Without list layers every level is
   * visible, is value i and starts row i: no counts needed. emit_level still range-checks
   * each def level it uses. */
  if (!lists) {
    if ((rc = decode_values(c, s, k, bufs, (size_t)nb, want, nwant, d))) return rc;
    if (n_levels != ch->n_values)
      return lnc_page_err(c, LNC_ECORRUPT, "chunk %u has %u levels for %u values", k, n_levels, ch->n_values);
    d->n_starts = n_levels;
    return 0;
  }
  uint32_t n_blocks = (n_levels + MB_BLOCK - 1) / MB_BLOCK;
  d->blk_starts = lnc_arena_alloc(c->arena, ((size_t)n_blocks + 1) * sizeof(uint32_t));
  d->blk_vis = lnc_arena_alloc(c->arena, ((size_t)n_blocks + 1) * sizeof(uint32_t));
  if (!d->blk_starts || !d->blk_vis) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
  const uint16_t max_rep = s->L.max_rep, max_def = s->L.max_def;
  uint32_t starts = 0, vis = 0;
  bool bad = false;
  for (uint32_t b = 0; b < n_blocks; b++) {
    d->blk_starts[b] = starts;
    d->blk_vis[b] = vis;
    uint32_t lo = b * MB_BLOCK, len = n_levels - lo < MB_BLOCK ? n_levels - lo : MB_BLOCK;
    if (len == MB_BLOCK) {
      starts += d->rep ? block_count_eq(d->rep + lo, max_rep) : MB_BLOCK;
      vis += d->def ? block_count_below(d->def + lo, s->vis_limit, max_def, &bad) : MB_BLOCK;
    } else {
      for (uint32_t i = lo; i < lo + len; i++) {
        starts += lv_start(s, d, i);
        vis += lv_visible(s, d, i);
        bad |= d->def && d->def[i] > max_def;
      }
    }
  }
  d->blk_starts[n_blocks] = starts;
  d->blk_vis[n_blocks] = vis;
  d->n_starts = starts;
  if (bad) {
    uint32_t i = 0;
    while (d->def[i] <= max_def) i++;
    return lnc_page_err(c, LNC_ECORRUPT, "chunk %u def level %u > %u", k, d->def[i], max_def);
  }
  if (vis != ch->n_values)
    return lnc_page_err(c, LNC_ECORRUPT, "chunk %u has %u visible levels for %u values", k, vis, ch->n_values);
  uint32_t vwant[MB_PICK_MAX];
  size_t nv = want ? list_values_wanted(c, s, d, want, nwant, vwant) : 0;
  return decode_values(c, s, k, bufs, (size_t)nb, nv ? vwant : NULL, nv, d);
}

/* Level at which row start `kth` (< n_starts) of a chunk with list layers lies, and how many
 * levels before it are visible (the index of its first value). */
static int find_start(struct lnc_take_ctx *c, const struct mb_state *s, const struct mb_decoded *d,
                      uint32_t kth, uint32_t *level, uint32_t *vis) {
  uint32_t n_blocks = (d->n_levels + MB_BLOCK - 1) / MB_BLOCK;
  if (kth >= d->n_starts || n_blocks == 0) return lnc_page_err(c, LNC_EINTERNAL, "row start %u of %u", kth, d->n_starts);
  /* The block holding it: blk_starts[lo] <= kth < blk_starts[hi]. */
  uint32_t lo = 0, hi = n_blocks;
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (d->blk_starts[mid] <= kth)
      lo = mid;
    else
      hi = mid;
  }
  uint32_t seen = d->blk_starts[lo], v = d->blk_vis[lo];
  uint32_t end = (lo + 1) * MB_BLOCK < d->n_levels ? (lo + 1) * MB_BLOCK : d->n_levels;
  for (uint32_t i = lo * MB_BLOCK; i < end; i++) {
    if (lv_start(s, d, i) && seen++ == kth) {
      *level = i;
      *vis = v;
      return 0;
    }
    v += lv_visible(s, d, i);
  }
  return lnc_page_err(c, LNC_EINTERNAL, "row start %u not in its block", kth);
}

/* emit_range's common case done a run at a time: a list chunk of byte-aligned fixed-width
 * values without a dictionary or item validity (list<int32>, list<double>, ...). The run's
 * visible levels own values vis.. in order, so they are one copy, after which the null ones
 * are zeroed as emit_level would have written them. Returns false, having emitted nothing,
 * for anything else, or for a run holding what emit_level rejects (a rep level out of range,
 * values missing): the per-level path then handles or reports it. Def levels were
 * range-checked when the chunk was decoded. */
static bool emit_run_fixed(struct lnc_take_ctx *c, const struct mb_state *s, const struct mb_decoded *d,
                           uint32_t a, uint32_t b, uint32_t vis, struct lnc_leafrows *out, int *rc) {
  const struct lnc_valbuf *ov = &out->values;
  if (!s->L.max_rep || s->has_dict || !c->levels || ov->kind != LNC_VALUES_FIXED || ov->bits == 0 ||
      ov->bits % 8 || ov->items_per_value != 1 || lnc_valbuf_has_item_validity(ov) || d->vals.kind != LNC_VALUES_FIXED ||
      d->vals.bits != ov->bits || d->vals.fsl_dim || d->vals.n_item_validity)
    return false;
  uint32_t m = 0;
  bool bad = false;
  for (uint32_t i = a; i < b; i++) {
    m += lv_visible(s, d, i);
    bad |= d->rep && d->rep[i] > s->L.max_rep;
  }
  if (bad || (uint64_t)vis + m > d->vals.n) return false;
  uint64_t first = ov->n;
  size_t w = ov->bits / 8;
  if ((*rc = lnc_leafrows_push_levels(out, d->rep ? d->rep + a : NULL, d->def ? d->def + a : NULL,
                                      s->L.def_map, b - a)) ||
      (*rc = lnc_valbuf_append_fixed(&out->values, d->vals.data + (size_t)vis * w, m))) {
    *rc = lnc_page_err(c, *rc, *rc == LNC_ENOMEM ? "out of memory" : "values of a list run");
    return true;
  }
  if (d->def)
    for (uint32_t i = a, k = 0; i < b; i++)
      if (d->def[i] < s->vis_limit) {
        if (s->L.def_map[d->def[i]] != 0) lnc_valbuf_zero_fixed(&out->values, first + k);
        k++;
      }
  return true;
}

/* Emits levels [a, b) of a decoded chunk; `vis` levels before a are visible (with list
 * layers; otherwise level i is value i). */
static int emit_range(struct lnc_take_ctx *c, struct mb_state *s, const struct mb_decoded *d,
                      uint32_t a, uint32_t b, uint32_t vis, struct lnc_leafrows *out) {
  int rc = 0;
  if (emit_run_fixed(c, s, d, a, b, vis, out, &rc)) return rc;
  for (uint32_t i = a; i < b; i++) {
    uint16_t rep = d->rep ? d->rep[i] : 0, def = d->def ? d->def[i] : 0;
    uint64_t v = s->L.max_rep ? vis : i;
    if (s->L.max_rep) vis += lv_visible(s, d, i);
    const struct lnc_values *vals = &d->vals;
    if (s->has_dict) {
      /* The value is an index into the page dictionary. Null slots carry junk indices: they
       * are never looked up, as emit_level only reads values of valid levels. */
      uint64_t idx = 0;
      if (v < d->vals.n) memcpy(&idx, d->vals.data + v * (d->vals.bits / 8), d->vals.bits / 8);
      if (def <= s->L.max_def && s->L.def_map[def] == 0 && idx >= s->dict.n)
        return lnc_page_err(c, LNC_ECORRUPT, "dictionary index %llu past %llu items", (unsigned long long)idx,
                            (unsigned long long)s->dict.n);
      vals = &s->dict;
      v = idx;
    }
    int rc = lnc_emit_level(c, &s->L, out, rep, def, vals, v);
    if (rc) return rc;
  }
  return 0;
}

/* Finds the chunk in which page row r starts. Chunks hold similar numbers of rows, so the
 * search starts where r would be if they all held the same and gallops from there: a row of a
 * random take reads one or two entries of the (usually cold) chunk table instead of the ~6
 * dependent cache misses of a binary search over the whole page. The result is the same: the
 * last chunk whose first_row <= r, then the two adjustments below. */
static uint32_t find_chunk(const struct mb_state *s, uint64_t r) {
  const struct mb_chunk *ch = s->chunks;
  uint32_t n = s->n_chunks;
  if (n == 0) return 0;
  uint64_t total = ch[n - 1].first_row + ch[n - 1].rows_started;
  uint32_t g = total && r < total ? (uint32_t)((double)r / (double)total * n) : n - 1;
  if (g >= n) g = n - 1;
  /* lo: a chunk with first_row <= r (or chunk 0); hi: n or a chunk with first_row > r. */
  uint32_t lo, hi, step = 1;
  if (g == 0 || ch[g].first_row <= r) {
    lo = g;
    while ((hi = lo + step) < n && ch[hi].first_row <= r) {
      lo = hi;
      step *= 2;
    }
    if (hi > n) hi = n;
  } else {
    hi = g;
    for (;;) {
      lo = hi > step ? hi - step : 0;
      if (lo == 0 || ch[lo].first_row <= r) break;
      hi = lo;
      step *= 2;
    }
  }
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (ch[mid].first_row <= r)
      lo = mid;
    else
      hi = mid;
  }
  while (lo > 0 && ch[lo].rows_started == 0) lo--;
  /* Several chunks can share first_row (pure continuations); pick the one that starts r. */
  while (lo + 1 < n && ch[lo].first_row + ch[lo].rows_started <= r) lo++;
  return lo;
}

struct mb_plan {
  uint8_t **data;          /* [n_chunks]: chunk bytes when read */
  struct mb_decoded **dec; /* [n_chunks]: decoded on first use */
  uint32_t *chunk_of;      /* [n rows]: the chunk in which each row starts */
};

int lnc_miniblock_plan(struct lnc_page_job *j) {
  struct lnc_take_ctx *c = &j->c;
  struct lnc_page *pg = j->pg;
  int rc;
  if (!pg->state) {
    struct mb_state *s = NULL;
    if ((rc = mb_init(c, pg, &s))) return rc;
    pg->state = s;
    pg->free_state = mb_free;
  }
  struct mb_state *s = pg->state;
  /* Every chunk the rows touch, continuation chunks included, read once. */
  uint8_t *need = lnc_arena_calloc(c->arena, s->n_chunks ? s->n_chunks : 1, 1);
  uint32_t *chunk_of = lnc_arena_alloc(c->arena, (j->n ? j->n : 1) * sizeof *chunk_of);
  if (!need || !chunk_of) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
  for (size_t i = 0; i < j->n; i++) {
    if (j->rows[i] >= pg->rows) return lnc_page_err(c, LNC_EINTERNAL, "row %llu past page", (unsigned long long)j->rows[i]);
    uint32_t k = find_chunk(s, j->rows[i]);
    chunk_of[i] = k;
    need[k] = 1;
    const struct mb_chunk *ch = &s->chunks[k];
    if (s->L.max_rep && ch->trailer && j->rows[i] == ch->first_row + ch->rows_started - 1) {
      for (uint32_t m = k + 1; m < s->n_chunks; m++) {
        need[m] = 1;
        if (!(s->chunks[m].rows_started == 0 && s->chunks[m].trailer)) break;
      }
    }
  }
  size_t n_need = 0;
  for (uint32_t k = 0; k < s->n_chunks; k++) n_need += need[k];
  struct mb_plan *pl = lnc_arena_alloc(c->arena, sizeof *pl);
  struct lnc_read *reads = lnc_arena_alloc(c->arena, (n_need ? n_need : 1) * sizeof *reads);
  if (!pl || !reads) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
  pl->data = lnc_arena_calloc(c->arena, s->n_chunks ? s->n_chunks : 1, sizeof *pl->data);
  pl->dec = lnc_arena_calloc(c->arena, s->n_chunks ? s->n_chunks : 1, sizeof *pl->dec);
  if (!pl->data || !pl->dec) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
  pl->chunk_of = chunk_of;
  size_t nr = 0;
  for (uint32_t k = 0; k < s->n_chunks; k++) {
    if (!need[k]) continue;
    pl->data[k] = lnc_arena_alloc(c->arena, s->chunks[k].size);
    if (!pl->data[k]) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
    reads[nr++] = (struct lnc_read){s->chunks[k].off, s->chunks[k].size, pl->data[k]};
  }
  j->plan = pl;
  j->reads = reads;
  j->nreads = nr;
  return 0;
}

static int decoded_want(struct lnc_take_ctx *c, struct mb_state *s, struct mb_plan *pl, uint32_t k,
                        const uint32_t *want, size_t nwant, struct mb_decoded **out) {
  if (!pl->dec[k]) {
    if (!pl->data[k]) return lnc_page_err(c, LNC_EINTERNAL, "chunk %u was not read", k);
    struct mb_decoded *d = lnc_arena_alloc(c->arena, sizeof *d);
    if (!d) return lnc_page_err(c, LNC_ENOMEM, "out of memory");
    int rc = decode_chunk(c, s, k, pl->data[k], want, nwant, d);
    if (rc) return rc;
    pl->dec[k] = d;
  }
  *out = pl->dec[k];
  return 0;
}

static int decoded(struct lnc_take_ctx *c, struct mb_state *s, struct mb_plan *pl, uint32_t k,
                   struct mb_decoded **out) {
  return decoded_want(c, s, pl, k, NULL, 0, out);
}

/* The take's rows in chunk k are rows[i..) while chunk_of stays k (rows are sorted): what
 * decode_chunk's `want` takes for them — each row less `base`, the chunk's first value
 * without list layers (value indices), its first row with them (row starts) — when they are
 * few enough that decoding only their values beats decoding the chunk (MB_PICK_MAX), else 0. */
static size_t chunk_wants(const struct lnc_page_job *j, const struct mb_plan *pl, size_t i, uint64_t base,
                          uint32_t *want) {
  uint32_t k = pl->chunk_of[i];
  size_t n = 0;
  for (; i < j->n && pl->chunk_of[i] == k; i++, n++) {
    uint64_t at = j->rows[i] - base;
    if (n == MB_PICK_MAX || at > UINT32_MAX) return 0;
    want[n] = (uint32_t)at;
  }
  return n;
}

int lnc_miniblock_decode(struct lnc_page_job *j) {
  struct lnc_take_ctx *c = &j->c;
  struct mb_state *s = j->pg->state;
  struct mb_plan *pl = j->plan;
  struct lnc_leafrows *out = j->out;
  int rc;
  for (size_t i = 0; i < j->n; i++) {
    uint64_t r = j->rows[i];
    uint32_t k = pl->chunk_of[i];
    const struct mb_chunk *ch = &s->chunks[k];
    struct mb_decoded *d;
    LNC_ASSERT(i == 0 || pl->chunk_of[i - 1] <= k);
    uint32_t want[MB_PICK_MAX];
    size_t nwant = pl->dec[k] ? 0 : chunk_wants(j, pl, i, s->L.max_rep ? ch->first_row : ch->first_value, want);
    if ((rc = decoded_want(c, s, pl, k, nwant ? want : NULL, nwant, &d))) return rc;
    if (!s->L.max_rep) {
      uint32_t li = (uint32_t)(r - ch->first_value);
      if ((rc = emit_range(c, s, d, li, li + 1, 0, out))) return rc;
    } else {
      uint64_t kth = r - ch->first_row;
      if (kth >= d->n_starts)
        return lnc_page_err(c, LNC_ECORRUPT, "chunk %u has %u row starts, row %llu needs %llu", k,
                            d->n_starts, (unsigned long long)r, (unsigned long long)kth + 1);
      uint32_t a, vis;
      if ((rc = find_start(c, s, d, (uint32_t)kth, &a, &vis))) return rc;
      if ((rc = emit_range(c, s, d, a, row_end(s, d, a), vis, out))) return rc;
      if (kth + 1 == d->n_starts && ch->trailer) {
        /* The row continues through the next chunks' preambles. */
        for (uint32_t m = k + 1; m < s->n_chunks; m++) {
          struct mb_decoded *dm;
          if ((rc = decoded(c, s, pl, m, &dm))) return rc;
          uint32_t stop = dm->n_levels, unused;
          if (dm->n_starts && (rc = find_start(c, s, dm, 0, &stop, &unused))) return rc;
          if ((rc = emit_range(c, s, dm, 0, stop, 0, out))) return rc;
          /* The row ends where a row starts, or with a chunk that ends no row inside it (no
           * trailer): the plan read no chunk past that one. */
          if (dm->n_starts || !s->chunks[m].trailer) break;
        }
      }
    }
    if ((rc = lnc_leafrows_end_row(out))) return lnc_page_err(c, rc, "out of memory");
  }
  return 0;
}
