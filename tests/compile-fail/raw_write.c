/* A raw Ethernet QP sends frames only: RDMA WRITE on a struct fv_raw must not compile.
 * expect-error: fv_write is not an operation of struct fv_raw
 */
#include <fastverbs/compat/post_send.h>

int f(struct fv_raw *bad, struct fv_rc *good, struct ibv_sge *s);
int f(struct fv_raw *bad, struct fv_rc *good, struct ibv_sge *s)
{
	(void)bad; (void)good; (void)s;
#ifdef FV_CONTROL
	return fv_write(good, 1, 0, s, 0x1000, 7);
#else
	return fv_write(bad, 1, 0, s, 0x1000, 7);
#endif
}
