# The benchmarks: `make bench` (top Makefile) runs `make -f Makefile -f bench/bench.mk bench-run`.
# Builds bench/post.c (also as post-ring: loop (e); post-dc: the DC loops; post-v3, post-ring-v3:
# -march=x86-64-v3), bench/poll.c,
# bench/recv.c, bench/ucx.c and bench/raw.c with -O2 and no sanitizers (whatever OPT and
# EXTRA_CFLAGS say), checks for valgrind and gnuplot, and runs bench/run.sh: on a real mlx5
# device when there is one, otherwise on the software device. Report: stdout and
# bench/results/latest.{md,png,tsv}.

BENCH_OUT    := $(B)/bench
BENCH_CFLAGS := -std=c11 -Wall -Wextra -Werror -O2 -g
BENCH_BINS   := $(BENCH_OUT)/post $(BENCH_OUT)/post-ring $(BENCH_OUT)/post-dc $(BENCH_OUT)/post-v3 $(BENCH_OUT)/post-ring-v3 \
		$(BENCH_OUT)/post-notune \
		$(BENCH_OUT)/poll $(BENCH_OUT)/recv $(BENCH_OUT)/ucx $(BENCH_OUT)/raw $(BENCH_OUT)/wakeup

.PHONY: bench-run bench-build bench-deps

$(BENCH_OUT)/%: bench/%.c bench/bench.h examples/setup.h $(HEADERS) sim/fvsim.h bench/bench.mk
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) $(CPPFLAGS) -o $@ $< $(VERBS_LIBS)

# What waking a thread costs here (sim/README.md, "Programs that poll memory"); not run by bench-run.
$(BENCH_OUT)/wakeup: bench/wakeup.c bench/bench.mk
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -o $@ $< -pthread

# UCX's UCT, the peer bench/ucx.c compares with (Debian libucx-dev).
$(BENCH_OUT)/ucx: VERBS_LIBS += -luct -lucs

# The posting bench built with clang too, when there is one: bench/run.sh counts its typed and
# floor paths (the target: clang's typed path within 1.15 x clang's floor in the same loop).
$(BENCH_OUT)/post-clang: bench/post.c bench/bench.h $(HEADERS) sim/fvsim.h bench/bench.mk
	@mkdir -p $(@D)
	$(CLANG) $(BENCH_CFLAGS) $(CPPFLAGS) -o $@ $< $(VERBS_LIBS)

# And once more with the SGE copied field by field (BENCH_SGE_FIELDS, bench/post.c): counted the
# same way, it shows how much of the clang rows clang's reading of a whole-struct copy costs.
$(BENCH_OUT)/post-clang-fields: bench/post.c bench/bench.h $(HEADERS) sim/fvsim.h bench/bench.mk
	@mkdir -p $(@D)
	$(CLANG) $(BENCH_CFLAGS) -DBENCH_SGE_FIELDS $(CPPFLAGS) -o $@ $< $(VERBS_LIBS)

# Loop (e), posted and rung in one loop body (BENCH_RING, bench/post.c): a build of its own, with
# gcc and, like the two above, with clang.
$(BENCH_OUT)/post-ring: bench/post.c bench/bench.h examples/setup.h $(HEADERS) sim/fvsim.h bench/bench.mk
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -DBENCH_RING $(CPPFLAGS) -o $@ $< $(VERBS_LIBS)

$(BENCH_OUT)/post-ring-clang: bench/post.c bench/bench.h $(HEADERS) sim/fvsim.h bench/bench.mk
	@mkdir -p $(@D)
	$(CLANG) $(BENCH_CFLAGS) -DBENCH_RING $(CPPFLAGS) -o $@ $< $(VERBS_LIBS)

$(BENCH_OUT)/post-ring-clang-fields: bench/post.c bench/bench.h $(HEADERS) sim/fvsim.h bench/bench.mk
	@mkdir -p $(@D)
	$(CLANG) $(BENCH_CFLAGS) -DBENCH_RING -DBENCH_SGE_FIELDS $(CPPFLAGS) -o $@ $< $(VERBS_LIBS)

# The DC loops (BENCH_DC, bench/post.c): a build of their own too, so that their instances change
# nothing gcc decides for the other loops' code.
$(BENCH_OUT)/post-dc: bench/post.c bench/bench.h examples/setup.h $(HEADERS) sim/fvsim.h bench/bench.mk
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -DBENCH_DC $(CPPFLAGS) -o $@ $< $(VERBS_LIBS)

# The posting bench built with -DFV_NO_TUNE (include/fastverbs/tune.h: no compiler-specific tuning),
# counted for the typed, fv_post_send and fv_wr_* paths (bench/run.sh: rows "_notune"): what the
# tuning still buys with today's compiler.
$(BENCH_OUT)/post-notune: bench/post.c bench/bench.h examples/setup.h $(HEADERS) sim/fvsim.h bench/bench.mk
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -DFV_NO_TUNE $(CPPFLAGS) -o $@ $< $(VERBS_LIBS)

# The posting bench built for x86-64-v3 (AVX2, BMI2, MOVBE: the byte-swapped stores may be movbe),
# counted for its typed path and floor (bench/run.sh: rows "_v3").
$(BENCH_OUT)/post-v3: bench/post.c bench/bench.h examples/setup.h $(HEADERS) sim/fvsim.h bench/bench.mk
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -march=x86-64-v3 $(CPPFLAGS) -o $@ $< $(VERBS_LIBS)

$(BENCH_OUT)/post-ring-v3: bench/post.c bench/bench.h examples/setup.h $(HEADERS) sim/fvsim.h bench/bench.mk
	@mkdir -p $(@D)
	$(CC) $(BENCH_CFLAGS) -march=x86-64-v3 -DBENCH_RING $(CPPFLAGS) -o $@ $< $(VERBS_LIBS)

CLANG_BINS := $(addprefix $(BENCH_OUT)/,post-clang post-clang-fields post-ring-clang post-ring-clang-fields)

bench-build: $(BENCH_BINS) $(if $(shell command -v $(CLANG) 2>/dev/null),$(CLANG_BINS))

# valgrind (with its client-request headers) and gnuplot: installed when root, else named.
bench-deps:
	@missing=""; \
	command -v valgrind >/dev/null 2>&1 && [ -f /usr/include/valgrind/callgrind.h ] || missing="$$missing valgrind"; \
	command -v gnuplot >/dev/null 2>&1 || missing="$$missing gnuplot-nox"; \
	[ -f /usr/include/uct/api/uct.h ] || missing="$$missing libucx-dev"; \
	if [ -n "$$missing" ]; then \
	    if [ "$$(id -u)" -ne 0 ]; then \
	        echo "bench: missing Debian packages:$$missing" >&2; \
	        echo "bench: run as root, or: sudo apt-get install$$missing" >&2; exit 1; \
	    fi; \
	    echo "bench: installing$$missing" >&2; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >&2; \
	fi

bench-run: bench-deps
	@$(MAKE) --no-print-directory -f Makefile -f bench/bench.mk bench-build sim-all >&2
	@SIM_RUN="$(SIM_RUN)" CC="$(CC)" bench/run.sh $(BENCH_OUT)
