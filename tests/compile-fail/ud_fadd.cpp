// An illegal (QP type, operation) pair in C++: fetch-and-add on a UD handle matches no
// overload, even with the UD destination arguments.
// expect-error: no matching function for call to
#include <fastverbs/fastverbs.h>

int f(fv_ud *bad, fv_rc *good, ibv_sge *s, fv_ah *ah)
{
	(void)bad; (void)good; (void)ah;
#ifdef FV_CONTROL
	return fv_fadd(good, 1, 0, s, 0x1000, 7, 1);
#else
	return fv_fadd(bad, 1, 0, s, 0x1000, 7, 1, ah, 5, 0x11);
#endif
}
