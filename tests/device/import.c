/* Sharing a context between two ibv_contexts (ibv_import_device on a dup()'d command fd,
 * ibv_import_pd, ibv_import_mr): the imported objects are the same device objects, the
 * imported context creates CQs and QPs through the ioctl methods with its own UARs and
 * async fd, data moves through the imported PD and MR; and the ioctl methods behind it
 * refuse bad input with the kernel's errnos. */
/* An ioctl call is the header (whose last member is a flexible attrs[]) and its attributes;
 * the tests model that as one struct, a GNU layout clang names. */
#ifdef __clang__
#pragma clang diagnostic ignored "-Wgnu-variable-sized-type-not-at-end"
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/mlx5-abi.h>
#include <rdma/mlx5_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl.h>

#include "fuzz-rng.h"
#include "sim-util.h"

#define BUF 65536

static struct simt_dev d; /* the original context */
static struct simt_dev in; /* the imported one: context and PD imported */
static struct ibv_mr *mr, *imr;
static uint8_t *buf;

static void setup(void)
{
	int fd;

	simt_open(&d, 0);
	buf = simt_mem(&d, BUF, SIMT_ACCESS_ALL, &mr);
	fd = dup(d.ctx->cmd_fd);
	cr_assert(fd >= 0);
	in.ctx = ibv_import_device(fd);
	cr_assert(in.ctx, "ibv_import_device: %s", strerror(errno));
	in.pd = ibv_import_pd(in.ctx, d.pd->handle);
	cr_assert(in.pd, "ibv_import_pd: %s", strerror(errno));
	in.lid = d.lid;
	imr = ibv_import_mr(in.pd, mr->handle);
	cr_assert(imr, "ibv_import_mr: %s", strerror(errno));
}

static void teardown(void)
{
	ibv_unimport_mr(imr);
	ibv_unimport_pd(in.pd);
	cr_expect_eq(ibv_close_device(in.ctx), 0);
	cr_expect_eq(ibv_dereg_mr(mr), 0);
	simt_close(&d);
	free(buf);
}

TestSuite(sim_import, .init = setup, .fini = teardown, .timeout = 60);

Test(sim_import, imported_objects_are_the_originals)
{
	cr_expect_neq(in.ctx, d.ctx);
	cr_expect_neq(in.ctx->cmd_fd, d.ctx->cmd_fd);
	cr_expect_neq(in.ctx->async_fd, d.ctx->async_fd, "ASYNC_EVENT_ALLOC gave a fd of its own");
	cr_expect_eq(in.ctx->num_comp_vectors, d.ctx->num_comp_vectors);
	cr_expect_eq(in.pd->handle, d.pd->handle);
	cr_expect_eq(imr->handle, mr->handle);
	cr_expect_eq(imr->lkey, mr->lkey);
	cr_expect_eq(imr->rkey, mr->rkey);
	cr_expect_eq(imr->length, (size_t)BUF);
	cr_expect_null(imr->addr, "the address is the importer's to supply");
	cr_expect_eq(imr->pd, in.pd);
}

/* An RC QP of the imported context on icq (*iqp) connected to one of the original on cq
 * (*qp). */
static void import_pair(struct ibv_cq *icq, struct ibv_cq *cq, struct ibv_qp **iqp, struct ibv_qp **qp)
{
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .scq = icq };

	*iqp = simt_qp(&in, &cfg);
	cfg.scq = cq;
	*qp = simt_qp(&d, &cfg);
	simt_connect(*iqp, d.lid, (*qp)->qp_num, SIMT_ACCESS_ALL, 7, 7);
	simt_connect(*qp, d.lid, (*iqp)->qp_num, SIMT_ACCESS_ALL, 7, 7);
}

/* A QP of the imported context, on the imported PD, writes from memory named by the
 * imported MR into the original context's QP and takes its SEND; completions arrive on a
 * CQ of the imported context, through its completion channel. */
static void data_through_imported_objects(void)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(in.ctx);
	struct ibv_cq *icq, *cq = simt_cq(&d, 16), *ev_cq;
	struct ibv_qp *iqp, *qp;
	struct mlx5dv_qp dv;
	struct mlx5dv_obj o;
	struct ibv_wc wc;
	void *ev_ctx;

	cr_assert(ch, "ibv_create_comp_channel: %s", strerror(errno));
	icq = ibv_create_cq(in.ctx, 16, NULL, ch, 0);
	cr_assert(icq, "ibv_create_cq on the imported context: %s", strerror(errno));
	import_pair(icq, cq, &iqp, &qp);
	/* Its doorbells go to a UAR page of its own (UAR_OBJ_ALLOC), with BlueFlame. */
	memset(&o, 0, sizeof(o));
	o.qp.in = iqp;
	o.qp.out = &dv;
	cr_assert_eq(mlx5dv_init_obj(&o, MLX5DV_OBJ_QP), 0);
	cr_expect_eq(dv.bf.size, 256u);

	for (int i = 0; i < 1000; i++)
		buf[i] = (uint8_t)(i * 3 + 1);
	simt_post_send(iqp, 1, IBV_WR_RDMA_WRITE, buf, 1000, imr->lkey,
		       (uintptr_t)buf + 4096, mr->rkey, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(icq, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS, "%s", ibv_wc_status_str(wc.status));
	cr_expect_eq(wc.wr_id, 1);
	cr_expect_eq(memcmp(buf + 4096, buf, 1000), 0);

	cr_assert_eq(ibv_req_notify_cq(icq, 0), 0);
	simt_post_recv(iqp, 2, buf + 8192, 4096, imr->lkey);
	simt_post_send(qp, 3, IBV_WR_SEND, buf, 300, mr->lkey, 0, 0, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(cq, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_assert_eq(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	cr_expect_eq(ev_cq, icq);
	ibv_ack_cq_events(icq, 1);
	cr_assert_eq(simt_poll(icq, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_SUCCESS);
	cr_expect_eq(wc.wr_id, 2);
	cr_expect_eq(wc.byte_len, 300u);
	cr_expect_eq(memcmp(buf + 8192, buf, 300), 0);

	cr_expect_eq(ibv_destroy_qp(iqp), 0);
	cr_expect_eq(ibv_destroy_qp(qp), 0);
	cr_expect_eq(ibv_destroy_cq(icq), 0);
	cr_expect_eq(ibv_destroy_cq(cq), 0);
	cr_expect_eq(ibv_destroy_comp_channel(ch), 0);
}

Test(sim_import, data_through_imported_objects)
{
	data_through_imported_objects();
}

/* FVSIM_MODE=poll: no device thread; the imported context's polls run the device too. */
static void setup_poll(void)
{
	setenv("FVSIM_MODE", "poll", 1);
	setup();
}

TestSuite(sim_import_poll, .init = setup_poll, .fini = teardown, .timeout = 60);

Test(sim_import_poll, data_driven_by_the_importers_polls)
{
	data_through_imported_objects();
}

static bool readable(int fd)
{
	struct pollfd p = { fd, POLLIN, 0 };

	return poll(&p, 1, 0) == 1;
}

/* The events of a QP go to the async fd of the context that created it. */
Test(sim_import, events_to_the_creators_async_fd)
{
	struct ibv_cq *icq = ibv_create_cq(in.ctx, 16, NULL, NULL, 0), *cq = simt_cq(&d, 16);
	struct ibv_async_event ev;
	struct ibv_qp *iqp, *qp;
	struct ibv_wc wc;

	cr_assert(icq);
	import_pair(icq, cq, &iqp, &qp);
	/* A write with a bad rkey: the imported context's QP, the responder, goes to error. */
	simt_post_send(qp, 1, IBV_WR_RDMA_WRITE, buf, 64, mr->lkey, (uintptr_t)buf + 4096,
		       mr->rkey ^ 0x100, IBV_SEND_SIGNALED);
	cr_assert_eq(simt_poll(cq, &wc, 1), 1);
	cr_expect_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "%s", ibv_wc_status_str(wc.status));
	cr_assert_eq(ibv_get_async_event(in.ctx, &ev), 0);
	cr_expect_eq(ev.event_type, IBV_EVENT_QP_ACCESS_ERR);
	cr_expect_eq(ev.element.qp, iqp);
	ibv_ack_async_event(&ev);
	cr_expect_not(readable(d.ctx->async_fd), "nothing for the original context");

	cr_expect_eq(ibv_destroy_qp(iqp), 0);
	cr_expect_eq(ibv_destroy_qp(qp), 0);
	cr_expect_eq(ibv_destroy_cq(icq), 0);
	cr_expect_eq(ibv_destroy_cq(cq), 0);
}

Test(sim_import, bad_handles)
{
	struct ibv_qp *qp;
	struct ibv_cq *cq = simt_cq(&d, 4);
	struct setup_qp_cfg cfg = { .type = IBV_QPT_RC, .scq = cq };

	errno = 0;
	cr_expect_null(ibv_import_pd(in.ctx, 4000));
	cr_expect_eq(errno, ENOENT, "no such handle: %s", strerror(errno));
	errno = 0;
	cr_expect_null(ibv_import_pd(in.ctx, mr->handle));
	cr_expect_eq(errno, EINVAL, "a handle of another type: %s", strerror(errno));
	errno = 0;
	cr_expect_null(ibv_import_mr(in.pd, 4000));
	cr_expect_eq(errno, ENOENT, "%s", strerror(errno));
	errno = 0;
	cr_expect_null(ibv_import_mr(in.pd, cq->handle));
	cr_expect_eq(errno, EINVAL, "%s", strerror(errno));
	/* An MR deregistered through either context is gone for both. */
	{
		struct ibv_mr *m2 = simt_mr(&d, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
		uint32_t h = m2->handle;
		struct ibv_mr *im2 = ibv_import_mr(in.pd, h);

		cr_assert(im2);
		cr_expect_eq(ibv_dereg_mr(im2), 0, "deregistering the imported MR deregisters it");
		errno = 0;
		cr_expect_null(ibv_import_mr(in.pd, h));
		cr_expect_eq(errno, ENOENT);
		free(m2); /* its registration is gone: only libibverbs' memory is left */
	}
	/* A command fd whose context was never created: QUERY_CONTEXT finds no ucontext. */
	{
		int raw = open("/dev/infiniband/uverbs0", O_RDWR | O_CLOEXEC);

		cr_assert(raw >= 0);
		errno = 0;
		cr_expect_null(ibv_import_device(raw));
		cr_expect_eq(errno, EINVAL, "%s", strerror(errno));
		close(raw);
	}
	/* Not a command fd: libibverbs refuses before asking the device. */
	errno = 0;
	cr_expect_null(ibv_import_device(STDIN_FILENO));
	cr_expect(errno == EINVAL || errno == ENODEV, "%s", strerror(errno));
	qp = simt_qp(&d, &cfg);
	cr_expect_eq(ibv_destroy_qp(qp), 0);
	cr_expect_eq(ibv_destroy_cq(cq), 0);
}

/* The attribute checks of the ioctl framework, on QUERY_MR. */
struct query_mr {
	struct ib_uverbs_ioctl_hdr hdr;
	struct ib_uverbs_attr attr[6];
};

static uint32_t lkey, rkey;
static uint64_t length, iova;

static void query_mr_init(struct query_mr *q, uint32_t handle)
{
	memset(q, 0, sizeof(*q));
	q->hdr.length = sizeof(q->hdr) + 5 * sizeof(q->attr[0]);
	q->hdr.object_id = UVERBS_OBJECT_MR;
	q->hdr.method_id = UVERBS_METHOD_QUERY_MR;
	q->hdr.num_attrs = 5;
	q->hdr.driver_id = RDMA_DRIVER_MLX5;
	q->attr[0] = (struct ib_uverbs_attr){ .attr_id = UVERBS_ATTR_QUERY_MR_HANDLE,
					     .flags = UVERBS_ATTR_F_MANDATORY, .data = handle };
	q->attr[1] = (struct ib_uverbs_attr){ .attr_id = UVERBS_ATTR_QUERY_MR_RESP_LKEY, .len = 4,
					     .flags = UVERBS_ATTR_F_MANDATORY,
					     .data = (uintptr_t)&lkey };
	q->attr[2] = (struct ib_uverbs_attr){ .attr_id = UVERBS_ATTR_QUERY_MR_RESP_RKEY, .len = 4,
					     .flags = UVERBS_ATTR_F_MANDATORY,
					     .data = (uintptr_t)&rkey };
	q->attr[3] = (struct ib_uverbs_attr){ .attr_id = UVERBS_ATTR_QUERY_MR_RESP_LENGTH,
					     .len = 8, .flags = UVERBS_ATTR_F_MANDATORY,
					     .data = (uintptr_t)&length };
	q->attr[4] = (struct ib_uverbs_attr){ .attr_id = UVERBS_ATTR_QUERY_MR_RESP_IOVA, .len = 8,
					     .data = (uintptr_t)&iova };
	lkey = rkey = 0;
	length = iova = 0;
}

static int query(struct query_mr *q)
{
	errno = 0;
	return ioctl(in.ctx->cmd_fd, RDMA_VERBS_IOCTL, &q->hdr) ? errno : 0;
}

Test(sim_import, ioctl_attribute_checks)
{
	struct query_mr q;

	query_mr_init(&q, mr->handle);
	cr_assert_eq(query(&q), 0);
	cr_expect_eq(lkey, mr->lkey);
	cr_expect_eq(rkey, mr->rkey);
	cr_expect_eq(length, (uint64_t)BUF);
	cr_expect_eq(iova, (uintptr_t)buf);
	for (int i = 1; i < 5; i++)
		cr_expect(q.attr[i].flags & UVERBS_ATTR_F_VALID_OUTPUT, "attr %d written", i);

	query_mr_init(&q, mr->handle);
	q.hdr.num_attrs = 4; /* without the optional address */
	q.hdr.length -= sizeof(q.attr[0]);
	cr_expect_eq(query(&q), 0);
	cr_expect_eq(iova, 0u);

	query_mr_init(&q, mr->handle);
	q.attr[3] = q.attr[4];
	q.attr[3].attr_id = UVERBS_ATTR_QUERY_MR_RESP_IOVA;
	q.attr[4].attr_id = UVERBS_ATTR_QUERY_MR_RESP_IOVA;
	cr_expect_eq(query(&q), EINVAL, "a duplicate (and the length missing)");

	query_mr_init(&q, mr->handle);
	q.hdr.num_attrs = 3;
	q.hdr.length -= 2 * sizeof(q.attr[0]);
	cr_expect_eq(query(&q), EINVAL, "a mandatory attribute missing");

	query_mr_init(&q, mr->handle);
	q.attr[4].attr_id = 0x77;
	cr_expect_eq(query(&q), 0, "an unknown optional attribute is ignored");
	q.attr[4].flags = UVERBS_ATTR_F_MANDATORY;
	cr_expect_eq(query(&q), EPROTONOSUPPORT, "an unknown mandatory one is not");

	query_mr_init(&q, mr->handle);
	q.attr[1].len = 8;
	cr_expect_eq(query(&q), EINVAL, "an output of the wrong size");
	query_mr_init(&q, mr->handle);
	q.attr[2].attr_data.reserved = 1;
	cr_expect_eq(query(&q), EINVAL, "reserved bits");
	query_mr_init(&q, mr->handle);
	q.attr[0].len = 4;
	cr_expect_eq(query(&q), EINVAL, "a handle with a length");
	query_mr_init(&q, mr->handle);
	q.attr[0].data = (uint64_t)-1;
	cr_expect_eq(query(&q), EINVAL, "a negative handle");
	query_mr_init(&q, 4000);
	cr_expect_eq(query(&q), ENOENT);
	query_mr_init(&q, d.pd->handle);
	cr_expect_eq(query(&q), EINVAL, "a PD is not an MR");
	query_mr_init(&q, mr->handle);
	q.attr[1].data = 8; /* unmapped */
	cr_expect_eq(query(&q), EFAULT);
	query_mr_init(&q, mr->handle);
	q.attr[1].data = 0;
	cr_expect_eq(query(&q), EFAULT);
	cr_expect_eq(rkey, 0u, "nothing after the fault");
}

/* The ucontext answer an importer reads: what GET_CONTEXT said, without static BlueFlame
 * registers. */
Test(sim_import, query_context)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attr[3];
	} q;
	struct mlx5_ib_alloc_ucontext_resp r;
	uint32_t ncomp = 0;
	uint64_t core = 0;

	memset(&q, 0, sizeof(q));
	memset(&r, 0xa5, sizeof(r));
	q.hdr.length = sizeof(q);
	q.hdr.object_id = UVERBS_OBJECT_DEVICE;
	q.hdr.method_id = UVERBS_METHOD_QUERY_CONTEXT;
	q.hdr.num_attrs = 3;
	q.hdr.driver_id = RDMA_DRIVER_MLX5;
	q.attr[0] = (struct ib_uverbs_attr){ .attr_id = UVERBS_ATTR_QUERY_CONTEXT_NUM_COMP_VECTORS,
					    .len = 4, .data = (uintptr_t)&ncomp };
	q.attr[1] = (struct ib_uverbs_attr){ .attr_id = UVERBS_ATTR_QUERY_CONTEXT_CORE_SUPPORT,
					    .len = 8, .data = (uintptr_t)&core };
	q.attr[2] = (struct ib_uverbs_attr){ .attr_id = MLX5_IB_ATTR_QUERY_CONTEXT_RESP_UCTX,
					    .len = sizeof(r), .flags = UVERBS_ATTR_F_MANDATORY,
					    .data = (uintptr_t)&r };
	cr_assert_eq(ioctl(d.ctx->cmd_fd, RDMA_VERBS_IOCTL, &q.hdr), 0, "%s", strerror(errno));
	cr_expect_eq(ncomp, (uint32_t)d.ctx->num_comp_vectors);
	cr_expect_eq(core, (uint64_t)IB_UVERBS_CORE_SUPPORT_OPTIONAL_MR_ACCESS);
	cr_expect_eq(r.tot_bfregs, 0u);
	cr_expect_eq(r.bf_reg_size, 512u);
	cr_expect_eq(r.num_ports, 1);
	cr_expect_eq(r.cqe_version, 1);
	cr_expect_eq(r.response_length, sizeof(r));
	cr_expect_eq(r.dump_fill_mkey, 0u, "what the device does not set is zero");
	q.attr[2].len = sizeof(r) - 4;
	errno = 0;
	cr_expect_neq(ioctl(d.ctx->cmd_fd, RDMA_VERBS_IOCTL, &q.hdr), 0);
	cr_expect_eq(errno, EINVAL, "shorter than the kernel's struct");
}

/* UAR_OBJ_ALLOC gives out a page at the mmap offset it names (command 9, lowest free
 * index up); the page maps while allocated and not after UAR_OBJ_DESTROY, and an index
 * never given out does not map at all. */
static int uar_obj(uint16_t method, uint32_t *handle, uint64_t *off)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attr[5];
	} q;
	uint64_t type = MLX5_IB_UAPI_UAR_ALLOC_TYPE_NC;
	uint32_t page_id, len;
	int n = method == MLX5_IB_METHOD_UAR_OBJ_ALLOC ? 5 : 1;

	memset(&q, 0, sizeof(q));
	q.hdr.length = (uint16_t)(sizeof(q.hdr) + n * sizeof(q.attr[0]));
	q.hdr.object_id = MLX5_IB_OBJECT_UAR;
	q.hdr.method_id = method;
	q.hdr.num_attrs = (uint16_t)n;
	q.hdr.driver_id = RDMA_DRIVER_MLX5;
	if (n == 1) {
		q.attr[0] = (struct ib_uverbs_attr){ .attr_id = MLX5_IB_ATTR_UAR_OBJ_DESTROY_HANDLE,
						    .flags = UVERBS_ATTR_F_MANDATORY, .data = *handle };
	} else {
		q.attr[0] = (struct ib_uverbs_attr){ .attr_id = MLX5_IB_ATTR_UAR_OBJ_ALLOC_HANDLE,
						    .flags = UVERBS_ATTR_F_MANDATORY };
		q.attr[1] = (struct ib_uverbs_attr){ .attr_id = MLX5_IB_ATTR_UAR_OBJ_ALLOC_TYPE,
						    .len = 8, .flags = UVERBS_ATTR_F_MANDATORY,
						    .data = type };
		q.attr[2] = (struct ib_uverbs_attr){ .attr_id = MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_OFFSET,
						    .len = 8, .flags = UVERBS_ATTR_F_MANDATORY,
						    .data = (uintptr_t)off };
		q.attr[3] = (struct ib_uverbs_attr){ .attr_id = MLX5_IB_ATTR_UAR_OBJ_ALLOC_MMAP_LENGTH,
						    .len = 4, .flags = UVERBS_ATTR_F_MANDATORY,
						    .data = (uintptr_t)&len };
		q.attr[4] = (struct ib_uverbs_attr){ .attr_id = MLX5_IB_ATTR_UAR_OBJ_ALLOC_PAGE_ID,
						    .len = 4, .flags = UVERBS_ATTR_F_MANDATORY,
						    .data = (uintptr_t)&page_id };
	}
	errno = 0;
	if (ioctl(in.ctx->cmd_fd, RDMA_VERBS_IOCTL, &q.hdr))
		return errno;
	if (n == 5)
		*handle = (uint32_t)q.attr[0].data;
	return 0;
}

static int map_errno(uint64_t off)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, (size_t)page, PROT_WRITE, MAP_SHARED, in.ctx->cmd_fd, (off_t)off);

	if (p == MAP_FAILED)
		return errno;
	munmap(p, (size_t)page);
	return 0;
}

Test(sim_import, dynamic_uar_maps_while_allocated)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), off = 0, off2 = 0;
	uint32_t h, h2;

	cr_assert_eq(uar_obj(MLX5_IB_METHOD_UAR_OBJ_ALLOC, &h, &off), 0, "%s", strerror(errno));
	cr_expect_eq(off / page >> 8, 9u, "mmap command 9");
	cr_expect_eq(map_errno(off), 0);
	cr_expect_eq(map_errno((9ull << 8 | 200) * page), EINVAL, "an index never given out");
	cr_assert_eq(uar_obj(MLX5_IB_METHOD_UAR_OBJ_ALLOC, &h2, &off2), 0);
	cr_expect_neq(off2, off);
	cr_assert_eq(uar_obj(MLX5_IB_METHOD_UAR_OBJ_DESTROY, &h, NULL), 0);
	cr_expect_eq(map_errno(off), EINVAL, "destroyed");
	cr_expect_eq(map_errno(off2), 0, "the other stays");
	cr_assert_eq(uar_obj(MLX5_IB_METHOD_UAR_OBJ_DESTROY, &h2, NULL), 0);
	cr_expect_eq(map_errno(off2), EINVAL);
}

/* Random attributes for the methods the device answers (well-formed headers, attribute
 * ids near the real ones, lengths, flags and data from pointers to scratch memory, small
 * numbers that may be handles, and garbage): each call returns 0 or an errno, nothing
 * crashes, and the context works afterwards. Seeded by FVSIM_FUZZ_SEED (default 1). */
Test(sim_import, ioctl_methods_fuzzed)
{
	static const uint16_t methods[][2] = {
		{ UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_CONTEXT },
		{ UVERBS_OBJECT_ASYNC_EVENT, UVERBS_METHOD_ASYNC_EVENT_ALLOC },
		{ UVERBS_OBJECT_PD, MLX5_IB_METHOD_PD_QUERY },
		{ UVERBS_OBJECT_MR, UVERBS_METHOD_QUERY_MR },
		{ MLX5_IB_OBJECT_UAR, MLX5_IB_METHOD_UAR_OBJ_ALLOC },
		{ MLX5_IB_OBJECT_UAR, MLX5_IB_METHOD_UAR_OBJ_DESTROY },
		{ UVERBS_OBJECT_CQ, UVERBS_METHOD_CQ_CREATE },
		{ UVERBS_OBJECT_QP, UVERBS_METHOD_QP_CREATE },
		{ UVERBS_OBJECT_SRQ, UVERBS_METHOD_SRQ_CREATE },
	};
	static uint8_t scratch[8192];
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attr[16];
	} q;
	int ok = 0;

	fuzz_seed();
	for (int r = 0; r < 4000; r++) {
		unsigned m = fuzz_below(sizeof(methods) / sizeof(methods[0]));
		unsigned n = fuzz_below(16);
		int rc;

		for (size_t i = 0; i < sizeof(scratch); i += 8) {
			uint64_t v = fuzz_below(4) ? fuzz_next() : fuzz_below(8);

			memcpy(scratch + i, &v, sizeof(v));
		}
		memset(&q, 0, sizeof(q));
		q.hdr.length = (uint16_t)(sizeof(q.hdr) + n * sizeof(q.attr[0]));
		q.hdr.object_id = methods[m][0];
		q.hdr.method_id = methods[m][1];
		q.hdr.num_attrs = (uint16_t)n;
		q.hdr.driver_id = RDMA_DRIVER_MLX5;
		for (unsigned i = 0; i < n; i++) {
			struct ib_uverbs_attr *a = &q.attr[i];

			a->attr_id = (uint16_t)(fuzz_below(4) ? i : fuzz_below(3) ? fuzz_below(20) : 0x1000 + fuzz_below(4));
			a->len = (uint16_t)(fuzz_below(3) ? 0 : fuzz_below(2) ? 4u << fuzz_below(2) : fuzz_below(300));
			a->flags = (uint16_t)fuzz_below(4);
			a->attr_data.reserved = (uint16_t)(fuzz_below(16) ? 0 : fuzz_next());
			switch (fuzz_below(4)) {
			case 0: a->data = (uintptr_t)(scratch + 8 * fuzz_below(sizeof(scratch) / 16)); break;
			case 1: a->data = fuzz_below(8); break;
			case 2: a->data = fuzz_next(); break;
			default: a->data = (uint64_t)(int64_t)-(int)fuzz_below(3); break;
			}
		}
		errno = 0;
		rc = ioctl(d.ctx->cmd_fd, RDMA_VERBS_IOCTL, &q.hdr);
		cr_assert(rc == 0 || (rc == -1 && errno > 0 && errno < 200), "round %d: %d errno %d",
			  r, rc, errno);
		if (rc)
			continue;
		ok++;
		/* A new async fd is the caller's to close. */
		if (methods[m][0] == UVERBS_OBJECT_ASYNC_EVENT)
			for (unsigned i = 0; i < n; i++)
				if (q.attr[i].attr_id == UVERBS_ATTR_ASYNC_EVENT_ALLOC_FD_HANDLE)
					close((int)q.attr[i].data);
	}
	cr_log_info("%d of 4000 calls succeeded", ok);
	/* The context still serves, and the imported objects are still the originals. */
	{
		struct ibv_cq *cq = ibv_create_cq(in.ctx, 8, NULL, NULL, 0);
		struct ibv_mr *m2 = ibv_import_mr(in.pd, mr->handle);

		cr_assert(cq, "create_cq after the fuzz: %s", strerror(errno));
		cr_expect_eq(ibv_destroy_cq(cq), 0);
		cr_assert(m2);
		cr_expect_eq(m2->lkey, mr->lkey);
		ibv_unimport_mr(m2);
	}
}
