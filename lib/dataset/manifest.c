/* Manifest files: the 16-byte tail (i64 position, two i16 versions, "LANC"), the u32
 * length + Manifest protobuf at that position, and the checks a reader relies on before it
 * trusts fragments, data files and deletion files. */
#include "dataset.h"
#include "../util/error.h"
#include "../util/mem.h"
#include <stdlib.h>
#include <string.h>

#define TAIL 16


struct id_at {
  int32_t id;
  size_t at; /* index in the manifest's field list */
};

static int cmp_id_at(const void *a, const void *b) {
  const struct id_at *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

/* Ids unique and not negative, every parent an earlier field (what readers of the schema rely
 * on: no cycles, pre-order). Sorted once, so a manifest of 30,000 fields checks in
 * milliseconds, where comparing each field with every earlier one took a second. */
static int check_fields(const Lance__Table__Manifest *m, const char *what,
                        struct lnc_error *err) {
  if (m->n_fields == 0) return lnc_errf(err, LNC_ECORRUPT, "%s: manifest has no schema fields", what);
  for (size_t i = 0; i < m->n_fields; i++)
    if (m->fields[i]->id < 0 || !m->fields[i]->name)
      return lnc_errf(err, LNC_ECORRUPT, "%s: schema field %zu has id %d", what, i, m->fields[i]->id);
  struct id_at *ix = malloc(m->n_fields * sizeof *ix);
  if (!ix) return lnc_errf(err, LNC_ENOMEM, "%s: out of memory", what);
  for (size_t i = 0; i < m->n_fields; i++) ix[i] = (struct id_at){m->fields[i]->id, i};
  qsort(ix, m->n_fields, sizeof *ix, cmp_id_at);
  int rc = 0;
  for (size_t i = 1; i < m->n_fields && !rc; i++)
    if (ix[i].id == ix[i - 1].id)
      rc = lnc_errf(err, LNC_ECORRUPT, "%s: schema field id %d appears twice", what, ix[i].id);
  for (size_t i = 0; i < m->n_fields && !rc; i++) {
    const Lance__File__Field *f = m->fields[i];
    if (f->parent_id == -1) continue;
    struct id_at key = {f->parent_id, 0};
    const struct id_at *p = bsearch(&key, ix, m->n_fields, sizeof *ix, cmp_id_at);
    if (!p || p->at >= i)
      rc = lnc_errf(err, LNC_ECORRUPT, "%s: field '%s' has parent %d, not an earlier field", what, f->name,
                    f->parent_id);
  }
  free(ix);
  return rc;
}

static int check_fragment(const Lance__Table__DataFragment *fr, size_t idx, const char *what,
                          struct lnc_error *err) {
  if (fr->n_files == 0)
    return lnc_errf(err, LNC_ECORRUPT, "%s: fragment %llu has no data files", what,
                    (unsigned long long)fr->id);
  if (fr->physical_rows > ((uint64_t)1 << 32))
    return lnc_errf(err, LNC_ECORRUPT, "%s: fragment %llu has %llu rows (more than 2^32)", what,
                    (unsigned long long)fr->id, (unsigned long long)fr->physical_rows);
  for (size_t j = 0; j < fr->n_files; j++) {
    const Lance__Table__DataFile *df = fr->files[j];
    if (!df->path || !df->path[0])
      return lnc_errf(err, LNC_ECORRUPT, "%s: fragment %llu data file %zu has no path", what,
                      (unsigned long long)fr->id, j);
    if (df->n_column_indices != 0 && df->n_column_indices != df->n_fields)
      return lnc_errf(err, LNC_ECORRUPT, "%s: data file %s lists %zu fields but %zu column "
                                         "indices",
                      what, df->path, df->n_fields, df->n_column_indices);
    /* 2.x, or legacy (0.1/0.2; older manifests leave both numbers 0) */
    if (df->file_major_version != 2 && !(df->file_major_version == 0 && df->file_minor_version < 3))
      return lnc_errf(err, LNC_EUNSUPPORTED, "%s: data file %s is Lance file format %u.%u; "
                                             "only legacy (0.1, 0.2) and 2.x are supported",
                      what, df->path, df->file_major_version,
                      df->file_minor_version);
  }
  const Lance__Table__DeletionFile *del = fr->deletion_file;
  if (del) {
    if (del->file_type != LANCE__TABLE__DELETION_FILE__DELETION_FILE_TYPE__ARROW_ARRAY &&
        del->file_type != LANCE__TABLE__DELETION_FILE__DELETION_FILE_TYPE__BITMAP)
      return lnc_errf(err, LNC_EUNSUPPORTED, "%s: fragment %llu: unknown deletion file type %d",
                      what, (unsigned long long)fr->id, (int)del->file_type);
    if (del->num_deleted_rows > fr->physical_rows)
      return lnc_errf(err, LNC_ECORRUPT, "%s: fragment %llu: %llu deleted rows of %llu", what,
                      (unsigned long long)fr->id, (unsigned long long)del->num_deleted_rows,
                      (unsigned long long)fr->physical_rows);
  }
  (void)idx;
  return 0;
}

int lnc_ds_manifest_parse(const uint8_t *src, size_t len, const char *what,
                          Lance__Table__Manifest **out, struct lnc_error *err) {
  *out = NULL;
  if (len < TAIL + 4)
    return lnc_errf(err, LNC_ECORRUPT, "%s: manifest is %zu bytes, too short (torn write?)",
                    what, len);
  const uint8_t *tail = src + len - TAIL;
  if (memcmp(tail + 12, "LANC", 4) != 0)
    return lnc_errf(err, LNC_ECORRUPT, "%s: manifest does not end with \"LANC\" (torn write?)",
                    what);
  uint64_t pos = lnc_rd64(tail);
  if (pos > len - TAIL - 4)
    return lnc_errf(err, LNC_ECORRUPT, "%s: manifest position %llu outside the %zu-byte file",
                    what, (unsigned long long)pos, len);
  uint32_t mlen = lnc_rd32(src + pos);
  if ((uint64_t)pos + 4 + mlen != len - TAIL)
    return lnc_errf(err, LNC_ECORRUPT, "%s: manifest length %u at %llu does not end at the "
                                       "tail (%zu)",
                    what, mlen, (unsigned long long)pos, len - TAIL);
  Lance__Table__Manifest *m = lance__table__manifest__unpack(NULL, mlen, src + pos + 4);
  if (!m)
    return lnc_errf(err, LNC_ECORRUPT, "%s: manifest protobuf does not parse", what);
  int rc = 0;
  uint64_t unknown = m->reader_feature_flags & ~(uint64_t)LNC_DS_KNOWN_READER_FLAGS;
  if (unknown) {
    rc = lnc_errf(err, LNC_EUNSUPPORTED, "%s: manifest needs reader features 0x%llx that "
                                         "lanced does not implement%s",
                  what, (unsigned long long)unknown,
                  (unknown & 64) ? " (data overlay files)" : "");
    goto fail;
  }
  if ((rc = check_fields(m, what, err))) goto fail;
  if ((rc = lnc_ds_bases_check(m, what, err))) goto fail;
  for (size_t i = 0; i < m->n_fragments; i++)
    if ((rc = check_fragment(m->fragments[i], i, what, err))) goto fail;
  *out = m;
  return 0;
fail:
  lance__table__manifest__free_unpacked(m, NULL);
  return rc;
}
