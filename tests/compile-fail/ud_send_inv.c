/* An illegal (QP type, operation) pair: SEND with invalidate on a UD handle must not compile.
 * expect-error: fv_send_inv is not an operation of struct fv_ud
 */
#include <fastverbs/compat/post_send.h>

int f(struct fv_ud *bad, struct fv_rc *good, struct ibv_sge *s, struct fv_ah *ah);
int f(struct fv_ud *bad, struct fv_rc *good, struct ibv_sge *s, struct fv_ah *ah)
{
	(void)bad; (void)good; (void)s; (void)ah;
#ifdef FV_CONTROL
	return fv_send_inv(good, 1, 0, s, 9);
#else
	return fv_send_inv(bad, 1, 0, s, 9);
#endif
}
