/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The spinlock under the compat calls' threading contract (sync.h) and the BlueFlame register
 * (sq.h): one 32-bit word, 0 free, 1 held. Taking it is one exchange; a waiter reads the word
 * until it looks free before it tries again (test-and-test-and-set), with a pause, and yields
 * the CPU now and then: a holder preempted on a machine with few CPUs gets it back.
 *
 * FV__TEST_YIELD() runs inside every critical section of the compat calls. It is empty; a test
 * defines it (before including fastverbs) to yield there, so that a race the lock prevents
 * happens every time on two CPUs when the lock is off.
 */
#ifndef FASTVERBS_LOCK_H
#define FASTVERBS_LOCK_H

#include "portable.h"
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

FV__EXTERN_C_BEGIN

#ifndef FV__TEST_YIELD
#define FV__TEST_YIELD() ((void)0)
#endif

/* Spin-wait hint: lets the other hyperthread run and saves power while the word is held. */
static inline void fv__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/*
 * Something that tells the calling thread from every other live thread: the thread pointer
 * where one instruction reads it, else pthread_self(). Never 0.
 */
static inline uintptr_t fv__self(void)
{
	uintptr_t t;

#if defined(__x86_64__) && defined(__linux__)
	__asm__("mov %%fs:0, %0" : "=r"(t));	/* the TCB's pointer to itself (x86-64 TLS ABI) */
#elif defined(__aarch64__) && defined(__linux__)
	__asm__("mrs %0, tpidr_el0" : "=r"(t));
#else
	t = (uintptr_t)pthread_self();
#endif
	return t;
}

/* Take the word if it is free: one exchange, a full barrier (the critical section starts after it). */
static inline bool fv__spin_try(uint32_t *l)
{
	return !__atomic_exchange_n(l, 1, __ATOMIC_SEQ_CST);
}

/* Wait for the word and take it: out of line, the uncontended path is fv__spin_try alone. */
static FV__COLD void fv__spin_wait(uint32_t *l)
{
	for (unsigned n = 1;; n++) {
		while (__atomic_load_n(l, __ATOMIC_RELAXED)) {
			fv__cpu_relax();
			if (!(++n & 255))
				sched_yield();
		}
		if (fv__spin_try(l))
			return;
	}
}

static inline void fv__spin_lock(uint32_t *l)
{
	if (__builtin_expect(!fv__spin_try(l), 0))
		fv__spin_wait(l);
}

/* Release: every store of the critical section is visible before the word reads 0. */
static inline void fv__spin_unlock(uint32_t *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/*
 * A 32-bit word another thread stores to, loaded with acquire semantics. On x86 an aligned
 * load is one, and inline asm reads the word without a C11 atomic: gcc 12 takes one for a
 * barrier to the code around it, and the producer's loop would then read again, every WR,
 * what it keeps in registers (docs/design.md §4.1). Volatile: read anew each time. Under
 * clang a volatile load instead (FV__LOAD_VOLATILE, tune.h): it takes a volatile asm for a
 * store to all memory.
 */
static inline uint32_t fv__load_acquire(const uint32_t *p)
{
#if FV__LOAD_VOLATILE && (defined(__x86_64__) || defined(__i386__))
	return *(const volatile uint32_t *)p;
#elif defined(__x86_64__) || defined(__i386__)
	uint32_t v;

	__asm__ __volatile__("movl %1, %0" : "=r"(v) : "m"(*p));
	return v;
#else
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

/*
 * Lock words taken and released without telling the compiler that other memory changes: a C11
 * atomic, or a call, would make each lock a compiler barrier, and a caller's loop around a
 * compat call or a doorbell would reload, every time, what it keeps in registers (even with
 * locking off: the barrier sits on a branch the compiler cannot rule out). Instead the asm
 * names rec, the object whose fields the critical section reads and writes: they stay inside
 * it. What they point to (rings, tables) is reached through fields read inside, and leaves it
 * through the doorbell's own barrier (sq.h). The locked instruction is a full barrier for the
 * CPU (x86). A waiter spins with pause and, every 256 spins, gives the CPU up (sched_yield as
 * a bare system call, which touches no memory of the program). Elsewhere: C11 atomics.
 *
 *   fv__rec_lock(w, rec)           32-bit word w: 0 free, 1 held
 *   fv__own_lock(w, me, rec, r)    64-bit word w: 0 free, else its holder; r = 1 when me holds
 *                                  it already (nothing taken), else 0 once taken
 *   fv__take_word(w, v, rec)       64-bit word w: v != 0 free, 0 held; v = the value taken
 *   fv__give_word(w, v, rec)       release it with the value v (not 0)
 */
#if defined(__x86_64__) && defined(__linux__)
#define FV__LOCK_WAIT(cmp)                                                                        \
	"movl $256, %k[n]\n"                                                                      \
	"2:\tpause\n\t"                                                                           \
	cmp "\n\t"                                                                                \
	"je 1b\n\t"                                                                               \
	"subl $1, %k[n]\n\t"                                                                      \
	"jnz 2b\n\t"                                                                              \
	"movl $24, %%eax\n\t"	/* __NR_sched_yield */                                            \
	"syscall\n\t"                                                                             \
	"jmp 1b\n"
#define fv__rec_lock(lw_, rec)                                                                     \
	do {                                                                                       \
		unsigned fv__n;                                                                    \
		__asm__ __volatile__("1:\tmovl $1, %%eax\n\t"                                      \
				     "xchgl %%eax, (%[w])\n\t"                                     \
				     "testl %%eax, %%eax\n\t"                                      \
				     "jz 3f\n\t"                                                   \
				     FV__LOCK_WAIT("cmpl $0, (%[w])")                              \
				     "3:"                                                          \
				     : [n] "=&r"(fv__n), "+m"(*(rec))                              \
				     : [w] "r"(lw_)                                                \
				     : "rax", "rcx", "r11", "cc");                                 \
	} while (0)
#define fv__rec_unlock(w, rec) __asm__ __volatile__("movl $0, (%1)" : "+m"(*(rec)) : "r"(w))
/* The same with the word as a memory operand: its address needs no register of its own (in
 * fv_post_recv's loop gcc kept one on the stack for it). */
#define fv__rec_unlock_at(w, rec) __asm__ __volatile__("movl $0, %0" : "=m"(*(w)), "+m"(*(rec)))
/*
 * A 64-bit word that holds a value (never 0) while free and 0 while held: taking it swaps 0 in
 * and yields the value, a waiter spins with pause; giving it back stores the next value. The
 * BlueFlame register's next half is so its own lock (sq.h): no lock word to load and clear.
 */
#define fv__take_word(w, v, rec)                                                                   \
	__asm__ __volatile__("1:\txorl %k0, %k0\n\t"                                              \
			     "xchgq %0, (%2)\n\t"                                                 \
			     "testq %0, %0\n\t"                                                   \
			     "jnz 3f\n"                                                            \
			     "2:\tpause\n\t"                                                      \
			     "cmpq $0, (%2)\n\t"                                                  \
			     "je 2b\n\t"                                                          \
			     "jmp 1b\n"                                                            \
			     "3:"                                                                 \
			     : "=&r"(v), "+m"(*(rec))                                             \
			     : "r"(w)                                                             \
			     : "cc")
#define fv__give_word(w, v, rec) __asm__ __volatile__("movq %2, (%1)" : "+m"(*(rec)) : "r"(w), "r"(v))
/*
 * The owner lock's loop (fv__own_lock, fv__own_take): cmpxchg 0 -> me; taken, to 3; held by me
 * already, to held; else wait for 0 and retry. rax: the word's value before. fv__own_lock puts
 * the held way first and the taken way last, so that taking the lock falls through to the end
 * with no jump (one instruction less a lock; the asm's size is what it was).
 */
#define FV__OWN_CAS(held)                                                                          \
	"1:\txorl %%eax, %%eax\n\t"                                                                \
	"lock cmpxchgq %[me], (%[w])\n\t"                                                          \
	"je 3f\n\t"                                                                                \
	"cmpq %[me], %%rax\n\t"                                                                    \
	"je " held "\n\t"                                                                          \
	FV__LOCK_WAIT("cmpq $0, (%[w])")
#define fv__own_lock(lw_, me_, rec, r_)                                                                \
	do {                                                                                       \
		unsigned fv__n;                                                                    \
		__asm__ __volatile__(FV__OWN_CAS("4f")                                             \
				     "4:\tmovl $1, %k[r]\n\t"                                     \
				     "jmp 5f\n"                                                    \
				     "3:\txorl %k[r], %k[r]\n"                                     \
				     "5:"                                                          \
				     : [r] "=&r"(r_), [n] "=&r"(fv__n), "+m"(*(rec))               \
				     : [w] "r"(lw_), [me] "r"(me_)                                \
				     : "rax", "rcx", "r11", "cc");                                 \
	} while (0)
/*
 * fv__own_lock with the result as the word's value before: 0 taken, me held already (rax, as
 * cmpxchg leaves it: no flag to set and merge).
 */
#define fv__own_take(lw_, me_, rec, v_)                                                            \
	do {                                                                                       \
		unsigned fv__n;                                                                    \
		__asm__ __volatile__(FV__OWN_CAS("3f")                                             \
				     "3:"                                                          \
				     : "=&a"(v_), [n] "=&r"(fv__n), "+m"(*(rec))                   \
				     : [w] "r"(lw_), [me] "r"(me_)                                \
				     : "rcx", "r11", "cc");                                        \
	} while (0)
#define fv__own_unlock(w, rec) __asm__ __volatile__("movq $0, (%1)" : "+m"(*(rec)) : "r"(w))
/* The same with the word as a memory operand (fv_post_send: no register held for its address). */
#define fv__own_unlock_at(w, rec) __asm__ __volatile__("movq $0, %0" : "=m"(*(w)), "+m"(*(rec)))
#else
#define fv__rec_lock(lw_, rec) fv__spin_lock(lw_)
#define fv__take_word(w, v, rec) ((v) = fv__take_word_c(w))
#define fv__give_word(w, v, rec) __atomic_store_n(w, v, __ATOMIC_RELEASE)
#define fv__rec_unlock(w, rec) fv__spin_unlock(w)
#define fv__rec_unlock_at(w, rec) fv__spin_unlock(w)
#define fv__own_lock(lw_, me_, rec, r_) ((r_) = fv__own_lock_c(lw_, me_))
#define fv__own_unlock(w, rec) __atomic_store_n(w, (uint64_t)0, __ATOMIC_RELEASE)
#define fv__own_unlock_at(w, rec) fv__own_unlock(w, rec)
#define fv__own_take(lw_, me_, rec, v_) ((v_) = fv__own_lock_c(lw_, me_) ? (me_) : 0)

static inline uintptr_t fv__take_word_c(uintptr_t *w)
{
	for (unsigned n = 1;; n++) {
		uintptr_t v = __atomic_exchange_n(w, 0, __ATOMIC_SEQ_CST);

		if (v)
			return v;
		while (!__atomic_load_n(w, __ATOMIC_RELAXED)) {
			fv__cpu_relax();
			if (!(++n & 255))
				sched_yield();
		}
	}
}

static inline int fv__own_lock_c(uint64_t *w, uint64_t me)
{
	for (unsigned n = 1;; n++) {
		uint64_t v = 0;

		if (__atomic_compare_exchange_n(w, &v, me, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return 0;
		if (v == me)
			return 1;
		fv__cpu_relax();
		if (!(n & 255))
			sched_yield();
	}
}
#endif

/*
 * Whether the compat calls lock by default, as libmlx5 decides at context creation: not when
 * the environment sets MLX5_SINGLE_THREADED to exactly "1".
 */
static inline bool fv__locking_default(void)
{
	const char *s = getenv("MLX5_SINGLE_THREADED");

	return !(s && !strcmp(s, "1"));
}

FV__EXTERN_C_END

#endif /* FASTVERBS_LOCK_H */
