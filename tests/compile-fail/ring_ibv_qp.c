/* fv_ring takes a struct fv_qp * (the control) or a typed handle; a verbs QP is refused with a
 * message that names fv_ring.
 * expect-error: fv_ring takes a struct fv_qp \* or a typed handle
 */
#include <fastverbs/fastverbs.h>

void f(struct fv_qp *good, struct ibv_qp *bad);
void f(struct fv_qp *good, struct ibv_qp *bad)
{
	(void)good; (void)bad;
#ifdef FV_CONTROL
	fv_ring(good);
#else
	fv_ring(bad);
#endif
}
