/* A typed builder given something that is not a fastverbs handle names itself and the handles
 * it takes.
 * expect-error: fv_read: the first argument is not a fastverbs handle; it takes struct fv_rc \*, struct fv_xrc \*
 */
#include <fastverbs/fastverbs.h>

int f(struct fv_rc *good, struct fv_qp *bad, struct ibv_sge *s);
int f(struct fv_rc *good, struct fv_qp *bad, struct ibv_sge *s)
{
	(void)good; (void)bad;
#ifdef FV_CONTROL
	return fv_read(good, 1, 0, s, 0x1000, 7);
#else
	return fv_read(bad, 1, 0, s, 0x1000, 7);
#endif
}
