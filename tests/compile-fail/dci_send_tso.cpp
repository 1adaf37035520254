// TSO in C++: fv_send_tso on a DCI handle takes the overload that refuses it.
// expect-error: fv_send_tso is not an operation of struct fv_dci
#include <fastverbs/fastverbs.h>

int f(fv_dci *bad, fv_raw *good, ibv_sge *s, const void *hdr);
int f(fv_dci *bad, fv_raw *good, ibv_sge *s, const void *hdr)
{
	(void)bad; (void)good;
#ifdef FV_CONTROL
	return fv_send_tso(good, 1, 0, hdr, 54, 1000, s);
#else
	return fv_send_tso(bad, 1, 0, hdr, 54, 1000, s);
#endif
}
