// In C++ too: SEND with immediate on a raw Ethernet handle takes the overload that refuses it.
// expect-error: fv_send_imm is not an operation of struct fv_raw
#include <fastverbs/fastverbs.h>

int f(fv_raw *bad, fv_rc *good, ibv_sge *s)
{
	(void)bad; (void)good;
#ifdef FV_CONTROL
	return fv_send_imm(good, 1, 0, s, 42);
#else
	return fv_send_imm(bad, 1, 0, s, 42);
#endif
}
