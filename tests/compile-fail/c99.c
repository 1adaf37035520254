/* A C compiler in C99 mode gets one error, saying that C11 is needed (the control: C11).
 * compile-std: c99
 * expect-error: fastverbs needs C11 or later
 * expect-errors: 1
 */
#include <fastverbs/fastverbs.h>

int f(void);
int f(void)
{
	return 0;
}
