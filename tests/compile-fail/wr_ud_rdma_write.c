/* fv_wr_*: RDMA WRITE on a UD handle must not compile (ibv_wr_post(3): UD has send, send_imm).
 * expect-error: not compatible with any
 */
#include <fastverbs/compat/verbs.h>

void f(struct fv_ud *bad, struct fv_rc *good);
void f(struct fv_ud *bad, struct fv_rc *good)
{
	(void)bad; (void)good;
#ifdef FV_CONTROL
	fv_wr_rdma_write(good, 7, 0x1000);
#else
	fv_wr_rdma_write(bad, 7, 0x1000);
#endif
}
