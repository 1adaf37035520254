# The software mlx5 device. Included by the top Makefile; builds into build/sim whatever
# B says, and never with the sanitizer flags: the preload library must not pull an ASan
# runtime into programs that do not have one (fvsim-run orders LD_PRELOAD for those that do).

SIM_OUT    := build/sim
SIM_RUN    := sim/fvsim-run
SIM_CFLAGS := -std=c11 -Wall -Wextra -Werror -O2 -g -D_GNU_SOURCE -fPIC -fvisibility=hidden
SIM_HDRS   := $(wildcard sim/*.h sim/*/*.h)
# Flags a packager adds (debian/rules: dpkg-buildflags' hardening flags).
SIM_CFLAGS += $(SIM_EXTRA_CFLAGS)
SIM_LDFLAGS ?=

SIM_LIB_SRCS := $(wildcard sim/common/*.c sim/model/*.c sim/engine/*.c sim/fabric/*.c sim/cm/*.c) \
                sim/api.c \
                $(filter-out sim/front/sysfs_main.c sim/front/sysfs.c,$(wildcard sim/front/*.c))
SIM_LIB_OBJS := $(patsubst sim/%.c,$(SIM_OUT)/obj/%.o,$(SIM_LIB_SRCS))
SIM_TOOL_SRCS := sim/front/sysfs_main.c sim/front/sysfs.c sim/common/config.c sim/common/roce.c
SIM_TOOL_OBJS := $(patsubst sim/%.c,$(SIM_OUT)/obj/%.o,$(SIM_TOOL_SRCS))

.PHONY: sim-all
sim-all: $(SIM_OUT)/libfvsim.so $(SIM_OUT)/fvsim-sysfs

$(SIM_OUT)/obj/%.o: sim/%.c $(SIM_HDRS) sim/sim.mk
	@mkdir -p $(@D)
	$(CC) $(SIM_CFLAGS) -c -o $@ $<

$(SIM_OUT)/libfvsim.so: $(SIM_LIB_OBJS)
	$(CC) $(SIM_LDFLAGS) -shared -o $@ $^ -ldl -lpthread

$(SIM_OUT)/fvsim-sysfs: $(SIM_TOOL_OBJS)
	$(CC) $(SIM_LDFLAGS) -o $@ $^

# Every test binary depends on include/fastverbs/ops.def, which the library side adds.
# Until it exists on this branch, an empty rule lets the sim tests build; once the file
# is there this is inert.
ifeq ($(wildcard include/fastverbs/ops.def),)
include/fastverbs/ops.def: ;
endif
