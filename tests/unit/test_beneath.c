/* lib/util/beneath.c: the one helper that opens beneath a directory. Every kind of escape is
 * refused on both paths — openat2(RESOLVE_BENEATH) and the component-by-component fallback for
 * kernels without it — and paths that stay beneath open. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lance.h"
#include "support/support.h"
#include "util/beneath.h"

static char *base; /* base/root is the directory opened beneath; base/outside is not */
static int rootfd;

static void setup(void) {
  base = tsup_mkdtemp("lnc-beneath");
  ck_assert_ptr_nonnull(base);
  tsup_sh("mkdir -p %s/root/a/b %s/outside && echo in > %s/root/a/b/f && echo out > %s/outside/secret"
          " && ln -s ../../outside %s/root/a/up"                                      /* middle component escapes */
          " && ln -s %s/outside/secret %s/root/abs"                                   /* last component, absolute target */
          " && ln -s ../outside %s/root/first"                                        /* first component escapes */
          " && ln -s chain2 %s/root/chain1 && ln -s ../outside/secret %s/root/chain2" /* a chain out */
          " && ln -s b/f %s/root/a/inside",                                           /* stays beneath */
          base, base, base, base, base, base, base, base, base, base, base);
  char root[4200];
  snprintf(root, sizeof root, "%s/root", base);
  rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ck_assert_int_ge(rootfd, 0);
}

static void teardown(void) {
  close(rootfd);
  tsup_rmtree(base);
  free(base);
}

static void refused(const char *rel, bool walk) {
  errno = 0;
  int fd = lnc_beneath_open(rootfd, rel, 0, walk);
  if (fd >= 0) close(fd);
  ck_assert_msg(fd < 0 && (errno == EXDEV || errno == ELOOP),
                "%s (%s) was not refused: fd %d errno %d", rel, walk ? "walk" : "openat2", fd, errno);
}

static void opens(const char *rel, bool walk) {
  int fd = lnc_beneath_open(rootfd, rel, 0, walk);
  ck_assert_msg(fd >= 0, "%s (%s): %s", rel, walk ? "walk" : "openat2", strerror(errno));
  char buf[8] = {0};
  ck_assert_int_eq(read(fd, buf, sizeof buf - 1), 3);
  ck_assert_str_eq(buf, "in\n");
  close(fd);
}

START_TEST(test_escapes_refused) {
  bool walk = _i == 1;
  refused("../outside/secret", walk);      /* ".." first */
  refused("a/../../outside/secret", walk); /* ".." in the middle */
  refused("a/b/..", walk);                 /* ".." last */
  refused("/etc/passwd", walk);            /* absolute */
  refused("first/secret", walk);           /* a symlink out, first component */
  refused("a/up/secret", walk);            /* a symlink out, middle component */
  refused("abs", walk);                    /* a symlink out, last component (absolute target) */
  refused("chain1", walk);                 /* a chain of symlinks that ends outside */
  opens("a/b/f", walk);
  opens("a//b/./f", walk); /* empty and "." components stay put */
}
END_TEST

/* A symlink that stays beneath: openat2 follows it; the walk, stricter, refuses every symlink. */
START_TEST(test_symlink_inside) {
  opens("a/inside", false);
  refused("a/inside", true);
}
END_TEST

START_TEST(test_public_entry_point) {
  int fd = lnc_open_beneath(rootfd, "a/b/f", 0);
  ck_assert_int_ge(fd, 0);
  close(fd);
  errno = 0;
  ck_assert_int_lt(lnc_open_beneath(rootfd, "a/up/secret", 0), 0);
  ck_assert(errno == EXDEV || errno == ELOOP);
  ck_assert_int_lt(lnc_open_beneath(rootfd, "", 0), 0);
  ck_assert_int_lt(lnc_open_beneath(rootfd, NULL, 0), 0);
}
END_TEST

/* lnc_abs_path: a shallow clone's base path as Lance takes it (lexically; no file looked at). */
static void abs_is(const char *uri, const char *want) {
  char out[64];
  int rc = lnc_abs_path(uri, out, sizeof out);
  if (!want) {
    ck_assert_msg(rc == -1, "'%s' should be refused, got '%s'", uri, rc ? "" : out);
    return;
  }
  ck_assert_msg(rc == 0, "'%s' refused", uri);
  ck_assert_msg(!strcmp(out, want), "'%s' -> '%s', want '%s'", uri, out, want);
}

START_TEST(test_abs_path) {
  abs_is("/srv/lance/src.lance", "/srv/lance/src.lance");
  abs_is("//srv//lance/./src.lance/", "/srv/lance/src.lance");
  abs_is("/srv/x/../lance/src.lance", "/srv/lance/src.lance");
  abs_is("/../../srv", "/srv"); /* above / is / */
  abs_is("/srv/..", "/");
  abs_is("/", "/");
  abs_is("/a b%20c", "/a b%20c"); /* a plain path is not decoded */
  abs_is("file:///a%20b%2520c/x", "/a b%20c/x");
  abs_is("file://localhost/srv/x", "/srv/x");
  abs_is("file:///srv/%2e%2e/x", "/x"); /* decoded first, then a component like any other */
  abs_is("file:///srv/a%2Fb", NULL);    /* an escaped '/' would split a name */
  abs_is("file:///srv/a%00b", NULL);
  abs_is("file:///srv/a%2", NULL);
  abs_is("file:///srv/a%zz", NULL);
  abs_is("file://host/srv/x", NULL);
  abs_is("srv/x", NULL);
  abs_is("", NULL);
  abs_is("s3://bucket/x", NULL);
  abs_is("/this/path/is/longer/than/the/sixty/four/bytes/of/the/buffer/here", NULL);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("beneath");
  TCase *t = tcase_create("beneath");
  tcase_add_checked_fixture(t, setup, teardown);
  tcase_add_loop_test(t, test_escapes_refused, 0, 2); /* 0: openat2, 1: the fallback walk */
  tcase_add_test(t, test_symlink_inside);
  tcase_add_test(t, test_public_entry_point);
  tcase_add_test(t, test_abs_path);
  suite_add_tcase(s, t);
  return s;
}

int main(void) { return tsup_run(suite()); }
