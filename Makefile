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
CFLAGS_COMMON = -std=c11 -Wall -Wextra -Werror $(OPT) $(EXTRA_CFLAGS)
CXXFLAGS_COMMON = -std=c++17 -Wall -Wextra -Werror $(OPT) $(EXTRA_CFLAGS)
CPPFLAGS += -Iinclude -D_GNU_SOURCE
VERBS_LIBS := -libverbs -lmlx5
TEST_LIBS  := -lcriterion $(VERBS_LIBS) -lrdmacm -lpthread

# B is the build directory; the sanitized pass of `make test` reruns with B=build-san.
B ?= build

HEADERS    := $(wildcard include/fastverbs/*.h include/fastverbs/compat/*.h) include/fastverbs/ops.def
TEST_SRCS  := $(wildcard tests/*.c) $(wildcard tests/*.cpp)
TEST_LIB   := $(wildcard tests/lib/*.c)
TEST_LIBH  := $(wildcard tests/lib/*.h) examples/setup.h
TEST_BINS  := $(patsubst tests/%,$(B)/tests/%,$(basename $(TEST_SRCS)))
EX_SRCS    := $(filter-out examples/common.c,$(wildcard examples/*.c examples/*.cpp))
EX_BINS    := $(patsubst examples/%,$(B)/examples/%,$(basename $(EX_SRCS)))
GEN_OPS    := $(B)/tools/gen-ops
GEN_MAN    := $(B)/tools/gen-man

# sim/sim.mk defines sim-all (build the software device) and SIM_RUN (sim/fvsim-run).
.PHONY: sim-all all test test-run test-plain test-clang test-debug test-pyverbs test-san bench run hello fuzz install uninstall gen check-gen \
        check-compile-fail check-headers check-clang check-codegen check-install deps clean

all: $(TEST_BINS) $(EX_BINS) sim-all

# The software device plugs in here: sim/sim.mk defines sim-all, SIM_ENV and its own rules.
ifneq ($(wildcard sim/sim.mk),)
include sim/sim.mk
else
sim-all: ;
SIM_RUN ?=
endif

$(B)/tests/%: tests/%.c $(TEST_LIB) $(TEST_LIBH) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(CPPFLAGS) -Itests/lib -DFV_TOP='"$(CURDIR)"' -DFV_BUILD='"$(B)"' $(TEST_DEFS) -o $@ $< $(TEST_LIB) $(TEST_LIBS)

# tests/registry loads two libraries that embed fastverbs the way libraries do: every
# symbol hidden but their entry points (tests/so/plugin.c, built twice).
PLUGINS := $(B)/tests/so/libfvplug-a.so $(B)/tests/so/libfvplug-b.so
$(B)/tests/registry: $(PLUGINS)
$(B)/tests/registry: TEST_DEFS = -DFV_PLUGIN_DIR='"$(CURDIR)/$(B)/tests/so"'
$(PLUGINS): tests/so/plugin.c $(HEADERS)
	@mkdir -p $(@D)
	printf '{ global: plugin_*; local: *; };\n' > $@.map
	$(CC) $(CFLAGS_COMMON) $(CPPFLAGS) -fPIC -fvisibility=hidden -shared -Wl,--version-script=$@.map \
	    -o $@ $< $(VERBS_LIBS)

# C++ programs (tests/*.cpp, examples/*.cpp) link the C helpers built as C.
$(B)/tests/%: tests/%.cpp $(TEST_LIB:%.c=$(B)/%.o) $(TEST_LIBH) $(HEADERS)
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS_COMMON) $(CPPFLAGS) -Itests/lib -o $@ $< $(TEST_LIB:%.c=$(B)/%.o) $(TEST_LIBS)

$(B)/tests/lib/%.o: tests/lib/%.c $(TEST_LIBH) $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_COMMON) $(CPPFLAGS) -Itests/lib -DFV_TOP='"$(CURDIR)"' -c -o $@ $<

# tests/sim-mpi runs the MPI ranks of tests/mpi/, built with Open MPI's compiler wrapper.
$(B)/tests/sim-mpi: $(B)/tests/mpi/mpi-check
$(B)/tests/mpi/mpi-check: tests/mpi/mpi-check.c
	@mkdir -p $(@D)
	mpicc -std=c11 -Wall -Wextra -Werror -O2 -g -o $@ $<

# tests/sim-examples runs the example programs, and tests/sim-tick one of them.
$(B)/tests/sim-examples $(B)/tests/sim-tick: $(EX_BINS)

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

gen check-gen: $(GEN_MAN)

# `make gen` rewrites the committed generated headers and pages; `check-gen` fails if they are
# stale, and tools/check-gen-errors.sh feeds the generator broken tables that it must refuse.
gen: $(GEN_OPS)
	$(GEN_OPS) include/fastverbs/ops.def > include/fastverbs/ops.h
	$(GEN_OPS) include/fastverbs/ops.def wr > include/fastverbs/compat/wr.h
	$(GEN_OPS) include/fastverbs/ops.def post > include/fastverbs/compat/post_send_ops.h
	rm -f $$(grep -l '^\.\\" Generated by tools/gen-man.c' man/man3/* 2>/dev/null)
	$(GEN_MAN) include/fastverbs/ops.h man/man3

check-gen: $(GEN_OPS)
	@tools/check-gen-errors.sh $(GEN_OPS) include/fastverbs/ops.def
	@$(GEN_OPS) include/fastverbs/ops.def > $(B)/ops.h.fresh
	@$(GEN_OPS) include/fastverbs/ops.def wr > $(B)/wr.h.fresh
	@$(GEN_OPS) include/fastverbs/ops.def post > $(B)/post_send_ops.h.fresh
	@if cmp -s $(B)/ops.h.fresh include/fastverbs/ops.h && cmp -s $(B)/wr.h.fresh include/fastverbs/compat/wr.h && \
	    cmp -s $(B)/post_send_ops.h.fresh include/fastverbs/compat/post_send_ops.h; then \
	    echo "check-gen: include/fastverbs/ops.h, compat/wr.h and compat/post_send_ops.h are up to date"; \
	else \
	    echo "check-gen: include/fastverbs/ops.h, compat/wr.h or compat/post_send_ops.h is stale: run 'make gen' and commit it" >&2; \
	    diff -u include/fastverbs/ops.h $(B)/ops.h.fresh | head -40 >&2; \
	    diff -u include/fastverbs/compat/wr.h $(B)/wr.h.fresh | head -40 >&2; \
	    diff -u include/fastverbs/compat/post_send_ops.h $(B)/post_send_ops.h.fresh | head -40 >&2; exit 1; \
	fi
	@tools/check-gen-man.sh $(GEN_MAN) $(B)/man.fresh

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
	        $(patsubst tests/%,build-clang/tests/%,$(basename $(TEST_SRCS))) >/dev/null && \
	    echo "check-clang: $(words $(TEST_SRCS)) test programs build warning-free with $(CLANG)"; \
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

# test: install what is missing, check the generated header, build and run everything,
# run rdma-core's own test suite on the software device, then build and run the whole
# suite again under ASan+UBSan.
test: deps
	@$(MAKE) --no-print-directory check-gen
	@$(MAKE) --no-print-directory check-docs
	@$(MAKE) --no-print-directory check-man
	@$(MAKE) --no-print-directory check-compile-fail
	@$(MAKE) --no-print-directory check-headers
	@$(MAKE) --no-print-directory check-codegen
	@$(MAKE) --no-print-directory check-install
	@$(MAKE) --no-print-directory test-plain
	@$(MAKE) --no-print-directory test-clang
	@$(MAKE) --no-print-directory test-debug
	@$(MAKE) --no-print-directory test-pyverbs
	@$(MAKE) --no-print-directory test-san

test-plain:
	@$(MAKE) --no-print-directory B=build all
	@B=build SIM_RUN="$(SIM_RUN)" tools/run-tests.sh build/tests $(TEST_BINS:$(B)/tests/%=%)

# The whole suite built with clang (check-clang) and run, on the software device test-plain
# built: clang takes the library's clang-only paths (FV_VEC_STORES 0, FV_DB_CHAIN, the relaxed
# load of the producer), which the other passes never run.
test-clang: check-clang sim-all
	@if command -v $(CLANG) >/dev/null 2>&1; then \
	    B=build-clang SIM_RUN="$(SIM_RUN)" tools/run-tests.sh build-clang/tests $(TEST_BINS:$(B)/tests/%=%); \
	fi

# rdma-core's test suite (python3-pyverbs) on the software device, once and not under ASan:
# it exercises the device, not our code. Fails on any failure or error.
test-pyverbs: sim-all
	@SIM_RUN="$(SIM_RUN)" tools/run-pyverbs.sh build

# The library's own unit tests (plain memory, no software device) once more with -DFV_DEBUG: the
# ring invariants asserted (FV_ASSERT, portable.h). Small on purpose: the other passes run the rest.
DEBUG_TESTS := $(filter-out sim-%,$(TEST_BINS:$(B)/tests/%=%))
test-debug:
	@$(MAKE) --no-print-directory B=build-debug EXTRA_CFLAGS=-DFV_DEBUG $(DEBUG_TESTS:%=build-debug/tests/%)
	@B=build-debug tools/run-tests.sh build-debug/tests $(DEBUG_TESTS)

test-san:
	@$(MAKE) --no-print-directory B=build-san OPT="-O1 -g" EXTRA_CFLAGS="$(SAN_FLAGS)" all
	@B=build-san SIM_RUN="$(SIM_RUN)" tools/run-tests.sh build-san/tests $(TEST_BINS:$(B)/tests/%=%)

# Cost per request and per completion, fastverbs against libmlx5: bench/bench.mk, bench/run.sh.
bench:
	@$(MAKE) --no-print-directory -f Makefile -f bench/bench.mk bench-run

# The flagship example: on a real mlx5 device when there is one, otherwise on sim/.
# A long fuzz run of the software device (tests/sim-fuzz.c) with a fresh seed, printed so
# a failure can be replayed: FVSIM_FUZZ_SEED=N make fuzz. make test runs a short one.
fuzz: sim-all $(B)/tests/sim-fuzz
	@seed=$${FVSIM_FUZZ_SEED:-$$(date +%s)}; rounds=$${FVSIM_FUZZ_ROUNDS:-20000}; \
	echo "fuzz: seed $$seed, $$rounds rounds"; \
	FVSIM_FUZZ_SEED=$$seed FVSIM_FUZZ_ROUNDS=$$rounds $(SIM_RUN) $(B)/tests/sim-fuzz --verbose

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
	install -d $(DESTDIR)$(PREFIX)/include/fastverbs/compat $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(CMAKEDIR)
	install -m 0644 include/fastverbs/*.h $(DESTDIR)$(PREFIX)/include/fastverbs/
	install -m 0644 include/fastverbs/compat/*.h $(DESTDIR)$(PREFIX)/include/fastverbs/compat/
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
	rm -rf build build-san build-clang build-debug fastverbs.pc
