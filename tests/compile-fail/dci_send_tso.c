/* TSO is raw Ethernet's: fv_send_tso on a DCI handle must not compile.
 * expect-error: fv_send_tso is not an operation of struct fv_dci
 */
#include <fastverbs/compat/post_send.h>

int f(struct fv_dci *bad, struct fv_raw *good, struct ibv_sge *s, const void *hdr);
int f(struct fv_dci *bad, struct fv_raw *good, struct ibv_sge *s, const void *hdr)
{
	(void)bad; (void)good; (void)s; (void)hdr;
#ifdef FV_CONTROL
	return fv_send_tso(good, 1, 0, hdr, 54, 1000, s);
#else
	return fv_send_tso(bad, 1, 0, hdr, 54, 1000, s);
#endif
}
