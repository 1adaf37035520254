/* Memory windows are not for datagrams: a local invalidate on a UD handle must not compile.
 * expect-error: fv_local_inv is not an operation of struct fv_ud
 */
#include <fastverbs/compat/post_send.h>

int f(struct fv_ud *bad, struct fv_xrc *good);
int f(struct fv_ud *bad, struct fv_xrc *good)
{
	(void)bad; (void)good;
#ifdef FV_CONTROL
	return fv_local_inv(good, 1, 0, 0x1234);
#else
	return fv_local_inv(bad, 1, 0, 0x1234);
#endif
}
