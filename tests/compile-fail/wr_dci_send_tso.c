/* fv_wr_*: TSO on a DCI handle must not compile.
 * expect-error: not compatible with any
 */
#include <fastverbs/compat/verbs.h>

void f(struct fv_dci *bad, struct fv_raw *good, void *hdr);
void f(struct fv_dci *bad, struct fv_raw *good, void *hdr)
{
	(void)bad; (void)good;
#ifdef FV_CONTROL
	fv_wr_send_tso(good, hdr, 54, 1000);
#else
	fv_wr_send_tso(bad, hdr, 54, 1000);
#endif
}
