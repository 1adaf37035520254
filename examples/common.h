/* Verbs setup shared by the examples: open a device, create and connect QPs, timing, errors.
 * The steps themselves are setup.h; these wrappers give the examples their defaults and
 * exit with a message on failure. Slow path only; the data path is fastverbs. */
#ifndef EXAMPLES_COMMON_H
#define EXAMPLES_COMMON_H

#include <stdint.h>
#include <infiniband/verbs.h>
#include <fastverbs/fastverbs.h>

#include "setup.h"

#ifdef __cplusplus	/* common.c is C; the C++ example links it */
extern "C" {
#endif

struct ex_qp {
	struct ibv_qp *qp;
	struct ibv_cq *cq;		/* send and receive completions */
	struct ibv_mr *mr;
	uint8_t *buf;			/* EX_BUF_SIZE bytes, registered for local and remote access */
};

#define EX_BUF_SIZE 65536

/* Open the named device (or the first one), its port 1 and a PD; exits on failure. On
 * RoCE the GID row is EX_GID_INDEX from the environment, default 0. */
struct setup_dev *ex_open(const char *name);
void ex_close(struct setup_dev *d);
/* Exits with the message ex_open gives when the machine has no RDMA device. */
void ex_need_device(void);

/* A QP of the given type with its own CQ and buffer, moved to INIT (UD: up to RTS). */
void ex_qp_create(struct setup_dev *d, struct ex_qp *q, enum ibv_qp_type type, uint32_t depth);
void ex_qp_destroy(struct ex_qp *q);

/* Move RC QP q to RTR and RTS, connected to QP peer on the same port. */
void ex_rc_connect(struct setup_dev *d, struct ex_qp *q, struct ex_qp *peer);

/* An address handle for the local port (UD messages to a QP on the same port). */
struct ibv_ah *ex_ah_to_self(struct setup_dev *d);

#define EX_QKEY 0x11111111u

/* The next completion of cq, busy-polled with fv_poll_cq; exits unless it succeeded. */
struct ibv_wc ex_wait_one(struct fv_cq *cq);

/* The ping-pongs' completions on the typed path. A sender whose ring is full polls to free
 * space (ex_keep_one); a completion it meets is kept for the next ex_next_wc, which spins
 * on fv_poll otherwise and exits on a poll error or an error completion. */
struct ex_kept {
	int has;
	struct fv_wc wc;
};
void ex_keep_one(struct fv_cq *cq, struct ex_kept *k);
struct fv_wc ex_next_wc(struct fv_cq *cq, struct ex_kept *k);

/* Posts n zero-length receives on qp (each write with immediate consumes one), and rings. */
void ex_repost(struct fv_qp *qp, const struct ex_qp *q, unsigned n);

/* Sorts the n round trips (ns) in rtt and prints their distribution, one line. */
void ex_report_rtt(uint64_t *rtt, unsigned n);

uint64_t ex_now_ns(void);
/* What a timing line ends with: on the software device, a note that its times measure the
 * simulator, not a NIC; on hardware nothing. */
const char *ex_time_note(void);
__attribute__((noreturn)) void ex_die(const char *what, int err);
__attribute__((noreturn, format(printf, 1, 2))) void ex_fail(const char *fmt, ...);

#ifdef __cplusplus
}
#endif

#endif
