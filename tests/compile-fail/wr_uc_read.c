/* fv_wr_*: RDMA READ on a UC handle must not compile.
 * expect-error: not compatible with any
 */
#include <fastverbs/compat/verbs.h>

void f(struct fv_uc *bad, struct fv_rc *good);
void f(struct fv_uc *bad, struct fv_rc *good)
{
	(void)bad; (void)good;
#ifdef FV_CONTROL
	fv_wr_rdma_read(good, 7, 0x1000);
#else
	fv_wr_rdma_read(bad, 7, 0x1000);
#endif
}
