/* A DCI's destination comes last: fv_write on a DCI handle without the AH, DCT number and key
 * must not compile (the RC form of the call).
 * expect-error: too few arguments
 */
#include <fastverbs/fastverbs.h>

int f(struct fv_dci *d, struct ibv_sge *s, const struct fv_ah *ah);
int f(struct fv_dci *d, struct ibv_sge *s, const struct fv_ah *ah)
{
	(void)ah;
#ifdef FV_CONTROL
	return fv_write(d, 1, 0, s, 0x1000, 7, ah, 0x42, 0x1234);
#else
	return fv_write(d, 1, 0, s, 0x1000, 7);
#endif
}
