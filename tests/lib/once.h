/*
 * One copy per test program of the compat entry points whose bodies are largest: each is
 * called through a file-local noinline wrapper, so the builder or CQE decoder is expanded
 * once in the program, not at every call site (those copies took most of make test's CPU).
 *
 * Include it after the fastverbs headers, only in tests whose subject is the bytes and
 * errnos these calls produce, not the code the compiler makes of one call site (the
 * typed builders, tests/codegen and the benchmarks keep that). The wrapped calls still run
 * fastverbs' own code, tuned as at -O2; only the arguments stop being compile-time constants.
 */
#ifndef TESTS_ONCE_H
#define TESTS_ONCE_H

#include <fastverbs/compat/verbs.h>

static FV__NOINLINE int once_post_send(struct fv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	return fv_post_send(qp, wr, bad);
}

static FV__NOINLINE int once_poll(struct fv_cq *cq, struct fv_wc *wc, int n)
{
	return fv_poll(cq, wc, n);
}

static FV__NOINLINE int once_poll_cq(struct fv_cq *cq, int n, struct ibv_wc *wc)
{
	return fv_poll_cq(cq, n, wc);
}

/* fv_wr_complete and the payload setters on a struct fv_qp: one arm per QP type each. */
#if FV__WR_BY_HANDLE	/* fv_wr_complete is told whether h is a typed handle */
static FV__NOINLINE int once_wr_complete_qp(struct fv_qp *qp, bool typed)
{
	return fv__wr_complete_qp(qp, typed);
}
#else
static FV__NOINLINE int once_wr_complete_qp(struct fv_qp *qp)
{
	return fv__wr_complete_qp(qp);
}
#endif

static FV__NOINLINE void once_qp_wr_set_sge(struct fv_qp *qp, uint32_t lkey, uint64_t addr, uint32_t length)
{
	fv__qp_wr_set_sge(qp, lkey, addr, length);
}

static FV__NOINLINE void once_qp_wr_set_sge_list(struct fv_qp *qp, size_t n, const struct ibv_sge *sgl)
{
	fv__qp_wr_set_sge_list(qp, n, sgl);
}

static FV__NOINLINE void once_qp_wr_set_inline_data(struct fv_qp *qp, void *addr, size_t length)
{
	fv__qp_wr_set_inline_data(qp, addr, length);
}

static FV__NOINLINE void once_qp_wr_set_inline_data_list(struct fv_qp *qp, size_t n, const struct ibv_data_buf *bufs)
{
	fv__qp_wr_set_inline_data_list(qp, n, bufs);
}

/* The public names (and the arms fv_wr_*'s _Generic picks) now name the wrappers. */
#define fv_post_send                   once_post_send
#define fv_poll                        once_poll
#define fv_poll_cq                     once_poll_cq
#define fv__wr_complete_qp             once_wr_complete_qp
#define fv__qp_wr_set_sge              once_qp_wr_set_sge
#define fv__qp_wr_set_sge_list         once_qp_wr_set_sge_list
#define fv__qp_wr_set_inline_data      once_qp_wr_set_inline_data
#define fv__qp_wr_set_inline_data_list once_qp_wr_set_inline_data_list

#endif /* TESTS_ONCE_H */
