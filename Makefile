# tlcompare - compare TraceLens performance reports.
#
#   make            build build/tlcompare
#   make test       unit tests, the sanitizer build, then the conformance suite (when present)
#   make demo       install missing packages (as root), build, compare the bundled examples
#   make install    PREFIX=/usr/local: binary, man page, TraceLens-compatible alias
#   make deps       install the Debian packages the build needs (as root)
#   make clean

VERSION     := 0.1.0
PREFIX      ?= /usr/local
CC          ?= cc
PKGS        := xlsxwriter libzip expat zlib libdeflate
CSTD        := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
WARN        := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter
OPT         ?= -O2 -g
CFLAGS      ?=
LDFLAGS     ?=
PKG_CFLAGS  = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS    = $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lxlsxwriter -lzip -lexpat -lz -ldeflate)
ALL_CFLAGS  = $(CSTD) $(WARN) $(OPT) -DTL_VERSION='"$(VERSION)"' $(PKG_CFLAGS) $(CFLAGS) -MMD -MP
LIBS        = $(PKG_LIBS) -lm -lpthread

BUILD       ?= build
SRC         := $(filter-out src/main.c,$(wildcard src/*.c))
OBJ         := $(SRC:src/%.c=$(BUILD)/obj/%.o)
TESTS       := $(wildcard tests/test_*.c)
TEST_BINS   := $(TESTS:tests/%.c=$(BUILD)/tests/%)
CONFORMANCE ?= ../shared/conformance

# Debian packages: the build, the tests, and the tools the tests drive.
DEB_PKGS    := build-essential pkg-config libxlsxwriter-dev libzip-dev libexpat1-dev \
               zlib1g-dev libdeflate-dev libcmocka-dev valgrind python3

.PHONY: all test unit-test sanitize-test conformance demo deps install uninstall clean \
        valgrind examples bench fuzz

all: $(BUILD)/tlcompare

$(BUILD)/obj/%.o: src/%.c | $(BUILD)/obj
	$(CC) $(ALL_CFLAGS) -Isrc -c $< -o $@

$(BUILD)/libtlcompare.a: $(OBJ)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/tlcompare: $(BUILD)/obj/main.o $(BUILD)/libtlcompare.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tests/%: tests/%.c tests/testutil.h $(BUILD)/libtlcompare.a | $(BUILD)/tests
	$(CC) $(ALL_CFLAGS) -Isrc -Itests $< -o $@ $(BUILD)/libtlcompare.a $(LIBS) -lcmocka

$(BUILD)/tools/%: tools/%.c $(BUILD)/libtlcompare.a | $(BUILD)/tools
	$(CC) $(ALL_CFLAGS) -Isrc $< -o $@ $(BUILD)/libtlcompare.a $(LIBS)

$(BUILD)/obj $(BUILD)/tests $(BUILD)/tools:
	mkdir -p $@

# ---- tests ----------------------------------------------------------------------------

unit-test: $(TEST_BINS) $(BUILD)/tlcompare
	@set -e; for t in $(TEST_BINS); do \
	  TLCOMPARE=$(abspath $(BUILD)/tlcompare) TL_TOP=$(CURDIR) $$t; done

# The same unit tests and conformance cases under AddressSanitizer + UBSan, in its own tree.
sanitize-test:
	TL_NUMFMT_QUICK=1 $(MAKE) --no-print-directory BUILD=build/asan \
	  OPT="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	  LDFLAGS="-fsanitize=address,undefined" unit-test
	@if [ -x $(CONFORMANCE)/run ]; then \
	  echo "conformance under AddressSanitizer + UBSan:"; \
	  $(CONFORMANCE)/run build/asan/tlcompare | tail -n 1; fi

conformance: $(BUILD)/tlcompare
	@if [ -x $(CONFORMANCE)/run ]; then $(CONFORMANCE)/run $(BUILD)/tlcompare; \
	else echo "conformance suite not found at $(CONFORMANCE): skipped"; fi

test: deps-check unit-test sanitize-test conformance

# valgrind over every conformance case and the examples: no errors, no leaks.
valgrind: $(BUILD)/tlcompare
	@sh tests/valgrind.sh $(BUILD)/tlcompare $(CONFORMANCE)

# ---- set-up ---------------------------------------------------------------------------

deps:
	@missing=""; for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
	  echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	else echo "missing Debian packages:$$missing (run 'sudo make deps')"; exit 1; fi

# `make test` installs what is missing too, so a fresh machine needs nothing by hand.
deps-check: deps

demo: deps $(BUILD)/tlcompare
	$(BUILD)/tlcompare examples/baseline examples/candidate --names baseline candidate \
	  -o comparison.xlsx --output_csvs_dir comparison_csvs
	@echo "wrote comparison.xlsx and comparison_csvs/"

# ---- install --------------------------------------------------------------------------

install: $(BUILD)/tlcompare
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BUILD)/tlcompare $(DESTDIR)$(PREFIX)/bin/tlcompare
	ln -sf tlcompare $(DESTDIR)$(PREFIX)/bin/TraceLens_compare_perf_reports_pytorch
	install -m 644 man/tlcompare.1 $(DESTDIR)$(PREFIX)/share/man/man1/tlcompare.1

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/tlcompare \
	      $(DESTDIR)$(PREFIX)/bin/TraceLens_compare_perf_reports_pytorch \
	      $(DESTDIR)$(PREFIX)/share/man/man1/tlcompare.1

clean:
	rm -rf build comparison.xlsx comparison_csvs

-include $(OBJ:.o=.d) $(BUILD)/obj/main.d
