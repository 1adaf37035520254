/* Helpers for the libc entry points the preload library replaces (shim.c, node.c). */
#ifndef FVSIM_INTERPOSE_H
#define FVSIM_INTERPOSE_H

#include <dlfcn.h>

#define EXPORT __attribute__((visibility("default")))

/* The next definition of a libc function, looked up once. */
#define REAL(ret, name, ...)                                                           \
	static ret (*real_##name)(__VA_ARGS__);                                        \
	if (!__atomic_load_n(&real_##name, __ATOMIC_ACQUIRE))                          \
		__atomic_store_n(&real_##name, (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, #name), \
				 __ATOMIC_RELEASE)

#endif
