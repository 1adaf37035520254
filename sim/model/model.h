/* Operations on model objects, called by the command front end with the world locked.
 * Each returns 0 or a positive errno, the value the uverbs write() reports. The objects'
 * uverbs handles are the front's (front/handles.h): it fills their handle fields. */
#ifndef FVSIM_MODEL_H
#define FVSIM_MODEL_H

#include "obj.h"

int sim_pd_alloc(struct sim_ctx *ctx, struct sim_pd **out);
int sim_pd_free(struct sim_pd *pd);

/* A new memory key, (mkey index << 8) | tag; MRs and windows share the index space. */
uint32_t sim_mkey_new(struct sim_dev *dev);
int sim_mr_reg(struct sim_ctx *ctx, struct sim_pd *pd, uint64_t start, uint64_t len,
	       uint64_t iova, uint32_t access, struct sim_mr **out);
/* REREG_MR: flags, a valid non-empty set of SIM_REREG_* (the kernel's IB_MR_REREG_*),
 * say which of the range, the PD and the access change; the key stays. Nothing changes
 * unless all checks pass. */
enum { SIM_REREG_TRANS = 1, SIM_REREG_PD = 2, SIM_REREG_ACCESS = 4 };
int sim_mr_rereg(struct sim_mr *mr, uint32_t flags, struct sim_pd *pd, uint64_t start,
		 uint64_t len, uint64_t iova, uint32_t access);
int sim_mr_dereg(struct sim_mr *mr);
struct sim_mr *sim_mr_find(struct sim_dev *dev, uint32_t key);

/* Memory windows (model/mw.c). A window is created unbound; deallocating or deregistering
 * its MR while it is bound is allowed, as in the kernel: access through it then fails. */
int sim_mw_alloc(struct sim_ctx *ctx, struct sim_pd *pd, uint32_t type, struct sim_mw **out);
int sim_mw_dealloc(struct sim_mw *mw);
struct sim_mw *sim_mw_find(struct sim_dev *dev, uint32_t key); /* full key must match */

int sim_ah_create(struct sim_ctx *ctx, struct sim_pd *pd, struct sim_ah **out);
int sim_ah_destroy(struct sim_ah *ah);

/* Each open counts once; each close undoes one open. */
int sim_xrcd_open(struct sim_ctx *ctx, int fd, int oflags, struct sim_xrcd **out);
/* force: close even if this is the last open and QPs or SRQs still use the XRCD. */
int sim_xrcd_close(struct sim_xrcd *x, bool force);
void sim_xrcd_put(struct sim_xrcd *x); /* a QP or SRQ stops using it */

struct sim_cq_init {
	uint64_t user_handle, buf, dbrec;
	uint32_t cqe; /* entries requested minus one, as libmlx5 passes it */
	uint32_t cqe_size;
	int comp_channel; /* fd or -1 */
	uint8_t comp_en; /* CQE compression requested: not modelled */
	bool ignore_overrun; /* IB_UVERBS_CQ_FLAGS_IGNORE_OVERRUN */
};
int sim_cq_create(struct sim_ctx *ctx, const struct sim_cq_init *in, struct sim_cq **out);
int sim_cq_destroy(struct sim_cq *cq);

struct sim_srq_init {
	uint64_t user_handle, buf, dbrec;
	bool xrc;
	struct sim_pd *pd;
	struct sim_cq *cq;
	struct sim_xrcd *xrcd;
	uint32_t max_wr, max_sge, limit, uidx;
};
int sim_srq_create(struct sim_ctx *ctx, const struct sim_srq_init *in, struct sim_srq **out);
int sim_srq_modify(struct sim_srq *srq, uint32_t mask, uint32_t max_wr, uint32_t limit);
int sim_srq_destroy(struct sim_srq *srq);

struct sim_qp_init {
	uint64_t user_handle, buf, dbrec;
	uint64_t sq_buf; /* RAW_PACKET: the SQ has a buffer of its own */
	uint8_t type;
	bool sq_sig_all;
	struct sim_pd *pd;
	struct sim_cq *scq, *rcq;
	struct sim_srq *srq;
	struct sim_xrcd *xrcd;
	uint32_t sq_wqe_cnt, rq_wqe_cnt, rq_wqe_shift, flags, uidx;
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge, max_inline;
	uint64_t dc_key; /* DCT: access key (the driver request's union with sq_buf) */
	/* Bytes of the copy of a WQE in flight to another process (the engine's struct sim_wqe),
	 * made with the QP: 0 for none (no fabric). */
	size_t inflight_size;
};
int sim_qp_create(struct sim_ctx *ctx, const struct sim_qp_init *in, struct sim_qp **out);
/* A QP whose head WQE is in flight to another process (fab_ticket >= 0) must have that
 * message cancelled (engine/remote.h) before it is destroyed and once it is moved to
 * RESET or ERR: the model does not reach the transport. */
int sim_qp_modify(struct sim_qp *qp, const struct sim_qp_attr *attr);
int sim_qp_destroy(struct sim_qp *qp);
/* The QP's state, access flags or PD changed: tell the fabric (after every change of
 * qp->state outside sim_qp_modify too). */
void sim_qp_publish(const struct sim_qp *qp);

/* DC (dc.c). The mlx5 vendor flags and core create flags of a CREATE_QP of type
 * IBV_QPT_DRIVER: 0 or the errno the kernel gives (EOPNOTSUPP with DC off). */
int sim_dc_create_flags(uint32_t vendor, uint32_t core);
/* The DC role the vendor flags name (after sim_dc_create_flags accepted them). */
uint8_t sim_dc_role(uint32_t vendor);
/* The attributes a DCI or DCT may change in this transition: 0 or EINVAL. */
int sim_dc_modify_mask(const struct sim_qp *qp, uint8_t next, uint32_t mask);
/* QUERY_QP on a DCT: only in RTR, only these attributes. */
int sim_dct_query_mask(const struct sim_qp *qp, uint32_t mask);
/* A DCT entering RTR gets its number from the QPN space (qp.c). */
int sim_dct_number(struct sim_qp *qp);

/* Steering rules (flow.c). flow is the caller's filled template (qp, type, port,
 * priority, specs); the model copies it. A QP with rules cannot be destroyed (EBUSY). */
int sim_flow_create(const struct sim_flow *flow, struct sim_flow **out);
int sim_flow_destroy(struct sim_flow *flow);
/* The RAW_PACKET QPs a frame on the Ethernet wire reaches, at most max of them, each
 * once: those whose best-priority NORMAL rules match; if none, for a multicast frame the
 * MC_DEFAULT (all-multicast) rules' QPs, then the ALL_DEFAULT (promiscuous) ones; SNIFFER
 * rules always. Only QPs able to receive (RTR or later) count. */
int sim_flow_steer(const uint8_t *frame, uint32_t len, struct sim_qp **out, int max);

/* A context: ctx zeroed by the caller, who frees it after sim_ctx_fini and releases all
 * of its objects before. */
void sim_ctx_init(struct sim_ctx *ctx, struct sim_dev *dev, int cmd_fd);
void sim_ctx_fini(struct sim_ctx *ctx);

/* Async event to the context's async fd (struct ib_uverbs_async_event_desc); false if it
 * could not be delivered. Callers count delivered events per object: destroying the object
 * reports that count and libibverbs waits until the user acked as many. */
bool sim_async_event(struct sim_ctx *ctx, struct sim_channel *chan, uint64_t element,
		     uint32_t type);
/* The user closed async-event fd rd of ctx: its events are dropped from now on (a write
 * to a pipe nobody reads would raise SIGPIPE). */
void sim_async_fd_closed(struct sim_ctx *ctx, int rd);

#endif
