/* fv_wr_*: an atomic on a UC handle must not compile.
 * expect-error: not compatible with any
 */
#include <fastverbs/compat/verbs.h>

void f(struct fv_uc *bad, struct fv_xrc *good);
void f(struct fv_uc *bad, struct fv_xrc *good)
{
	(void)bad; (void)good;
#ifdef FV_CONTROL
	fv_wr_atomic_fetch_add(good, 7, 0x1000, 1);
#else
	fv_wr_atomic_fetch_add(bad, 7, 0x1000, 1);
#endif
}
