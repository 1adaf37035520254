// An illegal (QP type, operation) pair in C++: RDMA WRITE on a UD handle takes the overload that refuses it.
// expect-error: fv_write is not an operation of struct fv_ud
#include <fastverbs/fastverbs.h>

int f(fv_ud *bad, fv_rc *good, ibv_sge *s)
{
	(void)bad; (void)good;
#ifdef FV_CONTROL
	return fv_write(good, 1, 0, s, 0x1000, 7);
#else
	return fv_write(bad, 1, 0, s, 0x1000, 7);
#endif
}
