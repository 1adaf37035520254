// An illegal (QP type, operation) pair in C++: fetch-and-add on a UD handle takes the
// overload that refuses it, even with the UD destination arguments.
// expect-error: fv_fadd is not an operation of struct fv_ud
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
