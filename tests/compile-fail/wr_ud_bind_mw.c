/* fv_wr_*: binding a memory window on a UD handle must not compile.
 * expect-error: not compatible with any
 */
#include <fastverbs/compat/verbs.h>

void f(struct fv_ud *bad, struct fv_xrc *good, struct ibv_mw *mw, const struct ibv_mw_bind_info *bi);
void f(struct fv_ud *bad, struct fv_xrc *good, struct ibv_mw *mw, const struct ibv_mw_bind_info *bi)
{
	(void)bad; (void)good;
#ifdef FV_CONTROL
	fv_wr_bind_mw(good, mw, 7, bi);
#else
	fv_wr_bind_mw(bad, mw, 7, bi);
#endif
}
