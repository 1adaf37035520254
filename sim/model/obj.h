/* The state a real HCA keeps per object: what the uverbs commands create and what the
 * engine reads and updates while it executes work requests. All of it is protected by
 * the one world lock (sim_lock). */
#ifndef FVSIM_OBJ_H
#define FVSIM_OBJ_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../common/config.h"
#include "../common/roce.h"
#include "../common/idmap.h"
#include "../common/list.h"

struct sim_port {
	uint16_t lid; /* 0 on Ethernet */
	uint8_t gid[16]; /* GID 0 */
	bool eth; /* Ethernet (RoCE): routed by GID, MAC and GID table below */
	uint8_t mac[6];
	struct sim_gid_entry gids[SIM_GID_TBL_LEN];
};

struct sim_dev {
	int index;
	char name[16];
	int nports;
	struct sim_port port[SIM_MAX_PORTS + 1]; /* 1-based like port_num */
	uint64_t node_guid;
	uint32_t next_pdn, next_cqn, next_qpn, next_srqn, next_xrcdn, next_mkey;
	struct sim_idmap qps, cqs, srqs, mrs, mws; /* by QPN, CQN, SRQN, mkey index */
	struct sim_list xrcds;
};

/* One opened /dev/infiniband/uverbsN file: a user context. (Its handle table is the
 * front's: front/handles.h.) */
#define SIM_UAR_VIEWS 3
/* Dynamically allocated UAR pages a context may hold (front/uar.c). */
#define SIM_UAR_DYN_MAX 256

struct sim_ctx {
	struct sim_list link;
	struct sim_dev *dev;
	int cmd_fd;
	bool live; /* GET_CONTEXT done */
	int async_rd, async_wr; /* async event pipe; the read end goes to the user */
	uint8_t cqe_version;
	struct sim_list channels;
	unsigned nqp_created; /* picks the next BlueFlame register */
	/* The device's views of UAR 0 as mapped regular, write-combining and non-cached
	 * (front/uar.c); libmlx5 uses one of them, and its + 0x20 is the CQ arm doorbell. */
	void *uar_view[SIM_UAR_VIEWS];
	/* Dynamic UAR indexes given out (front/uar.c), one bit each: mappable while set. */
	uint64_t uar_dyn[SIM_UAR_DYN_MAX / 64];
};

struct sim_channel {
	struct sim_list link;
	int rd, wr;
	bool async; /* a further async-event fd (ASYNC_EVENT_ALLOC), not a completion channel */
};

struct sim_pd {
	struct sim_ctx *ctx;
	uint32_t handle, pdn;
	int users;
};

struct sim_mr {
	struct sim_ctx *ctx;
	struct sim_pd *pd;
	uint32_t handle;
	uint32_t key; /* lkey == rkey, (mkey index << 8) | tag */
	uint64_t iova, len, host;
	uint32_t access; /* IBV_ACCESS_* */
};

/* A memory window: an mkey of its own that a UMR WQE binds to a range of an MR (the KLM
 * names the MR by key, so a window whose MR is deregistered stops translating). Type 1
 * windows are bound by any QP of the PD; type 2 windows are bound to one QP, which alone
 * may use them, and are invalidated by LOCAL_INV or SEND_WITH_INV. */
struct sim_mw {
	struct sim_ctx *ctx;
	struct sim_pd *pd;
	uint32_t handle;
	uint8_t type; /* IBV_MW_TYPE_1 or _2 */
	bool bound;
	uint32_t key; /* (mkey index << 8) | tag; a bind sets a new tag */
	uint32_t qpn; /* type 2: the QP it is bound to */
	uint32_t mr_key; /* the MR the window translates through */
	uint64_t start, len; /* window addresses (0-based windows start at 0) */
	uint64_t mr_addr; /* MR address that window address start maps to */
	uint32_t access; /* IBV_ACCESS_* granted to remote peers */
};

struct sim_ah {
	struct sim_ctx *ctx;
	struct sim_pd *pd;
	uint32_t handle;
};

struct sim_xrcd {
	struct sim_list link; /* dev->xrcds */
	struct sim_dev *dev;
	uint32_t xrcdn;
	int opens; /* handles in any context */
	int users; /* SRQs and QPs */
	bool has_inode;
	dev_t st_dev;
	ino_t st_ino;
};

struct sim_cq {
	struct sim_list link; /* world.cqs */
	struct sim_ctx *ctx;
	uint32_t handle, cqn;
	uint64_t user_handle;
	uint8_t *buf;
	volatile uint32_t *dbrec; /* [0] consumer index, [1] arm word */
	uint32_t cqe_cnt, log_cnt, cqe_size;
	uint32_t pi; /* CQEs written */
	struct sim_channel *chan;
	struct sim_channel *event_chan; /* async events; NULL: the context's first async fd */
	uint32_t comp_events, async_events; /* read by the user so far */
	int users;
	/* Completion events: armed by a new arm word; fired once per arm. */
	uint32_t arm_seen; /* last arm word acted on */
	bool armed, arm_solicited;
	uint32_t arm_ci;
	uint64_t uar_seen; /* last value seen in the context's CQ arm register */
	bool reg_owed; /* an arm taken from the record whose register write is still to come */
	/* A completion found it full: the CQ is in error (IBV_EVENT_CQ_ERR was raised) and
	 * takes no more CQEs, as an HCA's CQ after an overrun. */
	bool overrun;
	/* Created with IGNORE_OVERRUN: never full, never in error; a new CQE overwrites the
	 * oldest unpolled one, as the HCA does with overrun checking off. */
	bool ignore_overrun;
};

struct sim_srq {
	struct sim_ctx *ctx;
	uint32_t handle, srqn;
	uint64_t user_handle;
	bool xrc;
	struct sim_pd *pd;
	struct sim_cq *cq; /* XRC SRQs complete on their own CQ */
	struct sim_xrcd *xrcd;
	uint8_t *buf;
	volatile uint32_t *dbrec;
	uint32_t wqe_cnt, wqe_shift, max_gs;
	uint32_t max_wr, limit;
	uint32_t head; /* next WQE index the device takes */
	uint16_t consumed; /* WQEs taken so far (compared with the 16-bit doorbell counter) */
	uint32_t uidx;
	int users;
	uint32_t events_reported;
	struct sim_channel *event_chan; /* async events; NULL: the context's first async fd */
};

struct sim_path {
	uint16_t dlid;
	uint8_t sl, src_path_bits, static_rate, port;
	bool grh;
	uint8_t dgid[16];
	uint32_t flow_label;
	uint8_t sgid_index, hop_limit, tclass;
};

struct sim_wqe;

/* Dynamically Connected QPs, both of type IBV_QPT_DRIVER: a DCI is a requester that names
 * its destination DCT per WQE; a DCT is a responder without queues of its own. */
enum { SIM_DC_NONE, SIM_DC_DCI, SIM_DC_DCT };

struct sim_qp {
	struct sim_list link; /* world.qps */
	struct sim_ctx *ctx;
	uint32_t handle, qpn;
	uint64_t user_handle;
	uint8_t type; /* IBV_QPT_* */
	uint8_t dc; /* SIM_DC_*: which DC role an IBV_QPT_DRIVER QP has */
	uint8_t state; /* IBV_QPS_* */
	uint64_t dc_key; /* DCT: the access key a DCI's address vector must carry */
	struct sim_pd *pd;
	struct sim_cq *scq, *rcq;
	struct sim_srq *srq;
	struct sim_xrcd *xrcd;
	struct sim_channel *event_chan; /* async events; NULL: the context's first async fd */
	uint32_t uidx;
	bool sq_sig_all, rq_sig;
	uint8_t *sq_buf, *rq_buf;
	uint32_t sq_cnt; /* WQEBBs */
	uint32_t rq_cnt, rq_shift;
	volatile uint32_t *dbrec; /* [0] RQ counter, [1] SQ WQEBB counter */
	uint32_t sq_ci; /* WQEBBs consumed */
	uint32_t rq_ci; /* RQ WQEs consumed */
	struct {
		uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge, max_inline;
	} cap;
	/* Attributes set by MODIFY_QP. */
	uint8_t port;
	uint16_t pkey_index, alt_pkey_index;
	uint32_t qkey, access, dest_qpn, rq_psn, sq_psn;
	uint8_t path_mtu, timeout, retry_cnt, rnr_retry, min_rnr_timer;
	uint8_t max_rd_atomic, max_dest_rd_atomic, path_mig_state, en_sqd_async;
	uint8_t alt_port, alt_timeout;
	struct sim_path path, alt_path;
	/* Retry state of the SQ head WQE while the responder says RNR or cannot be reached. */
	bool retrying;
	uint8_t retries_left;
	uint64_t retry_at_ns;
	uint32_t events_reported;
	/* Head WQE in flight to another process (fabric): its mailbox ticket (-1: none), the
	 * owner's pid, and a copy of the decoded WQE, whose inline bytes the responder reads. */
	int fab_ticket;
	pid_t fab_peer;
	int fab_reg; /* its fabric registry entry, -1: none (fabric/mrtab.h) */
	uint8_t fab_synd; /* nonzero: the message was withdrawn; the WQE fails with this */
	uint64_t fab_posted_ns;
	struct sim_wqe *inflight;
	struct sim_list flows; /* RAW_PACKET: steering rules (struct sim_flow) */
};

/* One match of a steering rule: the kernel's filter struct for its type (ETH: dst MAC,
 * src MAC, EtherType, VLAN; IPv4: src, dst, proto, TOS, TTL, flags; IPv6: src, dst, flow
 * label, next header, traffic class, hop limit; TCP/UDP: dst port, src port), value
 * already masked, network byte order as on the wire. */
#define SIM_FLOW_FILTER_MAX 40
struct sim_flow_spec {
	uint16_t type; /* SIM_FLOW_SPEC_* (the uverbs IB_FLOW_SPEC_* values) */
	uint16_t size; /* filter bytes compared */
	uint8_t val[SIM_FLOW_FILTER_MAX], mask[SIM_FLOW_FILTER_MAX];
};

enum {
	SIM_FLOW_SPEC_ETH = 0x20,
	SIM_FLOW_SPEC_IPV4 = 0x30,
	SIM_FLOW_SPEC_IPV6 = 0x31,
	SIM_FLOW_SPEC_TCP = 0x40,
	SIM_FLOW_SPEC_UDP = 0x41,
};

#define SIM_FLOW_MAX_SPECS 8

/* A steering rule (ibv_create_flow) sending matching frames to a RAW_PACKET QP. */
struct sim_flow {
	struct sim_list link; /* qp->flows */
	struct sim_qp *qp;
	uint32_t handle;
	uint8_t type; /* IBV_FLOW_ATTR_*: NORMAL, ALL_DEFAULT, MC_DEFAULT, SNIFFER */
	uint8_t port;
	uint16_t priority;
	int nspecs;
	struct sim_flow_spec spec[SIM_FLOW_MAX_SPECS];
};

/* Decoded MODIFY_QP request (IBV_QP_* mask bits, IBV_QPS_* states). */
struct sim_qp_attr {
	uint32_t mask;
	uint8_t state, cur_state, path_mtu, path_mig_state, en_sqd_async;
	uint8_t max_rd_atomic, max_dest_rd_atomic, min_rnr_timer, port, timeout;
	uint8_t retry_cnt, rnr_retry, alt_port, alt_timeout;
	uint32_t qkey, rq_psn, sq_psn, dest_qpn, access;
	uint16_t pkey_index, alt_pkey_index;
	struct sim_path path, alt_path;
};

#endif
