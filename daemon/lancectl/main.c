/* lancectl: look inside Lance files and take rows from them with the same library and the
 * same encoders the daemon uses, so `lancectl take` prints exactly the body lanced serves.
 * Exit codes: 0 ok, 1 bad input (usage, ids, columns), 2 unreadable or unsupported file. */
#include "lance.h"
#include "util/buf.h"
#include "util/parse.h"
#include "util/version.h"
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

int lnc_cli_bench(int argc, char **argv); /* bench.c */

static void usage(FILE *o) {
  fprintf(o,
          "usage: lancectl inspect FILE [--json]\n"
          "       lancectl take FILE --ids 1,5,9 [--columns a,b.c] [--format json|arrow] [--version N|TAG] [--tag TAG]\n"
          "                     [--blobs bytes|descriptors]   (--row-ids 1,5,9: Lance row ids, not offsets)\n"
          "       lancectl bench FILE [--columns a,b] [--batch N] [--threads T] [--seconds S]\n"
          "                     [--io direct|buffered]\n"
          "FILE is a Lance data file (.lance), a dataset directory, or (inspect, take) a data\n"
          "file in S3 or an S3-compatible store: s3://bucket/key, with AWS_ENDPOINT_URL,\n"
          "AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN.\n"
          "       lancectl --version | --help\n"
          "exit codes: 0 ok, 1 bad input, 2 unreadable or unsupported file\n");
}

static int exit_code(int code) {
  return (code == LNC_EINVAL || code == LNC_ERANGE || code == LNC_ELIMIT) ? 1 : 2;
}

/* Parses "1,5,9" strictly: decimal u64s, no blanks, no empty items. */
static int parse_ids(const char *s, uint64_t **out, size_t *n) {
  uint64_t *ids = NULL;
  size_t cap = 0, k = 0;
  for (const char *p = s;; p++) {
    size_t len = strcspn(p, ",");
    if (lnc_grow_array((void **)&ids, &cap, k + 1, sizeof *ids) || !lnc_parse_u64(p, len, &ids[k])) {
      free(ids);
      return -1;
    }
    k++;
    p += len;
    if (!*p) break;
  }
  *out = ids;
  *n = k;
  return 0;
}

static size_t split_columns(char *s, char ***out) {
  size_t n = 1;
  for (char *p = s; *p; p++) n += *p == ',';
  char **cols = calloc(n, sizeof *cols);
  if (!cols) return 0;
  size_t k = 0;
  for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) cols[k++] = tok;
  *out = cols;
  return k;
}

/* An s3://bucket/key object (settings from AWS's environment variables) or a local file. */
static bool is_s3(const char *p) { return strncmp(p, "s3://", 5) == 0; }
static int open_file(const char *path, lnc_file **f, struct lnc_error *err) {
  return is_s3(path) ? lnc_file_open_s3(path, f, err) : lnc_file_open(path, f, err);
}

static bool is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void print_field(json_t *f, int indent) {
  printf("%*s%s: %s%s", indent, "", json_string_value(json_object_get(f, "name")),
         json_string_value(json_object_get(f, "type")),
         json_is_true(json_object_get(f, "nullable")) ? " (nullable)" : "");
  json_t *col = json_object_get(f, "column");
  if (col) printf("  [column %lld]", (long long)json_integer_value(col));
  if (json_is_true(json_object_get(f, "packed"))) printf(" packed");
  if (json_is_true(json_object_get(f, "blob"))) printf(" blob");
  const char *why = json_string_value(json_object_get(f, "unsupported"));
  if (why) printf("  UNSUPPORTED: %s", why);
  printf("\n");
  size_t i;
  json_t *c;
  json_array_foreach(json_object_get(f, "children"), i, c) print_field(c, indent + 2);
}

static void print_encoding(json_t *e, int indent) {
  const char *layout = json_string_value(json_object_get(e, "layout"));
  printf("%*slayout %s", indent, "", layout ? layout : "?");
  const char *tree = json_string_value(json_object_get(e, "tree"));
  if (tree) printf(": %s (reads per row: %s)", tree, json_string_value(json_object_get(e, "reads_per_row")));
  const char *keys[] = {"values", "rep", "def", "dictionary"};
  for (size_t k = 0; k < 4; k++) {
    json_t *v = json_object_get(e, keys[k]);
    if (v) printf("\n%*s%s: %s", indent + 2, "", keys[k], json_string_value(v));
  }
  json_t *layers = json_object_get(e, "layers");
  if (layers) {
    printf("\n%*slayers:", indent + 2, "");
    size_t i;
    json_t *l;
    json_array_foreach(layers, i, l) printf(" %s", json_string_value(l));
  }
  json_t *inner = json_object_get(e, "inner");
  printf("\n");
  if (inner) print_encoding(inner, indent + 2);
}

/* A dataset as text (the same description --json prints): version, rows, schema, fragments. */
/* Whether the base path with id `id` (a JSON integer) of a described dataset is a dataset
 * root: its data files are then below its data/, else directly below it. */
static bool base_is_dataset(const json_t *d, const json_t *id) {
  size_t i;
  json_t *b;
  json_array_foreach(json_object_get(d, "base_paths"), i, b) {
    if (json_integer_value(json_object_get(b, "id")) == json_integer_value(id))
      return json_is_true(json_object_get(b, "is_dataset_root"));
  }
  return true;
}

static void print_dataset(const json_t *d) {
  const json_t *vs = json_object_get(d, "versions");
  printf("dataset %s: version %lld (%zu versions), data files %s, %lld live rows of %lld\n",
         json_string_value(json_object_get(d, "path")),
         (long long)json_integer_value(json_object_get(d, "version")), json_array_size(vs),
         json_string_value(json_object_get(d, "data_format")),
         (long long)json_integer_value(json_object_get(d, "num_rows")),
         (long long)json_integer_value(json_object_get(d, "num_physical_rows")));
  printf("written by %s %s\nschema:\n", json_string_value(json_object_get(d, "writer")),
         json_string_value(json_object_get(d, "writer_version")));
  size_t i;
  json_t *f;
  json_array_foreach(json_object_get(d, "schema"), i, f) {
    if (json_integer_value(json_object_get(f, "parent_id")) != -1) continue;
    printf("  %s: %s%s\n", json_string_value(json_object_get(f, "name")),
           json_string_value(json_object_get(f, "logical_type")),
           json_is_true(json_object_get(f, "nullable")) ? " (nullable)" : "");
  }
  /* A shallow clone's sources: files below them are printed with their base path's id. */
  json_array_foreach(json_object_get(d, "base_paths"), i, f) {
    if (!i) printf("base paths (files below another directory):\n");
    printf("  base %lld: %s%s\n", (long long)json_integer_value(json_object_get(f, "id")),
           json_string_value(json_object_get(f, "path")),
           json_is_true(json_object_get(f, "is_dataset_root")) ? " (a dataset)" : "");
  }
  printf("fragments:\n");
  json_array_foreach(json_object_get(d, "fragments"), i, f) {
    const json_t *del = json_object_get(f, "deletion_file");
    printf("  fragment %lld: %lld rows, %lld live", (long long)json_integer_value(json_object_get(f, "id")),
           (long long)json_integer_value(json_object_get(f, "physical_rows")),
           (long long)json_integer_value(json_object_get(f, "live_rows")));
    if (json_is_object(del))
      printf(" (%lld deleted: %s%s)", (long long)json_integer_value(json_object_get(del, "num_deleted_rows")),
             json_string_value(json_object_get(del, "type")), json_object_get(del, "base_id") ? ", below a base" : "");
    printf("\n");
    size_t k;
    json_t *df;
    json_array_foreach(json_object_get(f, "data_files"), k, df) {
      const json_t *base = json_object_get(df, "base_id");
      if (base)
        printf("    base %lld: %s", (long long)json_integer_value(base), base_is_dataset(d, base) ? "data/" : "");
      else
        printf("    data/");
      printf("%s: file version %s, %lld bytes\n", json_string_value(json_object_get(df, "path")),
             json_string_value(json_object_get(df, "file_version")),
             (long long)json_integer_value(json_object_get(df, "size")));
    }
  }
}

static int cmd_inspect(const char *path, bool as_json) {
  struct lnc_error err = {0};
  struct lnc_buf out = {0};
  int rc;
  if (is_dir(path)) {
    lnc_dataset *ds;
    if ((rc = lnc_dataset_open(path, 0, &ds, &err))) goto fail;
    rc = lnc_dataset_describe_json(ds, &out, &err);
    lnc_dataset_close(ds);
    if (rc) goto fail;
    json_error_t jerr;
    json_t *d = as_json ? NULL : json_loadb((const char *)out.data, out.len, 0, &jerr);
    if (d)
      print_dataset(d);
    else
      fwrite(out.data, 1, out.len, stdout), printf("\n");
    json_decref(d);
    lnc_buf_free(&out);
    return 0;
  }
  lnc_file *f;
  if ((rc = open_file(path, &f, &err))) goto fail;
  rc = lnc_file_describe_json(f, &out, &err);
  lnc_file_close(f);
  if (rc) goto fail;
  if (as_json) {
    fwrite(out.data, 1, out.len, stdout);
    printf("\n");
    lnc_buf_free(&out);
    return 0;
  }
  json_error_t jerr;
  json_t *d = json_loadb((const char *)out.data, out.len, 0, &jerr);
  lnc_buf_free(&out);
  if (!d) {
    fprintf(stderr, "lancectl: internal error: %s\n", jerr.text);
    return 2;
  }
  printf("file: %s\nversion: %s\nrows: %lld\nbytes: %lld\nschema:\n", path,
         json_string_value(json_object_get(d, "version")),
         (long long)json_integer_value(json_object_get(d, "num_rows")),
         (long long)json_integer_value(json_object_get(d, "file_bytes")));
  size_t i, j;
  json_t *f2, *c, *p;
  json_array_foreach(json_object_get(d, "schema"), i, f2) print_field(f2, 2);
  printf("columns:\n");
  json_array_foreach(json_object_get(d, "columns"), i, c) {
    json_t *pages = json_object_get(c, "pages");
    printf("  column %lld %s: %zu page%s, %lld bytes\n", (long long)json_integer_value(json_object_get(c, "column")),
           json_string_value(json_object_get(c, "field")), json_array_size(pages),
           json_array_size(pages) == 1 ? "" : "s", (long long)json_integer_value(json_object_get(c, "bytes")));
    const char *why = json_string_value(json_object_get(c, "unsupported"));
    if (why) printf("    UNSUPPORTED: %s\n", why);
    json_array_foreach(pages, j, p) {
      printf("    page %zu: rows %lld..%lld, buffers", j, (long long)json_integer_value(json_object_get(p, "row_start")),
             (long long)(json_integer_value(json_object_get(p, "row_start")) + json_integer_value(json_object_get(p, "rows"))));
      size_t k;
      json_t *b;
      json_array_foreach(json_object_get(p, "buffers"), k, b) printf(" %lld", (long long)json_integer_value(b));
      printf("\n");
      print_encoding(json_object_get(p, "encoding"), 6);
    }
  }
  json_decref(d);
  return 0;
fail:
  fprintf(stderr, "lancectl: %s\n", err.message);
  lnc_buf_free(&out);
  return exit_code(rc);
}

static int cmd_take(int argc, char **argv) {
  const char *path = argv[0], *ids_s = NULL, *format = "json";
  char *cols_s = NULL;
  uint64_t version = 0;
  const char *tag = NULL; /* --version that is not a number: a tag of the dataset */
  struct lnc_take_options opts = {.blobs = LNC_BLOBS_BYTES};
  for (int i = 1; i < argc; i++) {
    if ((strcmp(argv[i], "--ids") == 0 || strcmp(argv[i], "--row-ids") == 0) && i + 1 < argc) {
      if (ids_s) {
        fprintf(stderr, "lancectl: give --ids or --row-ids, once\n");
        return 1;
      }
      opts.ids = argv[i][2] == 'r' ? LNC_IDS_ROW_IDS : LNC_IDS_OFFSETS;
      ids_s = argv[++i];
    } else if (strcmp(argv[i], "--columns") == 0 && i + 1 < argc)
      cols_s = argv[++i];
    else if (strcmp(argv[i], "--format") == 0 && i + 1 < argc)
      format = argv[++i];
    else if (strcmp(argv[i], "--version") == 0 && i + 1 < argc) {
      const char *v = argv[++i];
      if (*v && strspn(v, "0123456789") == strlen(v))
        version = strtoull(v, NULL, 10);
      else
        tag = v;
    } else if (strcmp(argv[i], "--tag") == 0 && i + 1 < argc) {
      tag = argv[++i]; /* always a tag, digits only too */
    } else if (strcmp(argv[i], "--blobs") == 0 && i + 1 < argc) {
      const char *m = argv[++i];
      if (strcmp(m, "bytes") == 0)
        opts.blobs = LNC_BLOBS_BYTES;
      else if (strcmp(m, "descriptors") == 0)
        opts.blobs = LNC_BLOBS_DESCRIPTORS;
      else {
        fprintf(stderr, "lancectl: unknown blob mode '%s' (bytes or descriptors)\n", m);
        return 1;
      }
    } else {
      usage(stderr);
      return 1;
    }
  }
  if (!ids_s) {
    fprintf(stderr, "lancectl: take needs --ids (or --row-ids)\n");
    return 1;
  }
  if (strcmp(format, "json") && strcmp(format, "arrow")) {
    fprintf(stderr, "lancectl: unknown format '%s' (json or arrow)\n", format);
    return 1;
  }
  uint64_t *ids;
  size_t n;
  if (parse_ids(ids_s, &ids, &n)) {
    fprintf(stderr, "lancectl: malformed ids '%s': expected comma-separated unsigned integers\n", ids_s);
    return 1;
  }
  char **cols = NULL;
  size_t ncols = 0;
  char *cols_copy = cols_s ? strdup(cols_s) : NULL;
  if (cols_copy) {
    ncols = split_columns(cols_copy, &cols);
    if (ncols == 0) {
      fprintf(stderr, "lancectl: empty --columns\n");
      free(ids);
      free(cols_copy);
      free(cols);
      return 1;
    }
  }
  struct lnc_error err = {0};
  struct ArrowSchema schema;
  struct ArrowArray array;
  struct lnc_buf out = {0};
  int rc;
  if (is_dir(path)) {
    lnc_dataset *ds;
    rc = tag ? lnc_dataset_tag(path, tag, &version, &err) : 0;
    if (!rc) rc = lnc_dataset_open(path, version, &ds, &err);
    if (!rc) {
      rc = lnc_dataset_take_ex(ds, ids, n, (const char *const *)cols, ncols, &opts, &schema, &array, NULL, &err);
      lnc_dataset_close(ds);
    }
  } else if (is_s3(path)) {
    /* An object: the file's own take (the engine's search cache is for local files yet). */
    lnc_file *f;
    rc = lnc_file_open_s3(path, &f, &err);
    if (!rc) {
      rc = lnc_take_ex(f, ids, n, (const char *const *)cols, ncols, &opts, &schema, &array, NULL, &err);
      lnc_file_close(f);
    }
  } else {
    /* Through the take engine, as the daemon reads (buffered: one-shot CLI reads gain
     * nothing from bypassing the page cache). */
    struct lnc_engine_config cfg;
    lnc_engine_config_default(&cfg);
    cfg.io_mode = LNC_IO_BUFFERED;
    lnc_engine *e = NULL;
    lnc_worker *w = NULL;
    rc = lnc_engine_new(&cfg, &e, &err);
    if (!rc) rc = lnc_worker_new(e, &w, &err);
    if (!rc) rc = lnc_engine_take(w, path, ids, n, (const char *const *)cols, ncols, &opts, &schema, &array, NULL, &err);
    lnc_worker_free(w);
    lnc_engine_free(e);
  }
  free(ids);
  free(cols);
  free(cols_copy);
  if (rc) {
    fprintf(stderr, "lancectl: %s\n", err.message);
    return exit_code(rc);
  }
  rc = strcmp(format, "json") == 0 ? lnc_encode_json(&schema, &array, &out, &err)
                                   : lnc_encode_arrow_ipc(&schema, &array, &out, &err);
  array.release(&array);
  schema.release(&schema);
  if (rc) {
    fprintf(stderr, "lancectl: %s\n", err.message);
    lnc_buf_free(&out);
    return exit_code(rc);
  }
  fwrite(out.data, 1, out.len, stdout);
  /* Exactly the daemon's body; a newline only for a terminal, so the prompt starts on a
   * line of its own (a pipe or a file gets the bytes the HTTP body has). */
  if (strcmp(format, "json") == 0 && isatty(STDOUT_FILENO)) fputc('\n', stdout);
  lnc_buf_free(&out);
  return 0;
}

int main(int argc, char **argv) {
  /* --help or -h anywhere (`lancectl take --help` included) is a request for the usage, not an
   * incomplete command: to stdout, exit 0. */
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage(stdout);
      return 0;
    }
  if (argc == 2 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))) {
    printf("lancectl %s\n", LNC_RELEASE);
    return 0;
  }
  if (argc < 3) {
    usage(stderr);
    return 1;
  }
  if (strcmp(argv[1], "inspect") == 0)
    return cmd_inspect(argv[2], argc > 3 && strcmp(argv[3], "--json") == 0);
  if (strcmp(argv[1], "take") == 0) return cmd_take(argc - 2, argv + 2);
  if (strcmp(argv[1], "bench") == 0) return lnc_cli_bench(argc - 2, argv + 2);
  usage(stderr);
  return 1;
}
