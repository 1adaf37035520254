/* Memory windows are not for datagrams: a bind on a UD handle must not compile.
 * expect-error: fv_bind_mw is not an operation of struct fv_ud
 */
#include <fastverbs/compat/post_send.h>

int f(struct fv_ud *bad, struct fv_rc *good, struct ibv_mw *mw, struct ibv_mw_bind_info *b);
int f(struct fv_ud *bad, struct fv_rc *good, struct ibv_mw *mw, struct ibv_mw_bind_info *b)
{
	(void)bad; (void)good; (void)mw; (void)b;
#ifdef FV_CONTROL
	return fv_bind_mw(good, 1, 0, mw, 0x1234, b);
#else
	return fv_bind_mw(bad, 1, 0, mw, 0x1234, b);
#endif
}
