// fv_wr_* in C++: RDMA READ on a UC handle takes the overload that refuses it.
// expect-error: no matching function for call to
#include <fastverbs/compat/verbs.h>

void f(fv_uc *bad, fv_rc *good);
void f(fv_uc *bad, fv_rc *good)
{
	(void)bad; (void)good;
#ifdef FV_CONTROL
	fv_wr_rdma_read(good, 7, 0x1000);
#else
	fv_wr_rdma_read(bad, 7, 0x1000);
#endif
}
