// An illegal (QP type, operation) pair in C++: RDMA WRITE on a UD handle matches no overload.
// expect-error: no matching function for call to
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
