/*
 * Differential test on the software device, send side, XRC: XRC_SEND twins (libmlx5 against
 * fastverbs, tests/lib/diff-send.h) whose WRs name one of three XRC SRQs behind the twins'
 * XRC_RECV target QPs, or now and then an SRQ number nobody has (both fail the same way at
 * the responder and start again).
 */
#include "diff-send.h"

Test(sim_diff_xrc, xrc_1sge_no_inline) { run(&(struct caps){ IBV_QPT_XRC_SEND, 64, 1, 0, 0, 0, 0 }, 11); }
Test(sim_diff_xrc, xrc_4sge_inline64)  { run(&(struct caps){ IBV_QPT_XRC_SEND, 64, 4, 64, 0, 0, 0 }, 12); }
Test(sim_diff_xrc, xrc_16sge_inline256_sig_all) { run(&(struct caps){ IBV_QPT_XRC_SEND, 256, 16, 256, 1, 0, 0 }, 13); }
Test(sim_diff_xrc, xrc_4sge_inline64_doorbell_only) { run(&(struct caps){ IBV_QPT_XRC_SEND, 64, 4, 64, 0, 1, 0 }, 14); }
