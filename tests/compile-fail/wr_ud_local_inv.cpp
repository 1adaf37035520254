// fv_wr_* in C++: LOCAL_INV on a UD handle takes the overload that refuses it.
// expect-error: no matching function for call to
#include <fastverbs/compat/verbs.h>

void f(fv_ud *bad, fv_uc *good);
void f(fv_ud *bad, fv_uc *good)
{
	(void)bad; (void)good;
#ifdef FV_CONTROL
	fv_wr_local_inv(good, 7);
#else
	fv_wr_local_inv(bad, 7);
#endif
}
