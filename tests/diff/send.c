/*
 * Differential test on the software device, send side, RC/UC/UD: libmlx5 against fastverbs,
 * byte for byte (the engine and what it compares: tests/lib/diff-send.h). Each configuration
 * runs ROUNDS seeded random WR lists; the log line gives what they exercised.
 */
#include "diff-send.h"

Test(sim_diff, rc_1sge_no_inline)  { run(&(struct caps){ IBV_QPT_RC, 64, 1, 0, 0, 0, 0 }, 1); }
Test(sim_diff, rc_4sge_inline64)   { run(&(struct caps){ IBV_QPT_RC, 64, 4, 64, 0, 0, 0 }, 2); }
Test(sim_diff, rc_16sge_inline256_sig_all) { run(&(struct caps){ IBV_QPT_RC, 256, 16, 256, 1, 0, 0 }, 3); }
Test(sim_diff, uc_4sge_inline64)   { run(&(struct caps){ IBV_QPT_UC, 64, 4, 64, 0, 0, 0 }, 4); }
Test(sim_diff, ud_1sge_inline64)   { run(&(struct caps){ IBV_QPT_UD, 64, 1, 64, 0, 0, 0 }, 5); }
Test(sim_diff, ud_4sge_inline256)  { run(&(struct caps){ IBV_QPT_UD, 1024, 4, 256, 0, 0, 0 }, 6); }

/* Doorbell-only QPs (FVSIM_NO_BLUEFLAME: mlx5dv bf.size 0): 8-byte doorbells, no BlueFlame copy. */
Test(sim_diff, rc_4sge_inline64_doorbell_only) { run(&(struct caps){ IBV_QPT_RC, 64, 4, 64, 0, 1, 0 }, 7); }
Test(sim_diff, ud_4sge_inline64_doorbell_only) { run(&(struct caps){ IBV_QPT_UD, 128, 4, 64, 1, 1, 0 }, 8); }
