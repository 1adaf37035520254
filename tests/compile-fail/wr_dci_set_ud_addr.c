/* fv_wr_*: a UD destination on a DCI handle must not compile.
 * expect-error: not compatible with any
 */
#include <fastverbs/compat/verbs.h>

void f(struct fv_dci *bad, struct fv_ud *good, struct fv_ah *ah);
void f(struct fv_dci *bad, struct fv_ud *good, struct fv_ah *ah)
{
	(void)bad; (void)good;
#ifdef FV_CONTROL
	fv_wr_set_ud_addr(good, ah, 1, 2);
#else
	fv_wr_set_ud_addr(bad, ah, 1, 2);
#endif
}
