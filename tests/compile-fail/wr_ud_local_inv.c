/* fv_wr_*: LOCAL_INV on a UD handle must not compile.
 * expect-error: not compatible with any
 */
#include <fastverbs/compat/verbs.h>

void f(struct fv_ud *bad, struct fv_rc *good);
void f(struct fv_ud *bad, struct fv_rc *good)
{
	(void)bad; (void)good;
#ifdef FV_CONTROL
	fv_wr_local_inv(good, 7);
#else
	fv_wr_local_inv(bad, 7);
#endif
}
