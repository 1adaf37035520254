// An illegal (QP type, operation) pair in C++: RDMA READ on a UC handle takes the overload that refuses it.
// expect-error: fv_read is not an operation of struct fv_uc
#include <fastverbs/fastverbs.h>

int f(fv_uc *bad, fv_xrc *good, ibv_sge *s)
{
	(void)bad; (void)good;
#ifdef FV_CONTROL
	return fv_read(good, 1, 0, s, 0x1000, 7, 0x55);
#else
	return fv_read(bad, 1, 0, s, 0x1000, 7);
#endif
}
