# tlcompare - compare TraceLens performance reports.
#
#   make            build build/tlcompare
#   make test       layer check, unit tests, the sanitizer build, the conformance suite (when present)
#   make demo       install missing packages (as root), build, compare the bundled examples
#   make install    PREFIX=/usr/local: tlcompare and tlreport, man pages, TraceLens-compatible aliases
#   make deps       install the Debian packages the build needs (as root)
#   make fuzz       libFuzzer on the CSV reader, the xlsx reader, the comparison, the trace reader
#                   (FUZZ_SECONDS each, default 60; fails on a finding)
#   make clean

VERSION     := 0.2.0
PREFIX      ?= /usr/local
CC          ?= cc
PKGS        := libzip expat zlib libisal
CSTD        := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
WARN        := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter
OPT         ?= -O2 -g
CFLAGS      ?=
LDFLAGS     ?=
PKG_CFLAGS  = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS    = $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lzip -lexpat -lz -lisal)
# libxlsxwriter: only for the tests and tools that write workbooks with it (an independent
# writer to read back; genreport's inputs) and the benchmark's reference writer (bench/).
LXW_LIBS    = $(shell pkg-config --libs xlsxwriter 2>/dev/null || echo -lxlsxwriter)
ALL_CFLAGS  = $(CSTD) $(WARN) $(OPT) -DTL_VERSION='"$(VERSION)"' $(PKG_CFLAGS) $(CFLAGS) -MMD -MP
LIBS        = $(PKG_LIBS) -lm -lpthread

BUILD       ?= build
# src/<layer>/<module>.c; src/cli/ holds the programs' main()s, the rest is the library.
LAYERS      := base io table read trace perf ranks diff compare write summary run
SRC         := $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.c))
OBJ         := $(SRC:src/%.c=$(BUILD)/obj/%.o)
TESTS       := $(wildcard tests/test_*.c)
TEST_BINS   := $(TESTS:tests/%.c=$(BUILD)/tests/%)
CONFORMANCE ?= ../shared/conformance

# Debian packages: the build, the tests, the tools the tests drive, clang with libFuzzer
# (libclang-rt) for `make fuzz`, the Python module's build and tests (`make python`,
# `pip install --no-build-isolation .`), headless Chromium for the --html page's tests
# and `make screenshots`, Open MPI for `make mpi`, simdjson for `make bench`'s JSON floor,
# ISA-L's igzip for its gzip yardstick.
DEB_PKGS    := build-essential pkg-config libxlsxwriter-dev libzip-dev libexpat1-dev \
               zlib1g-dev libisal-dev libcmocka-dev valgrind python3 \
               clang libclang-rt-14-dev \
               python3-dev python3-setuptools python3-pip python3-venv python3-pytest python3-pandas \
               chromium libopenmpi-dev openmpi-bin libsimdjson-dev isal

# A machine without the build's Debian packages: one line naming them and `make deps`,
# rather than a compiler error in the first file that includes one of their headers.  The
# tests need a few more (`make test`).  Skipped where there is no dpkg (not Debian).
BUILD_DEB_PKGS := pkg-config libzip-dev libexpat1-dev zlib1g-dev libisal-dev
TEST_DEB_PKGS  := libcmocka-dev libxlsxwriter-dev python3
NEEDS_TEST_PKGS := $(filter test unit-test sanitize-test nosimd-test valgrind bench fuzz,$(MAKECMDGOALS))
ifeq ($(filter deps demo clean uninstall,$(MAKECMDGOALS)),)
ifneq ($(shell command -v dpkg-query 2>/dev/null),)
MISSING_PKGS := $(strip $(shell for p in $(BUILD_DEB_PKGS) $(if $(NEEDS_TEST_PKGS),$(TEST_DEB_PKGS)); do \
                  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || printf '%s ' $$p; done))
ifneq ($(MISSING_PKGS),)
$(error missing Debian packages: $(MISSING_PKGS); run 'make deps' (as root) to install them)
endif
endif
endif

.PHONY: mpi mpi-test mpi-valgrind stress python python-test python-sanitize-test python-valgrind check-layers check-citations check-tables check-longfuncs check-symbols nosimd-test all test unit-test sanitize-test conformance demo deps install uninstall clean \
        valgrind examples bench fuzz

all: $(BUILD)/tlcompare $(BUILD)/tlreport

$(BUILD)/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc -c $< -o $@

$(BUILD)/libtlcompare.a: $(OBJ)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/tlcompare: $(BUILD)/obj/cli/main.o $(BUILD)/libtlcompare.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tlreport: $(BUILD)/obj/cli/tlreport.o $(BUILD)/libtlcompare.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

# ---- the MPI front end (make mpi): Open MPI from Debian, only for this target ---------------
# src/mpi/ is not a library layer: the normal build and `make test` compile nothing of it.
MPI_CFLAGS   = $(shell pkg-config --cflags ompi-c 2>/dev/null)
MPI_LIBS     = $(shell pkg-config --libs ompi-c 2>/dev/null || echo -lmpi)
MPIRUN       ?= mpirun
MPI_PROCS    ?= 3

mpi: $(BUILD)/tlreport-mpi $(BUILD)/tlcompare-mpi

$(BUILD)/obj/mpi/%.o: src/mpi/%.c
	@mkdir -p $(dir $@)
	@test -n "$(MPI_CFLAGS)" || { echo "make mpi: Open MPI not found (apt-get install libopenmpi-dev openmpi-bin, or make deps)"; exit 1; }
	$(CC) $(ALL_CFLAGS) $(MPI_CFLAGS) -Isrc -c $< -o $@

$(BUILD)/tlreport-mpi: $(BUILD)/obj/mpi/tlreport_mpi.o $(BUILD)/obj/mpi/mpi_share.o $(BUILD)/libtlcompare.a
	$(CC) $(LDFLAGS) -o $@ $^ $(MPI_LIBS) $(LIBS)

$(BUILD)/tlcompare-mpi: $(BUILD)/obj/mpi/tlcompare_mpi.o $(BUILD)/obj/mpi/mpi_share.o $(BUILD)/libtlcompare.a
	$(CC) $(LDFLAGS) -o $@ $^ $(MPI_LIBS) $(LIBS)

# The MPI run against tlreport -j 1, byte for byte, on every rank case and a generated
# 256-rank set (part of `make test` when mpirun is installed).
# The MPI path under valgrind on one rank case (2 processes): Open MPI's own noise
# suppressed (its supp file, tests/openmpi-extra.supp), nothing else.
mpi-valgrind: $(BUILD)/tlreport-mpi
	@rm -rf $(BUILD)/mpi-vg && mkdir -p $(BUILD)/mpi-vg && cd $(CONFORMANCE)/rank-cases/mixed_alltoallv_4r && \
	  $(MPIRUN) --allow-run-as-root --oversubscribe -np 2 valgrind -q --num-callers=60 --error-exitcode=9 \
	    --leak-check=full --errors-for-leak-kinds=definite \
	    --suppressions=/usr/share/openmpi/openmpi-valgrind.supp --suppressions=$(CURDIR)/tests/openmpi-extra.supp \
	    $(CURDIR)/$(BUILD)/tlreport-mpi -q -j 1 --trace_pattern 'inputs/rank*_trace.json.gz' --world_size 4 \
	    --all2allv_heatmap --output_csvs_dir $(CURDIR)/$(BUILD)/mpi-vg/csv -o $(CURDIR)/$(BUILD)/mpi-vg/o.xlsx && \
	  echo "mpi-valgrind: no errors, no leaks of ours"

mpi-test: $(BUILD)/tlreport-mpi $(BUILD)/tlreport $(BUILD)/tlcompare-mpi $(BUILD)/tlcompare $(BUILD)/tools/gentrace
	@sh tests/mpi_test.sh $(BUILD) $(CONFORMANCE) "$(MPIRUN)" $(MPI_PROCS)

$(BUILD)/tests/%: tests/%.c tests/testutil.h $(BUILD)/libtlcompare.a | $(BUILD)/tests
	$(CC) $(ALL_CFLAGS) -Isrc -Itests $< -o $@ $(BUILD)/libtlcompare.a $(LIBS) $(LXW_LIBS) -lcmocka

$(BUILD)/tools/%: tools/%.c $(BUILD)/libtlcompare.a | $(BUILD)/tools
	$(CC) $(ALL_CFLAGS) -Isrc $< -o $@ $(BUILD)/libtlcompare.a $(LIBS) $(LXW_LIBS)

# bench/: benchmark-only programs, with the libxlsxwriter reference writer.
$(BUILD)/obj/bench/%.o: bench/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc -Ibench -c $< -o $@

$(BUILD)/tools/%: $(BUILD)/obj/bench/%.o $(BUILD)/obj/bench/xlsx_write_lxw.o $(BUILD)/libtlcompare.a | $(BUILD)/tools
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS) $(LXW_LIBS)

# The JSON reading floor (tools/bench_ranks.sh): simdjson, from libsimdjson-dev, which is
# C++; benchmark-only like the rest of bench/.
$(BUILD)/tools/json_floor: bench/json_floor.cpp | $(BUILD)/tools
	$(CXX) -O2 -std=c++17 $< -o $@ -lsimdjson

$(BUILD)/tests $(BUILD)/tools:
	mkdir -p $@

# ---- the Python module ----------------------------------------------------------------

# `import tlcompare` (python/): the CPython extension tlcompare._core over the library,
# stable ABI, built here into $(BUILD)/python (PYTHONPATH=$(BUILD)/python) from the
# library's sources compiled position-independent; `pip install --no-build-isolation .`
# builds the same from setup.py.  Debian's python3 (with pandas) unless PYTHON is given.
PYTHON      ?= /usr/bin/python3
PY_INC       = $(shell $(PYTHON) -c "import sysconfig; print(sysconfig.get_paths()['include'])" 2>/dev/null)
PY_LIMITED  := -DPy_LIMITED_API=0x030A0000
PIC_OBJ     := $(SRC:src/%.c=$(BUILD)/pic/%.o)
PY_FILES    := $(wildcard python/tlcompare/*.py)
PY_MODULE   := $(BUILD)/python/tlcompare/_core.abi3.so

$(BUILD)/pic/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -Isrc -c $< -o $@

$(BUILD)/pic/python/_core.o: python/tlcompare/_core.c
	@test -f "$(PY_INC)/Python.h" || { echo "python: no Python.h for $(PYTHON) (make deps: python3-dev)"; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden $(PY_LIMITED) -I$(PY_INC) -Isrc -c $< -o $@

$(PY_MODULE): $(BUILD)/pic/python/_core.o $(PIC_OBJ) $(PY_FILES)
	@mkdir -p $(dir $@)
	cp $(PY_FILES) $(dir $@)
	$(CC) $(LDFLAGS) -shared -o $@ $(BUILD)/pic/python/_core.o $(PIC_OBJ) $(LIBS)

python: $(PY_MODULE)

# The module's tests (tests/python/, Debian's python3-pytest): against the programs' CSVs,
# TraceLens' references in the conformance suite and, with TRACELENS=DIR (a TraceLens
# checkout), TraceLens' own generator side by side.  Skipped, with a line saying so, where
# python3, pandas, pytest or Python.h is missing.
PY_TEST_OK = $(shell $(PYTHON) -c "import pandas, pytest, sysconfig, os; \
  print(int(os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h'))))" 2>/dev/null)
PYTEST_RUN = TLCOMPARE_PYTHONPATH=$(abspath $(BUILD)/python) CONFORMANCE=$(abspath $(CONFORMANCE)) \
  TLCOMPARE_BIN=$(abspath $(BUILD)/tlcompare) TLREPORT_BIN=$(abspath $(BUILD)/tlreport) \
  $(PYTHON) -m pytest -q -p no:cacheprovider tests/python
python-test:
	@if [ "$(PY_TEST_OK)" != 1 ]; then \
	  echo "python tests skipped: $(PYTHON) with pandas, pytest and Python.h not found (make deps: python3-dev python3-pandas python3-pytest)"; \
	else $(MAKE) --no-print-directory $(PY_MODULE) $(BUILD)/tlcompare $(BUILD)/tlreport $(BUILD)/tools/gentrace \
	    $(BUILD)/tools/genreport >/dev/null && \
	  { command -v chromium >/dev/null || echo "browser tests (tests/python/test_html.py) skipped: chromium not found (make deps)"; } && \
	  echo "python tests:" && $(PYTEST_RUN); fi

# The same tests with the extension (and the library in it) built with AddressSanitizer +
# UBSan, run under $(PYTHON) with the sanitizer runtime preloaded; the interpreter's own
# allocations are not leak-checked (valgrind-python checks the module's).
ASAN_RT = $(shell $(CC) -print-file-name=libasan.so)
UBSAN_RT = $(shell $(CC) -print-file-name=libubsan.so)
python-sanitize-test:
	@if [ "$(PY_TEST_OK)" != 1 ]; then echo "python tests under the sanitizers skipped (see python-test)"; else \
	  $(MAKE) --no-print-directory BUILD=build/asan-py \
	    OPT="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	    LDFLAGS="-fsanitize=address,undefined" build/asan-py/python/tlcompare/_core.abi3.so >/dev/null && \
	  $(MAKE) --no-print-directory $(BUILD)/tlcompare $(BUILD)/tlreport $(BUILD)/tools/gentrace >/dev/null && \
	  echo "python tests under AddressSanitizer + UBSan:" && \
	  LD_PRELOAD="$(ASAN_RT) $(UBSAN_RT)" ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 TLCOMPARE_SANITIZED=1 \
	  TLCOMPARE_PYTHONPATH=$(abspath build/asan-py/python) CONFORMANCE=$(abspath $(CONFORMANCE)) \
	  TLCOMPARE_BIN=$(abspath $(BUILD)/tlcompare) TLREPORT_BIN=$(abspath $(BUILD)/tlreport) \
	  $(PYTHON) -m pytest -q -p no:cacheprovider tests/python; fi

# valgrind over the module's tests (slow: the interpreter and pandas run under it too): no
# error, and no block definitely lost from the library or the module.
python-valgrind: $(PY_MODULE) $(BUILD)/tlcompare $(BUILD)/tlreport $(BUILD)/tools/gentrace
	@sh tests/python/valgrind.sh "$(PYTHON)" $(abspath $(BUILD)) $(abspath $(CONFORMANCE))

# ---- tests ----------------------------------------------------------------------------

unit-test: $(TEST_BINS) $(BUILD)/tlcompare $(BUILD)/tlreport $(BUILD)/tools/genreport $(BUILD)/tools/gentrace
	@set -e; for t in $(TEST_BINS); do \
	  TLCOMPARE=$(abspath $(BUILD)/tlcompare) TL_TOP=$(CURDIR) $$t; done

# Signals at random points of 200 runs and concurrent runs on one output set (several
# minutes: not part of `make test`; tests/stress/outputs.py says what is checked).
stress: $(BUILD)/tlcompare $(BUILD)/tlreport $(BUILD)/tools/gentrace
	$(PYTHON) tests/stress/outputs.py $(BUILD)

# The same unit tests and conformance cases under AddressSanitizer + UBSan, in its own tree.
sanitize-test:
	TL_NUMFMT_QUICK=1 $(MAKE) --no-print-directory BUILD=build/asan \
	  OPT="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	  LDFLAGS="-fsanitize=address,undefined" unit-test
	@if [ -x $(CONFORMANCE)/run ]; then set -e; \
	  echo "conformance under AddressSanitizer + UBSan:"; \
	  quiet() { log=build/asan/conformance.log; \
	    if "$$@" >$$log 2>&1; then tail -n 1 $$log; else grep -v '^PASS' $$log; exit 1; fi; }; \
	  quiet $(CONFORMANCE)/run build/asan/tlcompare --pending tests/pending/compare.txt; \
	  quiet $(CONFORMANCE)/run build/asan/tlreport $(CONFORMANCE)/report-cases --pending tests/pending/report.txt; \
	  quiet $(CONFORMANCE)/run-tracediff build/asan/tlcompare --pending tests/pending/tracediff.txt; \
	  for k in $(REPORT_KINDS); do \
	    quiet $(CONFORMANCE)/run build/asan/tlreport $(CONFORMANCE)/$$k-cases --pending tests/pending/$$k.txt; done; fi

# The portable (SWAR) text scanning of the writers, of the CSV and xlsx readers and of the trace
# reader's Python reprs, which x86-64 builds otherwise never take (base/textblock.h): their
# tests again with TL_NO_SIMD, in its own tree.
NOSIMD_TESTS := test_json_scan test_csv_read test_csv_scan test_csv_write test_xlsx_write test_xlsx_stream test_xlsx_read test_trace_load test_trace_split
nosimd-test:
	@$(MAKE) --no-print-directory BUILD=build/nosimd OPT="-O2 -DTL_NO_SIMD" \
	  $(NOSIMD_TESTS:%=build/nosimd/tests/%) >/dev/null
	@for t in $(NOSIMD_TESTS); do \
	  out=$$(build/nosimd/tests/$$t 2>&1) || { echo "$$out"; exit 1; }; \
	  echo "$$t (TL_NO_SIMD): $$(echo "$$out" | tail -n 1)"; done

# The outside yardstick, when ../shared/conformance is there: the report comparisons, the
# trace -> report cases and the TraceDiff cases.  Each runner takes a pending list
# (tests/pending/*.txt): cases of work still open, which may only shrink.
# Graph-replay traces with their capture folders: inference-cases, inference-perf-cases,
# inference-reject-cases; rank sets (one trace per rank) for the multi-rank collective
# report: rank-cases.
REPORT_KINDS := inference inference-perf inference-reject rank
conformance: $(BUILD)/tlcompare $(BUILD)/tlreport
	@if [ -x $(CONFORMANCE)/run ]; then set -e; \
	  echo "conformance: report comparisons"; \
	  $(CONFORMANCE)/run $(BUILD)/tlcompare --pending tests/pending/compare.txt; \
	  echo "conformance: trace -> report"; \
	  $(CONFORMANCE)/run $(BUILD)/tlreport $(CONFORMANCE)/report-cases --pending tests/pending/report.txt; \
	  echo "conformance: TraceDiff"; \
	  $(CONFORMANCE)/run-tracediff $(BUILD)/tlcompare --pending tests/pending/tracediff.txt; \
	  for k in $(REPORT_KINDS); do \
	    echo "conformance: $$k traces"; \
	    $(CONFORMANCE)/run $(BUILD)/tlreport $(CONFORMANCE)/$$k-cases --pending tests/pending/$$k.txt; done; \
	else echo "conformance suite not found at $(CONFORMANCE): skipped (the shared contract's executable cases: TraceLens' own outputs on real reports and traces, checked sheet by sheet; CONFORMANCE=DIR points elsewhere)"; fi

# No include runs up the layers of src/ (tools/check_layers.sh says which may use which).
check-layers:
	@sh tools/check_layers.sh src

# Every external symbol of the library carries tl_ (tools/check_symbols.sh).
check-symbols: $(BUILD)/libtlcompare.a
	@sh tools/check_symbols.sh $(BUILD)/libtlcompare.a

# No function in src/ over 150 lines, but those tools/longfuncs.allow still lists.
check-longfuncs:
	@sh tools/longfuncs.sh --check tools/longfuncs.allow

# Every contract section src/ cites ("TRACES.md §4.6") is a heading of its docs/ file
# (tools/check_citations.sh; -l lists them), so a clone can read the rule a comment names.
check-citations:
	@sh tools/check_citations.sh src docs

# The perf layer's C tables (src/perf/*.inc) are made from src/perf/tables/ by
# tools/gen_perf_tables.sh: fails while one disagrees with its data.
check-tables:
	@d=$$(mktemp -d) && sh tools/gen_perf_tables.sh $$d && \
	  for f in perf_ops perf_bwdcat aten_names; do \
	    cmp -s $$d/$$f.inc src/perf/$$f.inc || { echo "src/perf/$$f.inc is not what tools/gen_perf_tables.sh makes of src/perf/tables/"; rm -rf $$d; exit 1; }; \
	  done; rm -rf $$d; echo "perf tables: made from src/perf/tables/"

test: check-layers check-citations check-tables check-longfuncs check-symbols unit-test nosimd-test sanitize-test conformance python-test python-sanitize-test \
      $(if $(shell command -v $(MPIRUN) 2>/dev/null),$(if $(shell pkg-config --exists ompi-c 2>/dev/null && echo y),mpi-test))

# valgrind over every conformance case, the golden cases and the examples: no errors, no leaks.
valgrind: $(BUILD)/tlcompare $(BUILD)/tlreport
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


demo: deps $(BUILD)/tlcompare $(BUILD)/tlreport
	$(BUILD)/tlcompare examples/baseline examples/candidate --names baseline candidate \
	  -o comparison.xlsx --output_csvs_dir comparison_csvs
	@echo "wrote comparison.xlsx and comparison_csvs/"
	@echo
	$(BUILD)/tlreport examples/traces/vit_h100.pt.trace.json.gz -o vit_h100_perf_report.xlsx
	@echo
	$(BUILD)/tlcompare examples/traces/vit_mi300x.pt.trace.json.gz examples/traces/vit_h100.pt.trace.json.gz \
	  -o trace_comparison.xlsx --output_csvs_dir trace_comparison_csvs
	@echo "wrote vit_h100_perf_report.xlsx, trace_comparison.xlsx and trace_comparison_csvs/"
	@echo
	$(MAKE) --no-print-directory python >/dev/null
	PYTHONPATH=$(BUILD)/python $(PYTHON) -c "import tlcompare; \
	  print(tlcompare.report('examples/traces/vit_h100.pt.trace.json.gz')['ops_summary'].head())"

# ---- example traces -------------------------------------------------------------------

# The bundled PyTorch trace pair (examples/traces/, see examples/README.md), made by
# tools/gentrace; regenerating reproduces the committed files byte for byte.
.PHONY: examples-traces
EXAMPLE_TRACE_OPTS := --layers 4 --steps 2 --seed 1 --level 9
examples-traces: $(BUILD)/tools/gentrace
	@mkdir -p examples/traces
	$(BUILD)/tools/gentrace --flavour cuda $(EXAMPLE_TRACE_OPTS) -o examples/traces/vit_h100.pt.trace.json.gz
	$(BUILD)/tools/gentrace --flavour rocm $(EXAMPLE_TRACE_OPTS) -o examples/traces/vit_mi300x.pt.trace.json.gz

# ---- benchmark ------------------------------------------------------------------------

# Time tlcompare on generated 20k-row reports (cached in build/bench/; the scaling run's
# 80k inputs are ~2.2 GB there), print the table and the targets; see BENCHMARKS.md.
# BENCH_RUNS=5, BENCH_SCALING=0 to skip the scaling run.  A measurement: exits 0 unless a run fails.
# Then the traces (when this Makefile can build $(BUILD)/tlreport): the timesformer pair and
# generated 1 GB traces (~2.3 GB cached in build/bench/traces/); BENCH_TRACES=0 skips them,
# BENCH_REPORTS=0 runs only them.  TraceLens side by side (its generator on the owlv2 and
# timesformer traces, its comparison tool on 1k/5k-row reports): TRACELENS_DIR=CHECKOUT or
# TRACELENS_GIT=GIT_DIR, run by /usr/bin/python3 with pandas (TRACELENS_PYTHON); skipped
# with a line saying so without them.
bench: $(BUILD)/tlcompare $(BUILD)/tools/genreport $(BUILD)/tools/benchrun $(BUILD)/tools/gentrace \
       $(BUILD)/tools/lxw_compare
	@if $(MAKE) -n $(BUILD)/tlreport >/dev/null 2>&1; then $(MAKE) --no-print-directory $(BUILD)/tlreport; fi
	@BUILD=$(BUILD) bash tools/bench.sh

# ---- the page's screenshots -----------------------------------------------------------

# docs/img/*.png, the README's pictures: sections of the real --html page of the qwen H100 vs
# MI300 trace pair (the conformance suite's traces), and the rank heatmap of two 8-rank runs
# made by tools/gentrace (rank 5 of the second arriving 3 ms late at every collective, the
# last bucket's all-reduce 30% slower), taken by headless Chromium.
SHOT_DIR := $(BUILD)/screenshots
.PHONY: screenshots
screenshots: $(BUILD)/tlcompare $(BUILD)/tools/gentrace
	@command -v chromium >/dev/null || { echo "screenshots: chromium not found (make deps)"; exit 1; }
	@test -f $(CONFORMANCE)/traces/qwen_h100.json.gz || { echo "screenshots: no qwen traces in $(CONFORMANCE)/traces"; exit 1; }
	@mkdir -p $(SHOT_DIR) docs/img
	$(BUILD)/tlcompare $(CONFORMANCE)/traces/qwen_h100.json.gz $(CONFORMANCE)/traces/qwen_mi300.json.gz \
	  --names h100 mi300 --gpu-arch H100,MI300X -q -o $(SHOT_DIR)/qwen.xlsx --html $(SHOT_DIR)/qwen_h100_vs_mi300.html
	$(PYTHON) tools/pagecheck.py $(SHOT_DIR)/qwen_h100_vs_mi300.html --width 900 --max-height 560 \
	  --shots $(SHOT_DIR) --sections summary,time,moved,roofline,tree
	@for s in summary roofline tree; do cp $(SHOT_DIR)/$$s.png docs/img/qwen_$$s.png; done
	@rm -rf $(SHOT_DIR)/runs && for side in before after; do mkdir -p $(SHOT_DIR)/runs/$$side; \
	  for r in 0 1 2 3 4 5 6 7; do extra=""; [ $$side = after ] && extra="--coll-slow 30"; \
	    [ $$side = after ] && [ $$r = 5 ] && extra="$$extra --arrive-late 3000"; \
	    $(BUILD)/tools/gentrace --world 8 --rank $$r --layers 2 $$extra -o $(SHOT_DIR)/runs/$$side/rank$$r.json || exit 1; \
	  done; done
	$(BUILD)/tlcompare $(SHOT_DIR)/runs/before $(SHOT_DIR)/runs/after -q -o $(SHOT_DIR)/runs.xlsx \
	  --html $(SHOT_DIR)/runs.html
	$(PYTHON) tools/pagecheck.py $(SHOT_DIR)/runs.html --width 900 --max-height 420 --shots $(SHOT_DIR)/runs \
	  --sections ranks
	@cp $(SHOT_DIR)/runs/ranks.png docs/img/runs_ranks.png
	@ls -l docs/img/qwen_*.png docs/img/runs_ranks.png

# ---- install --------------------------------------------------------------------------

install: $(BUILD)/tlcompare $(BUILD)/tlreport
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BUILD)/tlcompare $(DESTDIR)$(PREFIX)/bin/tlcompare
	ln -sf tlcompare $(DESTDIR)$(PREFIX)/bin/TraceLens_compare_perf_reports_pytorch
	install -m 644 man/tlcompare.1 $(DESTDIR)$(PREFIX)/share/man/man1/tlcompare.1
	install -m 755 $(BUILD)/tlreport $(DESTDIR)$(PREFIX)/bin/tlreport
	ln -sf tlreport $(DESTDIR)$(PREFIX)/bin/TraceLens_generate_perf_report_pytorch
	ln -sf tlreport $(DESTDIR)$(PREFIX)/bin/TraceLens_generate_multi_rank_collective_report_pytorch
	install -m 644 man/tlreport.1 $(DESTDIR)$(PREFIX)/share/man/man1/tlreport.1

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/tlcompare $(DESTDIR)$(PREFIX)/bin/tlreport \
	      $(DESTDIR)$(PREFIX)/share/man/man1/tlreport.1 \
	      $(DESTDIR)$(PREFIX)/bin/TraceLens_compare_perf_reports_pytorch \
	      $(DESTDIR)$(PREFIX)/bin/TraceLens_generate_perf_report_pytorch \
	      $(DESTDIR)$(PREFIX)/bin/TraceLens_generate_multi_rank_collective_report_pytorch \
	      $(DESTDIR)$(PREFIX)/share/man/man1/tlcompare.1

clean:
	rm -rf build comparison.xlsx comparison_csvs vit_h100_perf_report.xlsx trace_comparison.xlsx \
	  trace_comparison_csvs

-include $(OBJ:.o=.d) $(PIC_OBJ:.o=.d) $(BUILD)/pic/python/_core.d $(BUILD)/obj/cli/main.d $(BUILD)/obj/cli/tlreport.d $(TEST_BINS:=.d) $(wildcard $(BUILD)/obj/bench/*.d) $(wildcard $(BUILD)/obj/mpi/*.d)

# ---- fuzzing --------------------------------------------------------------------------

# libFuzzer targets (fuzz/fuzz_*.c): the CSV reader, the xlsx reader, the whole comparison,
# the trace reader and its report sheets.
# `make fuzz` builds them with clang (ASan + UBSan) in build/fuzz/ and runs each for
# FUZZ_SECONDS from its seed corpus (fuzz/corpus/<target>/) and its past crashes
# (fuzz/regressions/<target>/); new corpus entries go to build/fuzz/corpus/<target>/.
# A crash, leak, timeout or memory blow-up fails the target; the input is saved as
# build/fuzz/crashes/<target>-*: copy it to fuzz/regressions/<target>/ once fixed, and
# tests/test_regressions.c replays it in every `make test`.
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang
FUZZ_TARGETS := csv xlsx compare trace diff capture open run ranks
FUZZ_BUILD   := build/fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz.h $(FUZZ_BUILD)/libtlcompare.a
	$(FUZZ_CC) $(ALL_CFLAGS) -Isrc -fsanitize=fuzzer $< -o $@ $(FUZZ_BUILD)/libtlcompare.a $(LIBS)

fuzz:
	@command -v $(FUZZ_CC) >/dev/null || { echo "fuzz: $(FUZZ_CC) not found (make deps)"; exit 1; }
	$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD) CC=$(FUZZ_CC) \
	  OPT="-O1 -g -fsanitize=fuzzer-no-link $(FUZZ_SAN)" LDFLAGS="$(FUZZ_SAN)" \
	  $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz_%)
	@set -e; for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$t $(FUZZ_BUILD)/crashes fuzz/regressions/$$t; \
	  dict=""; [ -f fuzz/$$t.dict ] && dict="-dict=fuzz/$$t.dict"; \
	  printf 'fuzz_%-8s %s s: ' $$t $(FUZZ_SECONDS); \
	  if $(FUZZ_BUILD)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2560 \
	       -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/crashes/$$t- $$dict \
	       $(FUZZ_BUILD)/corpus/$$t fuzz/corpus/$$t fuzz/regressions/$$t \
	       >$(FUZZ_BUILD)/$$t.log 2>&1; then \
	    grep -h 'stat::number_of_executed_units' $(FUZZ_BUILD)/$$t.log | awk '{print $$2 " executions, no finding"}'; \
	  else \
	    echo "FINDING (log: $(FUZZ_BUILD)/$$t.log)"; grep -A25 '^==.*ERROR\|invariant violated\|^SUMMARY' $(FUZZ_BUILD)/$$t.log | head -40; \
	    exit 1; \
	  fi; \
	done
