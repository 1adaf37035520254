/* fv_wr_*: a DC destination on a UD handle must not compile.
 * expect-error: not compatible with any
 */
#include <fastverbs/compat/verbs.h>

void f(struct fv_ud *bad, struct fv_dci *good, struct fv_ah *ah);
void f(struct fv_ud *bad, struct fv_dci *good, struct fv_ah *ah)
{
	(void)bad; (void)good;
#ifdef FV_CONTROL
	fv_wr_set_dc_addr(good, ah, 1, 2);
#else
	fv_wr_set_dc_addr(bad, ah, 1, 2);
#endif
}
