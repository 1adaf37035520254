// fv_wr_* in C++: a UD destination on an RC handle takes the overload that refuses it.
// expect-error: no matching function for call to
#include <fastverbs/compat/verbs.h>

void f(fv_rc *bad, fv_ud *good, fv_ah *ah);
void f(fv_rc *bad, fv_ud *good, fv_ah *ah)
{
	(void)bad; (void)good;
#ifdef FV_CONTROL
	fv_wr_set_ud_addr(good, ah, 1, 2);
#else
	fv_wr_set_ud_addr(bad, ah, 1, 2);
#endif
}
