/* See support.h: fixtures, index.json, answers lines. */
#include "support.h"
#include "lance/table.pb-c.h"
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct json_t *tsup_load_index(const char *path, const char *who) {
  json_error_t jerr;
  json_t *j = json_load_file(path, 0, &jerr);
  if (!j) {
    fprintf(stderr, "%s: cannot load %s: %s (line %d)\n", who, path, jerr.text, jerr.line);
    return NULL;
  }
  if (!json_is_array(json_object_get(j, "fixtures"))) {
    fprintf(stderr, "%s: %s has no fixtures array\n", who, path);
    json_decref(j);
    return NULL;
  }
  return j;
}

char *tsup_fixture_file(const char *name) {
  json_error_t jerr;
  json_t *idx = json_load_file(TSUP_INDEX, 0, &jerr);
  if (!idx) return NULL;
  char *path = NULL;
  size_t i;
  json_t *fx;
  json_array_foreach(json_object_get(idx, "fixtures"), i, fx) {
    const char *n = json_string_value(json_object_get(fx, "name"));
    const char *file = json_string_value(json_object_get(fx, "file"));
    if (n && file && strcmp(n, name) == 0) {
      free(path);
      path = strdup(file);
    }
  }
  json_decref(idx);
  return path;
}

const struct tsup_ds_fixture tsup_ds_fixtures[] = {
    {"multi_v21", 3},
    {"multi_v22", 3},
    {"deletions_v21", 8},
    {"deletions_v22", 8},
    {"addcol_v21", 4},
    {"addcol_v22", 4},
    {"compacted_v22", 8},
    {"multi_v20", 3},
    {"deletions_v20", 8},
    {"addcol_v20", 4},
    {"dict_v20", 4},
    {"dict_v21", 4},
    {"dict_v22", 4},
    {"renamed_v20", 10},
    {"renamed_v21", 10},
    {"renamed_v22", 10},
    {"nodata_v20", 7},
    {"nodata_v21", 7},
    {"nodata_v22", 7},
    {"subcol_v22", 8},
    {"subnull_v22", 7},
    {"map_v22", 4},
    {"tags_v22", 5},
    /* legacy files (footer 0.2): answers from Lance's scan (gen-datasets.mjs) */
    {"multi_v01", 3},
    {"deletions_v01", 8},
    {"addcol_v01", 4},
    {"renamed_v01", 10},
};
const size_t tsup_n_ds_fixtures = sizeof tsup_ds_fixtures / sizeof tsup_ds_fixtures[0];
/* Versions start at the source's (5) when cloned; clone2 is a clone of clone_v22. */
const struct tsup_ds_fixture tsup_clone_fixtures[] = {
    {"clone_v20", 8},
    {"clone_v21", 8},
    {"clone_v22", 8},
    {"clone2_v22", 9},
};
const size_t tsup_n_clone_fixtures = sizeof tsup_clone_fixtures / sizeof tsup_clone_fixtures[0];

size_t tsup_ds_tags(const char *name, char **tags, uint64_t *versions, size_t cap) {
  char path[512];
  snprintf(path, sizeof path, TSUP_DS_DIR "/%s.tags", name);
  char *text = (char *)tsup_read_file(path, NULL);
  ck_assert_msg(text != NULL, "%s is missing", path);
  size_t n = 0;
  for (char *line = strtok(text, "\n"); line && n < cap; line = strtok(NULL, "\n"), n++) {
    char *fld[2];
    ck_assert(tsup_split_tabs(line, fld, 2));
    tags[n] = strdup(fld[0]);
    versions[n] = strtoull(fld[1], NULL, 10);
  }
  free(text);
  return n;
}

void tsup_ds_copy(const char *name, const char *dir, const char *as) {
  tsup_sh("cp -r " TSUP_DS_DIR "/%s.lance %s/%s", name, dir, as);
}

bool tsup_split_tabs(char *line, char **fields, int n) {
  for (int i = 0; i < n; i++) {
    fields[i] = line;
    if (i == n - 1) break;
    char *t = line ? strchr(line, '\t') : NULL;
    if (!t) return false;
    *t = 0;
    line = t + 1;
  }
  return true;
}

uint64_t *tsup_parse_ids(const char *s, size_t *n) {
  size_t cap = 16, k = 0;
  uint64_t *v = malloc(cap * sizeof *v);
  ck_assert_ptr_nonnull(v);
  ck_assert(*s == '[');
  s++;
  while (*s && *s != ']') {
    char *end;
    unsigned long long x = strtoull(s, &end, 10);
    ck_assert_ptr_ne(end, s);
    if (k == cap) v = realloc(v, (cap *= 2) * sizeof *v);
    ck_assert_ptr_nonnull(v);
    v[k++] = x;
    s = end;
    if (*s == ',') s++;
  }
  *n = k;
  return v;
}

void tsup_edit_manifest(const char *path, void (*fn)(Lance__Table__Manifest *m, const void *arg), const void *arg) {
  size_t len;
  uint8_t *d = tsup_read_file(path, &len);
  ck_assert_msg(d != NULL, "%s is missing", path);
  uint64_t pos;
  memcpy(&pos, d + len - 16, 8);
  uint32_t ml;
  memcpy(&ml, d + pos, 4);
  Lance__Table__Manifest *m = lance__table__manifest__unpack(NULL, ml, d + pos + 4);
  ck_assert_ptr_nonnull(m);
  fn(m, arg);
  size_t nl = lance__table__manifest__get_packed_size(m);
  uint8_t *o = malloc(4 + nl + 16);
  uint32_t nl32 = (uint32_t)nl;
  memcpy(o, &nl32, 4);
  lance__table__manifest__pack(m, o + 4);
  uint64_t zero = 0;
  memcpy(o + 4 + nl, &zero, 8);
  memcpy(o + 4 + nl + 8, d + len - 8, 8);
  FILE *f = fopen(path, "wb");
  fwrite(o, 1, 4 + nl + 16, f);
  fclose(f);
  lance__table__manifest__free_unpacked(m, NULL);
  free(o);
  free(d);
}
