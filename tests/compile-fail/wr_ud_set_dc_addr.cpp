// fv_wr_* in C++: a DC destination on a UD handle has no overload.
// expect-error: no matching function for call to
#include <fastverbs/compat/verbs.h>

void f(fv_ud *bad, fv_dci *good, ibv_ah *ah);
void f(fv_ud *bad, fv_dci *good, ibv_ah *ah)
{
	(void)bad; (void)good;
#ifdef FV_CONTROL
	fv_wr_set_dc_addr_stream(good, ah, 1, 2, 3);
#else
	fv_wr_set_dc_addr_stream(bad, ah, 1, 2, 3);
#endif
}
