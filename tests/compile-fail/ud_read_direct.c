/* No RDMA READ builder exists for UD at all: calling one by name must not compile.
 * expect-error: implicit declaration|undeclared|implicit-function-declaration
 */
#include <fastverbs/compat/post_send.h>

int f(struct fv_ud *ud, struct fv_rc *rc, struct ibv_sge *s);
int f(struct fv_ud *ud, struct fv_rc *rc, struct ibv_sge *s)
{
	(void)ud; (void)rc;
#ifdef FV_CONTROL
	return fv_rc_read(rc, 1, 0, s, 0x1000, 7);
#else
	return fv_ud_read(ud, 1, 0, s, 0x1000, 7);
#endif
}
