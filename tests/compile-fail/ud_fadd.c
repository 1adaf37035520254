/* An illegal (QP type, operation) pair: an atomic on a UD handle must not compile.
 * expect-error: fv_fadd is not an operation of struct fv_ud
 */
#include <fastverbs/compat/post_send.h>

int f(struct fv_ud *bad, struct fv_xrc *good, struct ibv_sge *s, struct fv_ah *ah);
int f(struct fv_ud *bad, struct fv_xrc *good, struct ibv_sge *s, struct fv_ah *ah)
{
	(void)bad; (void)good; (void)s; (void)ah;
#ifdef FV_CONTROL
	return fv_fadd(good, 1, 0, s, 0x1000, 7, 1, 5);
#else
	return fv_fadd(bad, 1, 0, s, 0x1000, 7, 1, 5);
#endif
}
