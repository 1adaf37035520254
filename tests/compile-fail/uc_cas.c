/* An illegal (QP type, operation) pair: compare-and-swap on a UC handle must not compile.
 * expect-error: fv_cas is not an operation of struct fv_uc
 */
#include <fastverbs/compat/post_send.h>

int f(struct fv_uc *bad, struct fv_rc *good, struct ibv_sge *s, struct fv_ah *ah);
int f(struct fv_uc *bad, struct fv_rc *good, struct ibv_sge *s, struct fv_ah *ah)
{
	(void)bad; (void)good; (void)s; (void)ah;
#ifdef FV_CONTROL
	return fv_cas(good, 1, 0, s, 0x1000, 7, 1, 2);
#else
	return fv_cas(bad, 1, 0, s, 0x1000, 7, 1, 2);
#endif
}
