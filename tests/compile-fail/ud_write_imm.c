/* An illegal (QP type, operation) pair: RDMA WRITE with immediate on a UD handle must not compile.
 * expect-error: fv_write_imm is not an operation of struct fv_ud
 */
#include <fastverbs/compat/post_send.h>

int f(struct fv_ud *bad, struct fv_uc *good, struct ibv_sge *s, struct fv_ah *ah);
int f(struct fv_ud *bad, struct fv_uc *good, struct ibv_sge *s, struct fv_ah *ah)
{
	(void)bad; (void)good; (void)s; (void)ah;
#ifdef FV_CONTROL
	return fv_write_imm_inline(good, 1, 0, "x", 1, 0x1000, 7, 0);
#else
	return fv_write_imm_inline(bad, 1, 0, "x", 1, 0x1000, 7, 0);
#endif
}
