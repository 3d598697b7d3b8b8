# lanced — build, test and run. GNU Make. `make` builds the library, the tools and the
# tests; `make test` installs what is missing (make deps), builds and runs every test.
# New source files are picked up by wildcard: one folder per layer under lib/, one folder
# per program under daemon/ and loadtest/, one Check test per tests/unit/test_*.c.

SHELL := /bin/bash
# The AWS SDK's notice that its releases after January 2027 need node 22 (the tests' S3 client
# on node 20) says nothing about this project: not printed in every S3 test. Only where node
# knows the flag (20.11 and later): an older node refuses to start with it in NODE_OPTIONS.
NODE_QUIET := $(shell node --disable-warning=NodeVersionSupportWarning -e 0 >/dev/null 2>&1 && echo --disable-warning=NodeVersionSupportWarning)
ifneq ($(NODE_QUIET),)
ifeq ($(findstring $(NODE_QUIET),$(NODE_OPTIONS)),)
export NODE_OPTIONS := $(strip $(NODE_OPTIONS) $(NODE_QUIET))
endif
endif
CC ?= cc
BUILD ?= build
# Where the library and binaries land: lib/ and bin/ for the normal build, inside the
# build directory for sanitizer builds so both can coexist.
LIBOUT ?= lib
BINOUT ?= bin

PKGS_LIB := libprotobuf-c libzstd liblz4 liburing libcurl
PKGS_DAEMON := libnghttp2 jansson zlib libsystemd
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS_LIB) $(PKGS_DAEMON) check 2>/dev/null)
LIB_LIBS = $(shell pkg-config --libs $(PKGS_LIB) 2>/dev/null) -lm -lpthread
DAEMON_LIBS = $(shell pkg-config --libs $(PKGS_DAEMON) 2>/dev/null)
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null)

OPT ?= -O2
SAN ?=
CFLAGS_BASE := -std=gnu11 -g -Wall -Wextra -Werror -D_GNU_SOURCE -fPIC
CFLAGS ?= $(OPT)
ALL_CFLAGS = $(CFLAGS_BASE) $(CFLAGS) $(SAN) -Ilib -I$(BUILD)/gen $(PKG_CFLAGS)
LDFLAGS_ALL = $(SAN) $(LDFLAGS)

# ---- protobuf ---------------------------------------------------------------------------
PROTOS := $(shell find proto -name '*.proto' | sort)
PROTO_C := $(patsubst proto/%.proto,$(BUILD)/gen/%.pb-c.c,$(PROTOS))
PROTO_H := $(PROTO_C:.c=.h)

$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h: proto/%.proto
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen -Iproto $<

# ---- library ----------------------------------------------------------------------------
# liblance holds the Lance format's messages (proto/lance); the daemon's own API messages
# (proto/lanced) are linked into the programs, never exported by the library.
LIB_SRCS := $(sort $(wildcard lib/*/*.c lib/*/*/*.c lib/*.c))
LIB_PROTO_C := $(filter $(BUILD)/gen/lance/%,$(PROTO_C))
API_PROTO_OBJS := $(patsubst $(BUILD)/gen/%.c,$(BUILD)/obj/gen/%.o,$(filter-out $(LIB_PROTO_C),$(PROTO_C)))
LIB_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS)) \
            $(patsubst $(BUILD)/gen/%.c,$(BUILD)/obj/gen/%.o,$(LIB_PROTO_C))
# Only what lance.h marks LNC_API is visible outside liblance.so.
$(LIB_OBJS): VISIBILITY := -fvisibility=hidden
LIB_A := $(LIBOUT)/liblance.a
LIB_SO := $(LIBOUT)/liblance.so

$(BUILD)/obj/%.o: %.c $(PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(VISIBILITY) -MMD -MP -c $< -o $@

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c $(PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) $(filter-out -Werror,$(ALL_CFLAGS)) $(VISIBILITY) -c $< -o $@

$(LIB_A): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# Versioned: SONAME liblance.so.$(LIB_MAJOR); installed as liblance.so.$(LIB_VERSION) with the
# liblance.so.$(LIB_MAJOR) and liblance.so links (make install).
LIB_VERSION := $(shell sed -n 's/^#define LNC_RELEASE "\(.*\)"/\1/p' lib/util/version.h)
LIB_MAJOR := 0
$(LIB_SO): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDFLAGS_ALL) -Wl,-soname,liblance.so.$(LIB_MAJOR) -o $@ $^ $(LIB_LIBS)

# ---- programs: every daemon/<name>/*.c and loadtest/*.c becomes bin/<name> ----------------
PROGRAMS := $(notdir $(patsubst %/,%,$(sort $(dir $(wildcard daemon/*/*.c)))))
BINS := $(addprefix $(BINOUT)/,$(PROGRAMS))
ifneq ($(wildcard loadtest/*.c),)
BINS += $(BINOUT)/lanced-load
endif

define program_rule
$(BINOUT)/$(1): $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard daemon/$(1)/*.c)) $(API_PROTO_OBJS) $(LIB_A)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(LDFLAGS_ALL) -o $$@ $$^ $$(DAEMON_LIBS) $$(LIB_LIBS)
endef
$(foreach p,$(PROGRAMS),$(eval $(call program_rule,$(p))))

$(BINOUT)/lanced-load: $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard loadtest/*.c)) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(DAEMON_LIBS) $(LIB_LIBS)

# ---- unit tests (Check) -------------------------------------------------------------------
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
UNIT_SUPPORT := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard tests/unit/support/*.c))

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(UNIT_SUPPORT) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(CHECK_LIBS) $(DAEMON_LIBS) $(LIB_LIBS)

# test_ring makes io_uring_enter fail on cue: ring.c's calls reach its wrapper.
$(BUILD)/tests/test_ring: LDFLAGS_ALL += -Wl,--wrap=io_uring_submit_and_wait

# The object-store reader from the command line, for tests/s3/objstore.mjs.
S3CHECK := $(BUILD)/tests/s3check
$(S3CHECK): $(BUILD)/obj/tests/s3/s3check.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIB_LIBS)

# ---- fuzz targets: each tests/fuzz/fuzz_*.c, built with a replay driver for CI ------------
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRCS))
# Targets of the daemon's own parsers link the daemon files they fuzz.
FUZZ_DAEMON_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,daemon/lanced/pbjson.c daemon/lanced/util.c daemon/lanced/log.c) $(API_PROTO_OBJS)
$(BUILD)/fuzz/fuzz_pbjson: $(BUILD)/obj/tests/fuzz/fuzz_pbjson.o $(BUILD)/obj/tests/fuzz/driver/replay.o $(FUZZ_DAEMON_OBJS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(DAEMON_LIBS) $(LIB_LIBS)
FUZZ_REQUEST_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(filter-out daemon/lanced/main.c,$(wildcard daemon/lanced/*.c))) $(API_PROTO_OBJS)
$(BUILD)/fuzz/fuzz_request: $(BUILD)/obj/tests/fuzz/fuzz_request.o $(BUILD)/obj/tests/fuzz/driver/replay.o $(FUZZ_REQUEST_OBJS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(DAEMON_LIBS) $(LIB_LIBS)
$(BUILD)/fuzz/fuzz_grpc: $(BUILD)/obj/tests/fuzz/fuzz_grpc.o $(BUILD)/obj/tests/fuzz/driver/replay.o $(FUZZ_REQUEST_OBJS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(DAEMON_LIBS) $(LIB_LIBS)
$(BUILD)/fuzz/%: $(BUILD)/obj/tests/fuzz/%.o $(BUILD)/obj/tests/fuzz/driver/replay.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LIB_LIBS)

# ---- top-level targets --------------------------------------------------------------------
.PHONY: FORCE clone-fixtures all deps test floorplan s3-local unit-test conformance integration fuzz-replay fuzz abuse soak format format-check asan run fixtures clean install-lib help \
        install bench python-test schema-fuzz ops-fuzz
.DEFAULT_GOAL := all
# Generated sources and test objects are real outputs, not intermediates to delete after use.
.SECONDARY:

all: $(LIB_A) $(LIB_SO) $(BINS) $(UNIT_BINS) $(FUZZ_BINS) $(S3CHECK)

deps:
	@scripts/deps.sh

# Shallow-clone fixtures: a clone names its source by absolute path, so LanceDB writes them
# where this checkout is (tests/fixtures/clones, git-ignored) before the tests that read
# them, again when the generator changes or the checkout moved. So unit-test and integration
# need node and @lancedb/lancedb (`make deps`), as the integration tests did already.
CLONE_FIXTURES := tests/fixtures/clones/.made
CLONES_MADE_IN := $(shell cat $(CLONE_FIXTURES) 2>/dev/null)
$(CLONE_FIXTURES): tests/fixtures/gen-datasets.mjs $(if $(filter-out $(CURDIR),$(CLONES_MADE_IN)),FORCE)
	@rm -rf $(dir $@)
	@node tests/fixtures/gen-datasets.mjs --versions 2.0,2.1,2.2 --kinds clone --out $(dir $@) > /dev/null
	@echo "$(CURDIR)" > $@
clone-fixtures: $(CLONE_FIXTURES)
FORCE:

unit-test: $(UNIT_BINS) $(CLONE_FIXTURES)
	@scripts/run-unit-tests.sh $(UNIT_BINS)

conformance: $(BINS) $(BUILD)/tests/test_conformance
	@BIN=$(BINOUT) BUILD=$(BUILD) tests/conformance/run.sh

fuzz-replay: $(FUZZ_BINS)
	@scripts/run-fuzz-replay.sh $(FUZZ_BINS)

# libFuzzer runs (clang, ASan/UBSan), FUZZ_SECONDS each; not part of `make test` (its corpora
# are replayed there). scripts/fuzz.sh says what it does.
FUZZ_SECONDS ?= 60
fuzz:
	@scripts/fuzz.sh $(FUZZ_SECONDS)

# Differential fuzzing over random schemas and data written by the real Lance writer (LanceDB):
# seeds START..START+SEEDS-1, lancectl and lanced against Lance's takeOffsets (not part of
# `make test`; tests/fixtures/README.md). SCHEMA_FUZZ_BIN=build-asan/bin runs the sanitizer
# build; SCHEMA_FUZZ_ARGS adds options (--keep DIR, --version 2.2, ...).
SEEDS ?= 200
START ?= 1
SCHEMA_FUZZ_BIN ?= $(BINOUT)
schema-fuzz: $(BINS)
	@RUST_BACKTRACE=0 node tests/fixtures/schema-fuzz.mjs --start $(START) --seeds $(SEEDS) --bin $(SCHEMA_FUZZ_BIN) $(SCHEMA_FUZZ_ARGS)

# The same over random *operations* on a table (append, delete, update, mergeInsert, optimize,
# addColumns, alterColumns, dropColumns, tags, restore, overwrite), checked on the latest,
# older and tagged versions (not part of `make test`; tests/fixtures/README.md).
# OPS_FUZZ_BIN=build-asan/bin runs the sanitizer build; OPS_FUZZ_ARGS adds options.
OPS_FUZZ_BIN ?= $(BINOUT)
ops-fuzz: $(BINS)
	@RUST_BACKTRACE=0 LANCEDB_LOG=error node tests/fixtures/ops-fuzz.mjs --start $(START) --seeds $(SEEDS) --bin $(OPS_FUZZ_BIN) $(OPS_FUZZ_ARGS)

# The floor plan from the includes: lib/io below everything Lance, no cycle between lib/
# folders, the programs on lance.h and the common layer (lib/util) only.
floorplan:
	@python3 scripts/floorplan.py

# The C sources in the tree's style (.clang-format): format-check fails on any difference,
# format applies it. Vendored lib/arrow/abi.h is left as Arrow wrote it.
FORMAT_FILES = $(filter-out lib/arrow/abi.h,$(shell git ls-files 'lib/*.[ch]' 'daemon/*.[ch]' 'loadtest/*.[ch]' \
                 'tests/unit/*.[ch]' 'tests/fuzz/*.c' 'tests/integration/*.c' 2>/dev/null))
format-check:
	@clang-format --dry-run --Werror $(FORMAT_FILES) && echo "format: $(words $(FORMAT_FILES)) files in the tree's style"
format:
	@clang-format -i $(FORMAT_FILES)

# The abuse suite at full size (make test runs a smoke of it) and the 10-minute soak
# (docs/reliability.md reports both); ABUSE_BIN=build-asan/bin runs them against ASan.
ABUSE_BIN ?= $(BINOUT)
abuse: all
	@/usr/bin/python3 -u tests/abuse/abuse.py $(ABUSE_BIN) --files 8400 --datasets 1240 --live-seconds 60
soak: all
	@BIN=$(ABUSE_BIN) SOAK_SECONDS=$${SOAK_SECONDS:-600} scripts/soak.sh

integration: $(BINS) $(LIB_SO) $(S3CHECK) $(CLONE_FIXTURES)
	@BIN=$(BINOUT) tests/integration/run.sh
	@BIN=$(BINOUT) tests/integration/readme_examples.sh
	@BIN=$(BINOUT) tests/integration/daemon_nonblocking.sh
	@BIN=$(BINOUT) tests/integration/daemon_revalidate.sh
	@BIN=$(BINOUT) tests/integration/run_py.sh daemon_connections
	@BIN=$(BINOUT) tests/integration/run_py.sh daemon_placement
	@BIN=$(BINOUT) tests/integration/daemon_descriptors.sh
	@BIN=$(BINOUT) tests/integration/daemon_rowids.sh
	@BIN=$(BINOUT) tests/integration/daemon_permissions.sh
	@BIN=$(BINOUT) tests/integration/run_py.sh daemon_framing
	@BIN=$(BINOUT) tests/integration/run_py.sh daemon_halfclose
	@/usr/bin/python3 -u tests/integration/daemon_arrow_bytes.py $(BINOUT) tests/fixtures
	@BIN=$(BINOUT) tests/integration/run_py.sh daemon_utf8
	@/usr/bin/python3 -u tests/integration/daemon_grpc.py $(BINOUT)
	@/usr/bin/python3 -u tests/integration/daemon_h2.py $(BINOUT)
	@/usr/bin/python3 -u tests/abuse/abuse.py $(BINOUT) --files 300 --datasets 60 --live-seconds 5
	@BIN=$(BINOUT) tests/integration/options_documented.sh
	@/usr/bin/python3 tests/integration/errors_documented.py
	@BIN=$(BINOUT) tests/integration/daemon_listing.sh
	@BIN=$(BINOUT) tests/integration/promtool.sh
	@node tests/integration/arrow_metadata.mjs $(BINOUT)
	@node tests/integration/daemon_proto_answers.mjs $(BINOUT)
	@node tests/s3/lancedb_s3.mjs
	@node --openssl-legacy-provider tests/s3/objstore.mjs $(BUILD) $(BINOUT)
	@node --openssl-legacy-provider tests/s3/daemon_s3.mjs $(BINOUT)
	@BIN=$(BINOUT) tests/integration/run_py.sh daemon_systemd
ifeq ($(SAN),)
	@LIB=$(LIBOUT) tests/integration/exports.sh
	@BIN=$(BINOUT) MAKE_VARS="BUILD=$(BUILD) LIBOUT=$(LIBOUT) BINOUT=$(BINOUT)" tests/integration/install_lib.sh
endif
	@BIN=$(BINOUT) tests/integration/loadtest_selftest.sh
	@BIN=$(BINOUT) MAKE_VARS="BUILD=$(BUILD) LIBOUT=$(LIBOUT) BINOUT=$(BINOUT)" tests/integration/systemd_unit.sh
	@$(MAKE) --no-print-directory python-test

# The Python client and torch dataset against a real lanced (Debian's python3 and its
# python3-* packages: /usr/bin/python3, not whatever python3 comes first on PATH).
PYTHON ?= /usr/bin/python3
python-test: $(BINS)
	@LANCED=$(abspath $(BINOUT))/lanced $(PYTHON) -m pytest -q -p no:cacheprovider clients/python/tests

# The benchmark harness's smoke run (BENCH_QUICK=1: one cell per system, about two minutes;
# a check that it works, not figures — `make bench` measures). BENCH_SMOKE=0 skips it.
BENCH_SMOKE ?= 1
test: deps
	@scripts/test-all.sh "$(MAKE)" $(BENCH_SMOKE)

# ASan + UBSan: a separate build tree and output dirs, then the same tests.
asan:
	$(MAKE) BUILD=build-asan LIBOUT=build-asan/lib BINOUT=build-asan/bin OPT=-O1 \
	  SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all -DLNC_DEBUG" \
	  all unit-test conformance fuzz-replay integration

help:
	@echo "make run        build and serve the bundled sample data on 127.0.0.1:8080 (PORT=...)"
	@echo "make s3-local   a local S3 store (s3rver) holding the sample data, to try --mount"
	@echo "make test       every test: unit, conformance, fuzz replay, integration, ASan/UBSan,"
	@echo "                then a quick smoke run of the benchmark harness (BENCH_SMOKE=0 skips it)"
	@echo "make bench      the benchmarks (BENCH_SCALE=small|full), report in bench/out/<time>/"
	@echo "make install    programs, man pages, unit, config and liblance (PREFIX=, DESTDIR=)"
	@echo "make install-lib  liblance alone: lance.h, liblance.a/.so, lance.pc"
	@echo "make deps       install what is missing (apt, npm ci, Debian python3 packages)"
	@echo "make fuzz       libFuzzer over every parser (FUZZ_SECONDS=N each, FUZZ_TARGETS=...)"
	@echo "make schema-fuzz  random schemas/data by Lance vs lancectl/lanced (SEEDS=N START=S)"
	@echo "make ops-fuzz   random table operations by Lance, every version vs lancectl/lanced (SEEDS= START=)"
	@echo "make abuse      the abuse suite at full size; make soak: 10 minutes verified (ABUSE_BIN=)"
	@echo "make format     apply .clang-format (make test runs format-check)"
	@echo "make asan | unit-test | conformance | fuzz-replay | integration | python-test | fixtures | clean"

run: deps all
	@scripts/run-sample.sh $(BINOUT)

fixtures:
	node tests/fixtures/gen.mjs

# A local S3-compatible store (s3rver) holding the sample data as s3://lance/sample, to try
# object-store mounts (docs/object-storage.md, "Try it locally"). Serves until interrupted.
s3-local: deps all
	@scripts/sample-root.sh build/sample > /dev/null
	@node --openssl-legacy-provider scripts/s3-local.mjs build/sample $(or $(S3_PORT),4569)

# `make bench [BENCH_SCALE=small|full]`: datasets (bench/data/<scale>/, generated once), every
# system on the same ids, bench/out/<timestamp>/{results.json,report.md,*.svg,*.png}.
BENCH_SCALE ?= small
bench: all
	@BIN=$(BINOUT) BENCH_SCALE=$(BENCH_SCALE) bench/run.sh

# `make install [PREFIX=/usr/local] [DESTDIR=...]`: programs, man pages lanced(8) and
# lancectl(1), the systemd unit (ExecStart pointed at PREFIX) and the example config
# (never over an existing one).
PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
UNITDIR ?= /etc/systemd/system
install: $(BINS) $(LIB_A) $(LIB_SO) install-lib
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/man/man8 $(DESTDIR)$(SYSCONFDIR)/lanced $(DESTDIR)$(UNITDIR)
	install -m 755 $(BINS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 docs/man/lanced.8 $(DESTDIR)$(PREFIX)/share/man/man8/
	install -d $(DESTDIR)$(PREFIX)/share/doc/lanced
	install -m 644 docs/api.md $(DESTDIR)$(PREFIX)/share/doc/lanced/
	install -m 644 docs/man/lancectl.1 docs/man/lanced-load.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	sed -e 's|/usr/local/bin/|$(PREFIX)/bin/|g' -e 's|/etc/lanced/|$(SYSCONFDIR)/lanced/|g' \
	  systemd/lanced.service > $(DESTDIR)$(UNITDIR)/lanced.service
	install -m 644 systemd/lanced.socket $(DESTDIR)$(UNITDIR)/lanced.socket
	test -e $(DESTDIR)$(SYSCONFDIR)/lanced/lanced.conf || \
	  install -m 644 conf/lanced.conf $(DESTDIR)$(SYSCONFDIR)/lanced/lanced.conf

# liblance for other programs: lance.h (and the Arrow C data interface it includes) under
# include/lance/ (not include/arrow/, which Apache Arrow's own headers own), both libraries,
# and lance.pc for `pkg-config --cflags --libs lance`.
LIBDIR ?= $(PREFIX)/lib
install-lib: $(LIB_A) $(LIB_SO)
	install -d $(DESTDIR)$(PREFIX)/include/lance/arrow $(DESTDIR)$(LIBDIR)/pkgconfig
	install -m 644 lib/lance.h $(DESTDIR)$(PREFIX)/include/lance/
	install -m 644 lib/arrow/abi.h $(DESTDIR)$(PREFIX)/include/lance/arrow/
	install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/liblance.so.$(LIB_VERSION)
	ln -sf liblance.so.$(LIB_VERSION) $(DESTDIR)$(LIBDIR)/liblance.so.$(LIB_MAJOR)
	ln -sf liblance.so.$(LIB_MAJOR) $(DESTDIR)$(LIBDIR)/liblance.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@VERSION@|$(LIB_VERSION)|' \
	  -e 's|@REQUIRES@|$(PKGS_LIB)|' lib/lance.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/lance.pc

clean:
	rm -rf build build-asan build-fuzz bin lib/liblance.a lib/liblance.so

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
