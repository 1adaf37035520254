# fastverbs: header-only mlx5 data path, its software device (sim/), tests and benchmarks.
# Targets: all test bench run hello fuzz install uninstall gen clean (plus check-gen, check-docs,
# check-man, check-compile-fail, check-headers, check-clang, check-codegen, check-install).

PREFIX  ?= /usr/local
DESTDIR ?=
MANDIR  ?= $(PREFIX)/share/man
# Where make install puts the rest (docs/install.md): the software device's library and helper
# in SIMDIR, fastverbs.pc in PKGCONFIGDIR, the CMake package in CMAKEDIR.
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib
SIMDIR       ?= $(LIBDIR)/fastverbs
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
CMAKEDIR     ?= $(LIBDIR)/cmake/fastverbs
DOCDIR  ?= $(PREFIX)/share/doc/fastverbs
ifeq ($(origin CC),default)
CC := gcc
endif
CLANG   ?= clang
ifeq ($(origin CXX),default)
CXX := g++
endif
CLANGXX ?= clang++
OPT     ?= -O2 -g
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
# The sanitized pass's compile costs: fastverbs' always-inline builders make functions so large
# that ASan's inline checks and -g's variable tracking took most of make test's CPU (unit/cq: 35 s
# a file). ASan checks through calls instead (the same checks, slower at run time), and -g1 keeps
# what its reports print (function, file, line, inlined frames); no variables for a debugger.
# -Og, not -O1: fewer passes over those large functions, every check kept (the pass's compiles
# took a third less CPU, its runs as long).
SAN_OPT   := -Og -g1
SAN_FLAGS += --param=asan-instrumentation-with-call-threshold=0
# The other passes of make test: line tables only too. Debug information does not change the
# code the compiler makes, and gcc's variable tracking (-g) cost a third of an -O2 compile.
TEST_OPT  := -O2 -g1
CFLAGS_COMMON = -std=c11 -Wall -Wextra -Werror $(OPT) $(EXTRA_CFLAGS)
CXXFLAGS_COMMON = -std=c++17 -Wall -Wextra -Werror $(OPT) $(EXTRA_CFLAGS)
CPPFLAGS += -Iinclude -D_GNU_SOURCE
VERBS_LIBS := -libverbs -lmlx5
TEST_LIBS  := -lcriterion $(VERBS_LIBS) -lrdmacm -lpthread

# B is the build directory; the sanitized pass of `make test` reruns with B=build-san.
B ?= build

HEADERS    := $(wildcard include/fastverbs/*.h include/fastverbs/compat/*.h include/fastverbs/gen/*.h) include/fastverbs/ops.def
# Tests by kind, one folder each; the folder decides how a test runs (tools/run-test.sh):
#   tests/unit/    fastverbs on plain memory, no device (run as they are)
#   tests/diff/    fastverbs against libmlx5, byte for byte, on twin queues of the device
#   tests/device/  the software device through unmodified rdma-core, in one process
#   tests/fabric/  several processes on one fabric
#   tests/rdmacm/  librdmacm on the device, and fastverbs' rdma_* calls against it
#   tests/e2e/     fastverbs end to end on the device: the examples, C++
# Every folder but unit/ runs on the device through sim/fvsim-run. A file at the top of tests/
# runs too, on the device when named sim-*, until it is moved into its folder.
TEST_DIRS  := unit diff device fabric rdmacm e2e
TEST_SRCS  := $(wildcard tests/*.c tests/*.cpp $(foreach d,$(TEST_DIRS),tests/$(d)/*.c tests/$(d)/*.cpp))
TEST_LIB   := $(wildcard tests/lib/*.c)
TEST_LIBO  := $(TEST_LIB:%.c=$(B)/%.o)
TEST_LIBH  := $(wildcard tests/lib/*.h) examples/setup.h
# Names as folder/name; the costliest first, so that make -j starts them early and no long
# compile or run is left alone at the end of a pass: the longest runs, then the longest
# compiles (under the sanitizers: unit/send_wqe 79 s of CPU, most others under 20 s).
SLOW_TESTS := diff/recv fabric/ucx-tools unit/send_wqe fabric/mpi diff/dc device/fuzz unit/dc_wqe rdmacm/tools \
              unit/wr_wqe fabric/xproc unit/vectors-mw device/mw fabric/park diff/wr fabric/libfabric-tools \
              unit/send_refuse device/threads e2e/cxx device/dc-fuzz e2e/typed unit/sq_ring
ALL_NAMES  := $(patsubst tests/%,%,$(basename $(TEST_SRCS)))
TEST_NAMES := $(foreach t,$(SLOW_TESTS),$(filter $(t),$(ALL_NAMES))) $(filter-out $(SLOW_TESTS),$(ALL_NAMES))
TEST_BINS  := $(TEST_NAMES:%=$(B)/tests/%)
# The plain-memory tests, and those plus the differential ones (fastverbs against libmlx5).
LOOSE_TESTS := $(foreach t,$(TEST_NAMES),$(if $(findstring /,$(t)),,$(t)))
UNIT_TESTS := $(filter unit/%,$(TEST_NAMES)) $(filter-out sim-%,$(LOOSE_TESTS))
DIFF_TESTS := $(filter $(UNIT_TESTS) diff/% sim-diff%,$(TEST_NAMES))
# Tests that run with no other test beside them: they pin threads or load both CPUs.
SOLO_TESTS := fabric/park fabric/ucx-tools fabric/mpi fabric/libfabric-tools fabric/tick device/threads
EX_SRCS    := $(filter-out examples/common.c,$(wildcard examples/*.c examples/*.cpp))
EX_BINS    := $(patsubst examples/%,$(B)/examples/%,$(basename $(EX_SRCS)))
GEN_OPS    := $(B)/tools/gen-ops
GEN_MAN    := $(B)/tools/gen-man
GEN_TIDY   := $(B)/tools/gen-tidy

# sim/sim.mk defines sim-all (build the software device) and SIM_RUN (sim/fvsim-run).
.PHONY: sim-all all test test-plain test-clang test-debug test-pyverbs test-san bench run hello fuzz install uninstall gen check-gen \
        check-compile-fail check-headers check-clang check-codegen check-install deps clean

all: $(TEST_BINS) $(EX_BINS) sim-all

# The software device plugs in here: sim/sim.mk defines sim-all, SIM_ENV and its own rules.
ifneq ($(wildcard sim/sim.mk),)
include sim/sim.mk
else
sim-all: ;
SIM_RUN ?=
endif

# Tests name their build folder as FV_TOP "/" FV_BUILD: a B given as an absolute path (B=/tmp/x)
# goes in relative to the top, so that the joined path still names it.
B_FROM_TOP := $(if $(filter /%,$(B)),$(shell realpath -m --relative-to='$(CURDIR)' '$(B)'),$(B))

$(B)/tests/%: tests/%.c $(TEST_LIBO) $(TEST_LIBH) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(CPPFLAGS) -Itests/lib -DFV_TOP='"$(CURDIR)"' -DFV_BUILD='"$(B_FROM_TOP)"' $(TEST_DEFS) -o $@ $< $(TEST_LIBO) $(TEST_LIBS)

# tests/unit/registry loads two libraries that embed fastverbs the way libraries do: every
# symbol hidden but their entry points (tests/so/plugin.c, built twice).
PLUGINS := $(B)/tests/so/libfvplug-a.so $(B)/tests/so/libfvplug-b.so
$(B)/tests/unit/registry: $(PLUGINS)
$(B)/tests/unit/registry: TEST_DEFS = -DFV_PLUGIN_DIR='"$(abspath $(B))/tests/so"'
$(PLUGINS): tests/so/plugin.c $(HEADERS)
	@mkdir -p $(@D)
	printf '{ global: plugin_*; local: *; };\n' > $@.map
	$(CC) $(CFLAGS_COMMON) $(CPPFLAGS) -fPIC -fvisibility=hidden -shared -Wl,--version-script=$@.map \
	    -o $@ $< $(VERBS_LIBS)

# C++ programs (tests/*.cpp, examples/*.cpp) link the C helpers built as C.
$(B)/tests/%: tests/%.cpp $(TEST_LIBO) $(TEST_LIBH) $(HEADERS)
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS_COMMON) $(CPPFLAGS) -Itests/lib -o $@ $< $(TEST_LIBO) $(TEST_LIBS)

# Kept after the build (make would delete them as intermediates and compile them again next time).
.SECONDARY: $(TEST_LIBO)
$(B)/tests/lib/%.o: tests/lib/%.c $(TEST_LIBH) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(CPPFLAGS) -Itests/lib -DFV_TOP='"$(CURDIR)"' -c -o $@ $<

# tests/fabric/mpi runs the MPI ranks of tests/mpi/, built with Open MPI's compiler wrapper.
$(B)/tests/fabric/mpi: $(B)/tests/mpi/mpi-check
$(B)/tests/mpi/mpi-check: tests/mpi/mpi-check.c
	@mkdir -p $(@D)
	mpicc -std=c11 -Wall -Wextra -Werror -O2 -g -o $@ $<

# tests/e2e/examples and tests/fabric/tick run the example programs, tests/rdmacm/tools the
# rdma_cm one.
$(B)/tests/e2e/examples $(B)/tests/fabric/tick: $(EX_BINS)
$(B)/tests/rdmacm/tools: $(B)/examples/rdma_cm_pingpong

# The rdma_cm example also links librdmacm.
$(B)/examples/rdma_cm_pingpong: VERBS_LIBS += -lrdmacm

$(B)/examples/%: examples/%.c examples/common.c examples/common.h examples/setup.h $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(CPPFLAGS) -o $@ $< examples/common.c $(VERBS_LIBS) -lpthread

$(B)/examples/%: examples/%.cpp $(B)/examples/common.o examples/common.h examples/setup.h $(HEADERS)
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS_COMMON) $(CPPFLAGS) -o $@ $< $(B)/examples/common.o $(VERBS_LIBS) -lpthread

$(B)/examples/common.o: examples/common.c examples/common.h examples/setup.h $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(CPPFLAGS) -c -o $@ $<

$(GEN_OPS): tools/gen-ops.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -Wall -Wextra -Werror -O1 -o $@ $<

# The builders' manual pages come from ops.h: `make gen` writes them right after it, and
# `check-gen` fails if they are stale.
$(GEN_MAN): tools/gen-man.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -Wall -Wextra -Werror -O1 -o $@ $<

# The generated headers' layout (one statement a line, 100 columns): gen-ops | gen-tidy.
$(GEN_TIDY): tools/gen-tidy.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -Wall -Wextra -Werror -O1 -o $@ $<

gen check-gen: $(GEN_MAN) $(GEN_TIDY)

# `make gen` rewrites the committed generated headers and pages; `check-gen` fails if they are
# stale, and tools/check-gen-errors.sh feeds the generator broken tables that it must refuse.
gen: $(GEN_OPS)
	$(GEN_OPS) include/fastverbs/ops.def > $(B)/ops.h.raw && $(GEN_TIDY) < $(B)/ops.h.raw > include/fastverbs/gen/ops.h
	$(GEN_OPS) include/fastverbs/ops.def wr > $(B)/wr.h.raw && $(GEN_TIDY) < $(B)/wr.h.raw > include/fastverbs/gen/wr.h
	$(GEN_OPS) include/fastverbs/ops.def post > $(B)/post.h.raw && \
	    $(GEN_TIDY) < $(B)/post.h.raw > include/fastverbs/gen/post_send_ops.h
	$(GEN_OPS) include/fastverbs/ops.def wc > $(B)/wc_op.h.raw && $(GEN_TIDY) < $(B)/wc_op.h.raw > include/fastverbs/gen/wc_op.h
	rm -f $$(grep -l '^\.\\" Generated by tools/gen-man.c' man/man3/* 2>/dev/null)
	$(GEN_MAN) $(B)/ops.h.raw man/man3	# gen-ops' lines as it writes them, before gen-tidy

check-gen: $(GEN_OPS)
	@tools/check-gen-errors.sh $(GEN_OPS) include/fastverbs/ops.def
	@$(GEN_OPS) include/fastverbs/ops.def > $(B)/ops.h.raw && $(GEN_TIDY) < $(B)/ops.h.raw > $(B)/ops.h.fresh
	@$(GEN_OPS) include/fastverbs/ops.def wr > $(B)/wr.h.raw && $(GEN_TIDY) < $(B)/wr.h.raw > $(B)/wr.h.fresh
	@$(GEN_OPS) include/fastverbs/ops.def post > $(B)/post.h.raw && \
	    $(GEN_TIDY) < $(B)/post.h.raw > $(B)/post_send_ops.h.fresh
	@$(GEN_OPS) include/fastverbs/ops.def wc > $(B)/wc_op.h.raw && $(GEN_TIDY) < $(B)/wc_op.h.raw > $(B)/wc_op.h.fresh
	@if cmp -s $(B)/ops.h.fresh include/fastverbs/gen/ops.h && cmp -s $(B)/wr.h.fresh include/fastverbs/gen/wr.h && \
	    cmp -s $(B)/post_send_ops.h.fresh include/fastverbs/gen/post_send_ops.h && \
	    cmp -s $(B)/wc_op.h.fresh include/fastverbs/gen/wc_op.h; then \
	    echo "check-gen: include/fastverbs/gen/ops.h, wr.h, post_send_ops.h and wc_op.h are up to date"; \
	else \
	    echo "check-gen: include/fastverbs/gen/ops.h, wr.h, post_send_ops.h or wc_op.h is stale: run 'make gen' and commit it" >&2; \
	    diff -u include/fastverbs/gen/ops.h $(B)/ops.h.fresh | head -40 >&2; \
	    diff -u include/fastverbs/gen/wr.h $(B)/wr.h.fresh | head -40 >&2; \
	    diff -u include/fastverbs/gen/post_send_ops.h $(B)/post_send_ops.h.fresh | head -40 >&2; exit 1; \
	fi
	@tools/check-gen-man.sh $(GEN_MAN) $(B)/man.fresh $(B)/ops.h.raw

.PHONY: check-docs check-man

# Every reference to docs/ (file and section) and every Markdown link must resolve.
check-docs:
	@tools/check-doc-refs.pl
	@tools/check-doc-refs.pl --self-test

# Every public function has a manual page, and every page renders without a warning.
check-man:
	@CC="$(CC)" tools/check-man.sh
	@CC="$(CC)" tools/check-man-selftest.sh

check-compile-fail:
	@CC="$(CC)" CXX="$(CXX)" CPPFLAGS="$(CPPFLAGS)" tools/compile-fail.sh tests/compile-fail

# The headers alone, as users compile them: C11 without _GNU_SOURCE (also -pedantic) and C++17.
check-headers:
	@CC="$(CC)" CXX="$(CXX)" CLANG="$(CLANG)" CLANGXX="$(CLANGXX)" tools/check-headers.sh

# Every test program must also build warning-free with clang (skipped with a note when absent).
check-clang:
	@if command -v $(CLANG) >/dev/null 2>&1; then \
	    $(MAKE) --no-print-directory B=build-clang CC=$(CLANG) CXX=$(CLANGXX) \
	        $(TEST_NAMES:%=build-clang/tests/%) >/dev/null && \
	    echo "check-clang: $(words $(TEST_NAMES)) test programs build warning-free with $(CLANG)"; \
	else echo "check-clang: $(CLANG) not installed, skipped"; fi

# The send doorbell's barrier keeps the payload's stores before it, in the code that gcc
# and clang produce (x86-64; tests/codegen).
check-codegen:
	@tools/check-codegen.sh $(CC) $(CLANG)

deps:
	@tools/deps.sh

# The install recipes of docs/install.md tried (pkg-config, CMake and Meson consumers, the
# installed fvsim-run), then the Debian packages built in a scratch copy and checked.
check-install:
	@tools/check-install.sh "$(CC)" "$(CXX)"
	@tools/check-deb.sh

# test: install what is missing and check the generated headers; then everything else at once,
# TEST_JOBS jobs (default: one per CPU): the checks, rdma-core's pyverbs suite on both link
# layers, and the passes below. A pass builds its tests and runs each as soon as it is built,
# one line per binary (tools/run-test.sh), and closes with the Criterion details of what failed
# and "tests (PASS): N passed, N failed" (tools/test-summary.sh). The last line adds them all up.
TEST_JOBS   ?= $(shell nproc 2>/dev/null || echo 2)
# The chunks start in this order: the sanitized pass (the costliest) and the checks, each one
# script that cannot be split, first; the passes, made of many short jobs, fill the end.
TEST_CHUNKS := test-san check-install test-pyverbs-ib test-pyverbs-eth check-man check-headers check-codegen \
               check-compile-fail check-docs test-plain test-clang test-O0 test-notune test-debug
SUMMARY_FILE ?=

test: deps
	@$(MAKE) --no-print-directory check-gen
	@$(MAKE) -s --no-print-directory -j$(TEST_JOBS) sim-all
	@mkdir -p build && rm -f build/test-summary build/test-summary.details
	@$(MAKE) -k -j$(TEST_JOBS) --no-print-directory SUMMARY_FILE=$(CURDIR)/build/test-summary \
	    $(TEST_CHUNKS:%=test-chunk-%); tools/test-total.sh build/test-summary $$?

# A check that fails counts as one failure in make test's last line; passes and pyverbs
# write their own counts.
test-chunk-%:
	@$(MAKE) --no-print-directory $* || { case $* in check-*) \
	    echo "$*: 0 passed, 1 failed" >> "$(SUMMARY_FILE)";; esac; exit 1; }

# One pass of tests: PASS names it, B is its build directory, PASS_TESTS the tests it runs.
PASS       ?= plain
PASS_TESTS ?= $(TEST_NAMES)
PASS_FLAGS  = -s -k --no-print-directory
PASS_SUM    = SUMMARY_FILE="$(SUMMARY_FILE)" tools/test-summary.sh
.PHONY: pass-results test-O0 test-notune test-pyverbs-ib test-pyverbs-eth
pass-results: $(PASS_TESTS:%=$(B)/results/%.res)
$(B)/results/%.res: $(B)/tests/%
	@SIM_RUN="$(SIM_RUN)" tools/run-test.sh $(PASS) $(B)/tests $* $(B)/results "$(SOLO_TESTS)"

test-plain: sim-all
	@rm -rf build/results
	@$(MAKE) $(PASS_FLAGS) B=build OPT="$(TEST_OPT)" PASS=plain pass-results; \
	$(PASS_SUM) plain build/results $(TEST_NAMES)

# The whole suite built with clang, on the software device test-plain built: clang takes the
# library's clang-only paths (FV_VEC_STORES 0, FV_DB_CHAIN, the relaxed load of the producer),
# which the other passes never run.
test-clang: sim-all
	@if command -v $(CLANG) >/dev/null 2>&1; then \
	    rm -rf build-clang/results; \
	    $(MAKE) $(PASS_FLAGS) B=build-clang CC=$(CLANG) CXX=$(CLANGXX) OPT="$(TEST_OPT)" PASS=clang pass-results; \
	    $(PASS_SUM) clang build-clang/results $(TEST_NAMES); \
	else echo "test-clang: $(CLANG) not installed, skipped"; fi

# rdma-core's test suite (python3-pyverbs) on the software device, once and not under ASan:
# it exercises the device, not our code. Fails on any failure or error. The InfiniBand and
# the Ethernet run are independent.
test-pyverbs: sim-all
	@SIM_RUN="$(SIM_RUN)" SUMMARY_FILE="$(SUMMARY_FILE)" tools/run-pyverbs.sh build
test-pyverbs-ib test-pyverbs-eth: test-pyverbs-%: sim-all
	@SIM_RUN="$(SIM_RUN)" SUMMARY_FILE="$(SUMMARY_FILE)" tools/run-pyverbs.sh build $*

# The library's own unit tests (plain memory, no software device) once more with -DFV_DEBUG: the
# ring invariants asserted (FV_ASSERT, portable.h). Small on purpose: the other passes run the rest.
test-debug:
	@rm -rf build-debug/results
	@$(MAKE) $(PASS_FLAGS) B=build-debug OPT="$(TEST_OPT)" EXTRA_CFLAGS=-DFV_DEBUG PASS=debug PASS_TESTS="$(UNIT_TESTS)" pass-results; \
	$(PASS_SUM) debug build-debug/results $(UNIT_TESTS)

# The unit and the differential tests (fastverbs against libmlx5) built at -O0, and built with
# -DFV_NO_TUNE (no compiler-specific tuning): the paths __builtin_constant_p and the tuning
# switches choose at -O2 are not the only ones tested.
test-O0: sim-all
	@rm -rf build-O0/results
	@$(MAKE) $(PASS_FLAGS) B=build-O0 OPT="-O0 -g1" PASS=O0 PASS_TESTS="$(DIFF_TESTS)" pass-results; \
	$(PASS_SUM) O0 build-O0/results $(DIFF_TESTS)
# While no header reads FV_NO_TUNE, its pass would build the plain pass's programs again and
# run them twice: tools/macro-inert.sh compares each program's preprocessed sources with and
# without the macro, and the pass builds and runs only when one differs.
NOTUNE_SRCS = $(foreach t,$(DIFF_TESTS),$(firstword $(wildcard tests/$(t).c tests/$(t).cpp))) $(TEST_LIB) tests/so/plugin.c
test-notune: sim-all
	@rm -rf build-notune/results
	@if CC="$(CC)" CXX="$(CXX)" FLAGS="$(CPPFLAGS) -Itests/lib -DFV_TOP=0 -DFV_BUILD=0 -DFV_PLUGIN_DIR=0" \
	    tools/macro-inert.sh FV_NO_TUNE $(NOTUNE_SRCS); then \
	    echo "tests (notune): -DFV_NO_TUNE changes none of the $(words $(DIFF_TESTS)) programs' sources: the plain pass ran them"; \
	else \
	    $(MAKE) $(PASS_FLAGS) B=build-notune OPT="$(TEST_OPT)" EXTRA_CFLAGS=-DFV_NO_TUNE PASS=notune PASS_TESTS="$(DIFF_TESTS)" pass-results; \
	    $(PASS_SUM) notune build-notune/results $(DIFF_TESTS); fi

test-san: sim-all
	@rm -rf build-san/results
	@$(MAKE) $(PASS_FLAGS) B=build-san OPT="$(SAN_OPT)" EXTRA_CFLAGS='$$(SAN_FLAGS)' PASS=san pass-results; \
	$(PASS_SUM) san build-san/results $(TEST_NAMES)

# Cost per request and per completion, fastverbs against libmlx5: bench/bench.mk, bench/run.sh.
bench:
	@$(MAKE) --no-print-directory -f Makefile -f bench/bench.mk bench-run

# The flagship example: on a real mlx5 device when there is one, otherwise on sim/.
# A long fuzz run of the software device (tests/device/fuzz.c) with a fresh seed, printed so
# a failure can be replayed: FVSIM_FUZZ_SEED=N make fuzz. make test runs a short one.
fuzz: sim-all $(B)/tests/device/fuzz
	@seed=$${FVSIM_FUZZ_SEED:-$$(date +%s)}; rounds=$${FVSIM_FUZZ_ROUNDS:-20000}; \
	echo "fuzz: seed $$seed, $$rounds rounds"; \
	FVSIM_FUZZ_SEED=$$seed FVSIM_FUZZ_ROUNDS=$$rounds $(SIM_RUN) $(B)/tests/device/fuzz --verbose

# run and hello build only what they run, on every CPU unless make was given -j.
RUN_JOBS := $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 2))
run:
	@$(MAKE) -s --no-print-directory $(RUN_JOBS) $(B)/examples/rc_pingpong sim-all
	@SIM_RUN="$(SIM_RUN)" tools/run-example.sh $(B)/examples/rc_pingpong -n 10000

# The first program (examples/hello.c), the way run runs the flagship.
hello:
	@$(MAKE) -s --no-print-directory $(RUN_JOBS) $(B)/examples/hello sim-all
	@SIM_RUN="$(SIM_RUN)" tools/run-example.sh $(B)/examples/hello

# What install writes names PREFIX, so it is written afresh each time, in $(B)/install: fastverbs.pc,
# and the CMake package, which finds the prefix from its own directory (a DESTDIR copy then
# points at its own headers).
INSTALL_GEN := $(B)/install/fastverbs.pc $(B)/install/fastverbs-config.cmake $(B)/install/fastverbs-config-version.cmake
.PHONY: $(INSTALL_GEN) install-check-dirs
$(B)/install/fastverbs.pc: fastverbs.pc.in
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e "s|@VERSION@|$$(tools/version.sh)|g" $< > $@
$(B)/install/fastverbs-config.cmake: cmake/fastverbs-config.cmake.in
	@mkdir -p $(@D)
	sed -e "s|@PREFIX_FROM_HERE@|$$(realpath -m --relative-to='$(CMAKEDIR)' '$(PREFIX)')|g" $< > $@
$(B)/install/fastverbs-config-version.cmake: cmake/fastverbs-config-version.cmake.in
	@mkdir -p $(@D)
	sed -e "s|@VERSION@|$$(tools/version.sh)|g" $< > $@

install-check-dirs:
	@for d in '$(PREFIX)' '$(BINDIR)' '$(SIMDIR)' '$(PKGCONFIGDIR)' '$(CMAKEDIR)' '$(MANDIR)' '$(DOCDIR)'; do \
	    case $$d in /*) ;; *) echo "install: $$d is not an absolute path" >&2; exit 1 ;; esac; done

# What users include (ops.def is the generator's input, not included), fastverbs.pc, the CMake
# package, the manual pages, the examples with setup.h (sources to start from); then the
# software device (tools/sim-install.sh).
install: install-check-dirs $(INSTALL_GEN) sim-all
	install -d $(DESTDIR)$(PREFIX)/include/fastverbs/compat $(DESTDIR)$(PREFIX)/include/fastverbs/gen $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(CMAKEDIR)
	install -m 0644 include/fastverbs/*.h $(DESTDIR)$(PREFIX)/include/fastverbs/
	install -m 0644 include/fastverbs/compat/*.h $(DESTDIR)$(PREFIX)/include/fastverbs/compat/
	install -m 0644 include/fastverbs/gen/*.h $(DESTDIR)$(PREFIX)/include/fastverbs/gen/
	install -m 0644 $(B)/install/fastverbs.pc $(DESTDIR)$(PKGCONFIGDIR)/fastverbs.pc
	install -m 0644 $(B)/install/fastverbs-config.cmake $(B)/install/fastverbs-config-version.cmake $(DESTDIR)$(CMAKEDIR)/
	tools/man-install.sh install $(DESTDIR)$(MANDIR)
	tools/sim-install.sh install '$(DESTDIR)' $(BINDIR) $(SIMDIR) $(PREFIX)/include
	install -d $(DESTDIR)$(DOCDIR)/examples
	install -m 0644 examples/*.c examples/*.cpp examples/*.h $(DESTDIR)$(DOCDIR)/examples/

uninstall: install-check-dirs
	rm -rf $(DESTDIR)$(PREFIX)/include/fastverbs $(DESTDIR)$(PKGCONFIGDIR)/fastverbs.pc
	rm -f $(DESTDIR)$(CMAKEDIR)/fastverbs-config.cmake $(DESTDIR)$(CMAKEDIR)/fastverbs-config-version.cmake
	rmdir $(DESTDIR)$(CMAKEDIR) 2>/dev/null || true
	tools/man-install.sh uninstall $(DESTDIR)$(MANDIR)
	tools/sim-install.sh uninstall '$(DESTDIR)' $(BINDIR) $(SIMDIR) $(PREFIX)/include
	rm -rf $(DESTDIR)$(DOCDIR)/examples
	-rmdir $(DESTDIR)$(DOCDIR) 2>/dev/null

clean:
	rm -rf build build-san build-clang build-debug build-O0 build-notune fastverbs.pc
