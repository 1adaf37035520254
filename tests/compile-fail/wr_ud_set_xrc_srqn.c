/* fv_wr_*: an XRC SRQ number on a UD handle must not compile.
 * expect-error: not compatible with any
 */
#include <fastverbs/compat/verbs.h>

void f(struct fv_ud *bad, struct fv_xrc *good);
void f(struct fv_ud *bad, struct fv_xrc *good)
{
	(void)bad; (void)good;
#ifdef FV_CONTROL
	fv_wr_set_xrc_srqn(good, 3);
#else
	fv_wr_set_xrc_srqn(bad, 3);
#endif
}
