/* Self-owning ArrowSchema / ArrowArray allocation (see builder.h). One private block per
 * node holds the child pointer table, the child structs and the owned buffers, so the
 * release callback is a short, obviously complete walk. */
#include "builder.h"
#include "../lance.h"
#include "../io/io.h"
#include <stdlib.h>
#include <string.h>

struct schema_priv {
  char *format, *name, *metadata;
  struct ArrowSchema **child_ptrs;
  struct ArrowSchema *child_mem;
};

static void schema_release(struct ArrowSchema *s) {
  struct schema_priv *p = s->private_data;
  for (int64_t i = 0; i < s->n_children; i++)
    if (s->children[i]->release) s->children[i]->release(s->children[i]);
  if (s->dictionary && s->dictionary->release) s->dictionary->release(s->dictionary);
  free(s->dictionary);
  if (p) {
    free(p->format);
    free(p->name);
    free(p->metadata);
    free(p->child_ptrs);
    free(p->child_mem);
    free(p);
  }
  s->release = NULL;
}

int lnc_schema_init(struct ArrowSchema *out, const char *format, const char *name,
                    int64_t flags, int64_t n_children) {
  memset(out, 0, sizeof *out);
  struct schema_priv *p = calloc(1, sizeof *p);
  if (!p) return LNC_ENOMEM;
  p->format = strdup(format);
  p->name = name ? strdup(name) : NULL;
  if (n_children > 0) {
    p->child_ptrs = calloc((size_t)n_children, sizeof *p->child_ptrs);
    p->child_mem = calloc((size_t)n_children, sizeof *p->child_mem);
  }
  if (!p->format || (name && !p->name) ||
      (n_children > 0 && (!p->child_ptrs || !p->child_mem))) {
    free(p->format);
    free(p->name);
    free(p->child_ptrs);
    free(p->child_mem);
    free(p);
    return LNC_ENOMEM;
  }
  for (int64_t i = 0; i < n_children; i++) p->child_ptrs[i] = &p->child_mem[i];
  out->format = p->format;
  out->name = p->name;
  out->flags = flags;
  out->n_children = n_children;
  out->children = p->child_ptrs;
  out->release = schema_release;
  out->private_data = p;
  return 0;
}

int lnc_schema_set_name(struct ArrowSchema *s, const char *name) {
  /* Only schemas made here own their name through schema_priv. */
  if (s->release != schema_release) return LNC_EINVAL;
  struct schema_priv *p = s->private_data;
  char *copy = strdup(name);
  if (!copy) return LNC_ENOMEM;
  free(p->name);
  p->name = copy;
  s->name = copy;
  return 0;
}

int lnc_schema_set_metadata(struct ArrowSchema *s, const char *const *keys,
                            const char *const *values, int32_t n) {
  struct schema_priv *p = s->private_data;
  size_t total = 4;
  for (int32_t i = 0; i < n; i++) total += 8 + strlen(keys[i]) + strlen(values[i]);
  char *m = malloc(total), *w = m;
  if (!m) return LNC_ENOMEM;
  memcpy(w, &n, 4);
  w += 4;
  for (int32_t i = 0; i < n; i++) {
    int32_t kl = (int32_t)strlen(keys[i]), vl = (int32_t)strlen(values[i]);
    memcpy(w, &kl, 4);
    w += 4;
    memcpy(w, keys[i], (size_t)kl);
    w += kl;
    memcpy(w, &vl, 4);
    w += 4;
    memcpy(w, values[i], (size_t)vl);
    w += vl;
  }
  free(p->metadata);
  p->metadata = m;
  s->metadata = m;
  return 0;
}

struct array_priv {
  void **owned; /* n_buffers owned pointers */
  const void **buffers;
  struct ArrowArray **child_ptrs;
  struct ArrowArray *child_mem;
  struct lnc_filevals *fv; /* or NULL */
};

void lnc_filevals_free(struct lnc_filevals *fv) {
  if (!fv) return;
  for (size_t i = 0; i < fv->n_maps; i++) lnc_filemap_unref(fv->maps[i]);
  free(fv->maps);
  free(fv->off);
  free(fv->file);
  free(fv);
}

static void array_release(struct ArrowArray *a) {
  struct array_priv *p = a->private_data;
  for (int64_t i = 0; i < a->n_children; i++)
    if (a->children[i]->release) a->children[i]->release(a->children[i]);
  if (a->dictionary && a->dictionary->release) a->dictionary->release(a->dictionary);
  free(a->dictionary);
  if (p) {
    for (int64_t i = 0; i < a->n_buffers; i++) free(p->owned[i]);
    free(p->owned);
    free(p->buffers);
    free(p->child_ptrs);
    free(p->child_mem);
    lnc_filevals_free(p->fv);
    free(p);
  }
  a->release = NULL;
}

int lnc_array_set_filevals(struct ArrowArray *a, struct lnc_filevals *fv) {
  if (a->release != array_release) {
    lnc_filevals_free(fv);
    return LNC_EINVAL;
  }
  struct array_priv *p = a->private_data;
  lnc_filevals_free(p->fv);
  p->fv = fv;
  return 0;
}

const struct lnc_filevals *lnc_array_filevals(const struct ArrowArray *a) {
  if (!a || a->release != array_release) return NULL;
  return ((const struct array_priv *)a->private_data)->fv;
}

int lnc_array_init(struct ArrowArray *out, int64_t length, int64_t null_count,
                   int64_t n_buffers, int64_t n_children) {
  memset(out, 0, sizeof *out);
  struct array_priv *p = calloc(1, sizeof *p);
  if (!p) return LNC_ENOMEM;
  size_t nb = n_buffers > 0 ? (size_t)n_buffers : 1;
  p->owned = calloc(nb, sizeof *p->owned);
  p->buffers = calloc(nb, sizeof *p->buffers);
  if (n_children > 0) {
    p->child_ptrs = calloc((size_t)n_children, sizeof *p->child_ptrs);
    p->child_mem = calloc((size_t)n_children, sizeof *p->child_mem);
  }
  if (!p->owned || !p->buffers || (n_children > 0 && (!p->child_ptrs || !p->child_mem))) {
    free(p->owned);
    free(p->buffers);
    free(p->child_ptrs);
    free(p->child_mem);
    free(p);
    return LNC_ENOMEM;
  }
  for (int64_t i = 0; i < n_children; i++) p->child_ptrs[i] = &p->child_mem[i];
  out->length = length;
  out->null_count = null_count;
  out->n_buffers = n_buffers;
  out->n_children = n_children;
  out->buffers = p->buffers;
  out->children = p->child_ptrs;
  out->release = array_release;
  out->private_data = p;
  return 0;
}

void lnc_array_set_buffer(struct ArrowArray *a, int64_t i, void *buf) {
  struct array_priv *p = a->private_data;
  free(p->owned[i]);
  p->owned[i] = buf;
  p->buffers[i] = buf;
}

void lnc_schema_release(struct ArrowSchema *s) {
  if (s && s->release) s->release(s);
}

void lnc_array_release(struct ArrowArray *a) {
  if (a && a->release) a->release(a);
}
