/* fv_wr_*: SEND with invalidate on a UD handle must not compile.
 * expect-error: not compatible with any
 */
#include <fastverbs/compat/verbs.h>

void f(struct fv_ud *bad, struct fv_uc *good);
void f(struct fv_ud *bad, struct fv_uc *good)
{
	(void)bad; (void)good;
#ifdef FV_CONTROL
	fv_wr_send_inv(good, 7);
#else
	fv_wr_send_inv(bad, 7);
#endif
}
