/* Malformed uverbs commands written straight to the device fd get a clean errno, as from
 * the kernel, and leave the device working. */
/* A legacy uverbs command is a core struct, whose last member is a flexible driver_data[],
 * followed by the driver's struct; the tests model that as one struct, a GNU layout clang
 * names. */
#ifdef __clang__
#pragma clang diagnostic ignored "-Wgnu-variable-sized-type-not-at-end"
#endif
#include <errno.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <rdma/mlx5-abi.h>

#include "sim-util.h"

static struct simt_dev d;

static void setup(void)
{
	simt_open(&d, 0);
}

static void teardown(void)
{
	simt_close(&d);
}

TestSuite(sim_commands, .init = setup, .fini = teardown, .timeout = 60);

/* write() of a legacy command: header + core request (+ driver request); returns 0 or errno. */
static int cmd(uint32_t command, void *req, size_t len, size_t out_len)
{
	uint8_t msg[1024];
	struct ib_uverbs_cmd_hdr *h = (void *)msg;

	cr_assert(len + sizeof(*h) <= sizeof(msg));
	h->command = command;
	h->in_words = (uint16_t)((sizeof(*h) + len) / 4);
	h->out_words = (uint16_t)(out_len / 4);
	memcpy(msg + sizeof(*h), req, len);
	if (write(d.ctx->cmd_fd, msg, sizeof(*h) + len) == (ssize_t)(sizeof(*h) + len))
		return 0;
	return errno;
}

static void still_works(void)
{
	struct ibv_port_attr pa;
	struct ibv_pd *pd = ibv_alloc_pd(d.ctx);

	cr_assert(pd, "the device stopped answering");
	cr_assert_eq(ibv_dealloc_pd(pd), 0);
	cr_assert_eq(ibv_query_port(d.ctx, 1, &pa), 0);
}

Test(sim_commands, framing_errors)
{
	uint8_t junk[64] = { 0 };
	struct ib_uverbs_cmd_hdr h = { IB_USER_VERBS_CMD_QUERY_PORT, 3, 0 };

	errno = 0;
	cr_expect_eq(write(d.ctx->cmd_fd, junk, 4), -1, "shorter than a header");
	cr_expect_eq(errno, EINVAL);
	memcpy(junk, &h, sizeof(h));
	cr_expect_eq(write(d.ctx->cmd_fd, junk, 32), -1, "in_words disagrees with the length");
	cr_expect_eq(errno, EINVAL);
	{
		/* An unmapped request buffer: below mmap_min_addr nothing is ever mapped (the
		 * compiler rejects a literal NULL here). */
		void *gone = (void *)(uintptr_t)0x1000;

		cr_expect_eq(write(d.ctx->cmd_fd, gone, 16), -1);
		cr_expect_eq(errno, EFAULT);
	}
	cr_expect_eq(cmd(0x7e, junk, 16, 0), EOPNOTSUPP, "unknown command");
	cr_expect_eq(cmd(IB_USER_VERBS_CMD_GET_CONTEXT, junk, 8, 16), EINVAL, "context twice");
	still_works();
}

Test(sim_commands, extended_framing)
{
	uint8_t msg[64] = { 0 };
	struct ib_uverbs_cmd_hdr *h = (void *)msg;

	h->command = IB_USER_VERBS_CMD_FLAG_EXTENDED | IB_USER_VERBS_EX_CMD_QUERY_DEVICE;
	h->in_words = 3; /* claims 24 bytes of core request, 8 are there */
	cr_expect_eq(write(d.ctx->cmd_fd, msg, 8 + 16 + 8), -1);
	cr_expect_eq(errno, EINVAL);
	still_works();
}

Test(sim_commands, bad_response_pointer)
{
	struct ib_uverbs_query_port q = { .response = 16, .port_num = 1 };

	cr_expect_eq(cmd(IB_USER_VERBS_CMD_QUERY_PORT, &q, sizeof(q),
			 sizeof(struct ib_uverbs_query_port_resp)), EFAULT);
	still_works();
}

Test(sim_commands, bad_handles)
{
	struct ib_uverbs_dealloc_pd dp = { .pd_handle = 4242 };
	struct ib_uverbs_dereg_mr dm = { .mr_handle = 4242 };
	struct ib_uverbs_modify_qp mq = { .qp_handle = 4242, .attr_mask = IBV_QP_STATE };
	struct ib_uverbs_destroy_cq dc;
	struct ib_uverbs_destroy_cq_resp dcr;

	cr_expect_eq(cmd(IB_USER_VERBS_CMD_DEALLOC_PD, &dp, sizeof(dp), 0), EINVAL);
	cr_expect_eq(cmd(IB_USER_VERBS_CMD_DEREG_MR, &dm, sizeof(dm), 0), EINVAL);
	cr_expect_eq(cmd(IB_USER_VERBS_CMD_MODIFY_QP, &mq, sizeof(mq), 0), EINVAL);
	/* A PD handle used as a CQ handle. */
	memset(&dc, 0, sizeof(dc));
	dc.response = (uintptr_t)&dcr;
	dc.cq_handle = d.pd->handle;
	cr_expect_eq(cmd(IB_USER_VERBS_CMD_DESTROY_CQ, &dc, sizeof(dc), sizeof(dcr)), EINVAL);
	still_works();
}

Test(sim_commands, queues_in_bad_memory)
{
	struct {
		struct ib_uverbs_create_cq core;
		struct mlx5_ib_create_cq drv;
	} cq;
	struct {
		struct ib_uverbs_create_cq_resp core;
		struct mlx5_ib_create_cq_resp drv;
	} resp;
	/* Below mmap_min_addr: never mapped, whatever else (an ASan runtime) maps meanwhile. */
	void *gone = (void *)(uintptr_t)0x1000;

	memset(&cq, 0, sizeof(cq));
	cq.core.response = (uintptr_t)&resp;
	cq.core.cqe = 63;
	cq.core.comp_channel = -1;
	cq.drv.buf_addr = (uintptr_t)gone;
	cq.drv.db_addr = (uintptr_t)gone;
	cq.drv.cqe_size = 64;
	cr_expect_eq(cmd(IB_USER_VERBS_CMD_CREATE_CQ, &cq, sizeof(cq), sizeof(resp)), EFAULT);
	cq.drv.cqe_size = 96;
	cr_expect_eq(cmd(IB_USER_VERBS_CMD_CREATE_CQ, &cq, sizeof(cq), sizeof(resp)), EINVAL,
		     "CQE size must be 64 or 128");
	still_works();
}

Test(sim_commands, qp_geometry_checked)
{
	static uint8_t qbuf[65536] __attribute__((aligned(4096)));
	static uint32_t db[16] __attribute__((aligned(64)));
	struct ibv_cq *cq = simt_cq(&d, 16);
	struct {
		struct ib_uverbs_create_qp core;
		struct mlx5_ib_create_qp drv;
	} q;
	struct {
		struct ib_uverbs_create_qp_resp core;
		struct mlx5_ib_create_qp_resp drv;
	} resp;

	memset(&q, 0, sizeof(q));
	q.core.response = (uintptr_t)&resp;
	q.core.pd_handle = d.pd->handle;
	q.core.send_cq_handle = cq->handle;
	q.core.recv_cq_handle = cq->handle;
	q.core.qp_type = IBV_QPT_RC;
	q.drv.buf_addr = (uintptr_t)qbuf;
	q.drv.db_addr = (uintptr_t)db;
	q.drv.sq_wqe_count = 100; /* not a power of two */
	cr_expect_eq(cmd(IB_USER_VERBS_CMD_CREATE_QP, &q, sizeof(q), sizeof(resp)), EINVAL);
	q.drv.sq_wqe_count = 1u << 20; /* beyond max_send_wqebb */
	cr_expect_eq(cmd(IB_USER_VERBS_CMD_CREATE_QP, &q, sizeof(q), sizeof(resp)), EINVAL);
	q.drv.sq_wqe_count = 4096; /* 256 KiB: past the end of the buffer */
	q.drv.buf_addr = (uintptr_t)qbuf + sizeof(qbuf) - 4096;
	cr_expect(cmd(IB_USER_VERBS_CMD_CREATE_QP, &q, sizeof(q), sizeof(resp)) != 0);
	q.drv.buf_addr = (uintptr_t)qbuf;
	q.drv.sq_wqe_count = 64;
	q.core.qp_type = IBV_QPT_RAW_PACKET;
	cr_expect_eq(cmd(IB_USER_VERBS_CMD_CREATE_QP, &q, sizeof(q), sizeof(resp)), EOPNOTSUPP);
	q.core.qp_type = IBV_QPT_RC;
	cr_expect_eq(cmd(IB_USER_VERBS_CMD_CREATE_QP, &q, sizeof(q), sizeof(resp)), 0,
		     "a well-formed request still works");
	{
		struct ib_uverbs_destroy_qp dq = { .response = (uintptr_t)&resp,
						   .qp_handle = resp.core.qp_handle };

		cr_expect_eq(cmd(IB_USER_VERBS_CMD_DESTROY_QP, &dq, sizeof(dq),
				 sizeof(struct ib_uverbs_destroy_qp_resp)), 0);
	}
	ibv_destroy_cq(cq);
	still_works();
}

/* ioctl() on the command fd: the framework is there with the few methods that have no
 * write() form (ioctl.c); the others are refused as by a kernel without them. */
static int verbs_ioctl(unsigned long req, struct ib_uverbs_ioctl_hdr *h)
{
	errno = 0;
	if (ioctl(d.ctx->cmd_fd, req, h) == 0)
		return 0;
	return errno;
}

Test(sim_commands, ioctl_framework_without_methods)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attr;
	} m;

	memset(&m, 0, sizeof(m));
	m.hdr.length = sizeof(m);
	m.hdr.num_attrs = 1;
	m.hdr.object_id = UVERBS_OBJECT_DEVICE;
	m.hdr.method_id = UVERBS_METHOD_QUERY_PORT;
	m.hdr.driver_id = RDMA_DRIVER_MLX5;
	cr_expect_eq(verbs_ioctl(RDMA_VERBS_IOCTL, &m.hdr), EPROTONOSUPPORT,
		     "a method the device lacks: libibverbs falls back to write() for it alone");
	cr_expect_eq(verbs_ioctl(RDMA_VERBS_IOCTL + 1, &m.hdr), ENOTTY, "not a uverbs request");
	cr_expect_eq(verbs_ioctl(RDMA_VERBS_IOCTL, NULL), EFAULT);
	m.hdr.length = sizeof(m.hdr);
	cr_expect_eq(verbs_ioctl(RDMA_VERBS_IOCTL, &m.hdr), EINVAL, "length != header + attrs");
	m.hdr.length = sizeof(m);
	m.hdr.reserved2 = 1;
	cr_expect_eq(verbs_ioctl(RDMA_VERBS_IOCTL, &m.hdr), EPROTONOSUPPORT);
	m.hdr.reserved2 = 0;
	m.hdr.driver_id = RDMA_DRIVER_MLX4;
	cr_expect_eq(verbs_ioctl(RDMA_VERBS_IOCTL, &m.hdr), EINVAL, "another driver's id");
	still_works();
}

/* What the DevX and mlx5dv method users see: "not supported", so they skip. */
Test(sim_commands, devx_and_dv_methods_unsupported)
{
	struct mlx5dv_context_attr attr = { .flags = MLX5DV_CONTEXT_FLAGS_DEVX };
	struct mlx5dv_port port;
	struct ibv_device **list;
	struct ibv_context *devx;
	uint32_t in[4] = { 0 }, out[4];

	list = ibv_get_device_list(NULL);
	cr_assert(list && list[0]);
	errno = 0;
	devx = mlx5dv_open_device(list[0], &attr);
	cr_expect_null(devx, "a DevX context on a device without DevX");
	cr_expect_eq(errno, EINVAL, "the kernel's answer when log_max_uctx is 0");
	if (devx)
		ibv_close_device(devx);
	ibv_free_device_list(list);
	cr_expect_eq(mlx5dv_devx_general_cmd(d.ctx, in, sizeof(in), out, sizeof(out)),
		     EPROTONOSUPPORT);
	cr_expect_eq(mlx5dv_query_port(d.ctx, 1, &port), EPROTONOSUPPORT);
	errno = 0;
	cr_expect_null(mlx5dv_devx_alloc_uar(d.ctx, MLX5DV_UAR_ALLOC_TYPE_BF));
	cr_expect_eq(errno, EPROTONOSUPPORT);
	still_works();
}

/* The uverbs core refuses a completion vector the context does not have. */
Test(sim_commands, cq_comp_vector_bounds)
{
	struct ibv_cq_init_attr_ex ax = { .cqe = 16 };
	struct ibv_cq *cq;
	struct ibv_cq_ex *cqx;

	cr_assert_eq(d.ctx->num_comp_vectors, 1);
	cq = ibv_create_cq(d.ctx, 16, NULL, NULL, d.ctx->num_comp_vectors - 1);
	cr_assert(cq, "the last vector: %s", strerror(errno));
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	errno = 0;
	cr_expect_null(ibv_create_cq(d.ctx, 16, NULL, NULL, d.ctx->num_comp_vectors));
	cr_expect_eq(errno, EINVAL);
	ax.comp_vector = (uint32_t)d.ctx->num_comp_vectors + 1;
	errno = 0;
	cqx = ibv_create_cq_ex(d.ctx, &ax);
	cr_expect_null(cqx);
	cr_expect_eq(errno, EINVAL);
	if (cqx)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
	still_works();
}

/* max_wr 0 is a valid SRQ (as with the kernel): one ring entry, nothing to post. */
Test(sim_commands, srq_max_wr_zero)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 0, .max_sge = 1 } };
	struct ibv_srq_attr qa;
	struct ibv_srq *srq = ibv_create_srq(d.pd, &sa);

	cr_assert(srq, "ibv_create_srq(max_wr 0): %s", strerror(errno));
	cr_expect_eq(sa.attr.max_wr, 0);
	cr_assert_eq(ibv_query_srq(srq, &qa), 0);
	cr_expect_eq(qa.max_wr, 0, "the device reports %u", qa.max_wr);
	cr_assert_eq(ibv_destroy_srq(srq), 0);
	still_works();
}

/* Create flags: blocking multicast loopback holds on a device without multicast; the
 * offloads it lacks are refused with EOPNOTSUPP. */
Test(sim_commands, qp_create_flags)
{
	struct ibv_cq *cq = ibv_create_cq(d.ctx, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp *qp;

	cr_assert(cq);
	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_UD;
	a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS;
	a.pd = d.pd;
	a.send_cq = a.recv_cq = cq;
	a.cap.max_send_wr = a.cap.max_recv_wr = 4;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	a.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
	qp = ibv_create_qp_ex(d.ctx, &a);
	cr_assert(qp, "UD with BLOCK_SELF_MCAST_LB: %s", strerror(errno));
	simt_ud_ready(qp, 0x11);
	cr_assert_eq(ibv_destroy_qp(qp), 0);
	a.create_flags = IBV_QP_CREATE_CVLAN_STRIPPING;
	errno = 0;
	qp = ibv_create_qp_ex(d.ctx, &a);
	cr_expect_null(qp);
	cr_expect_eq(errno, EOPNOTSUPP);
	if (qp)
		ibv_destroy_qp(qp);
	cr_assert_eq(ibv_destroy_cq(cq), 0);
	still_works();
}

/* A dup()'d command fd is the same device, as the kernel's shared file is: fstat names
 * the device, and closing the copy keeps the context. ibv_import_device() takes one
 * (device/import tests what the imported context does). */
Test(sim_commands, dup_of_command_fd)
{
	struct ibv_context *ic;
	struct stat st;
	int fd2, fd3;

	fd2 = dup(d.ctx->cmd_fd);
	cr_assert(fd2 >= 0);
	cr_assert_eq(fstat(fd2, &st), 0);
	cr_expect(S_ISCHR(st.st_mode));
	cr_expect_eq(major(st.st_rdev), 231);
	cr_expect_eq(minor(st.st_rdev), 192);
	ic = ibv_import_device(fd2);
	cr_assert(ic, "import: %s", strerror(errno));
	/* Closing the imported context closes fd2; the device still answers on the
	 * original. */
	cr_expect_eq(ibv_close_device(ic), 0);
	still_works();
	fd3 = fcntl(d.ctx->cmd_fd, F_DUPFD_CLOEXEC, 0);
	cr_assert(fd3 >= 0);
	cr_assert_eq(fstat(fd3, &st), 0);
	cr_expect_eq(minor(st.st_rdev), 192);
	cr_assert_eq(close(fd3), 0);
	still_works();
}

/* The device nodes answer access() as a 0666 char device does (UCX asks R_OK | W_OK before
 * it offers a device); a node past the configured devices does not exist. */
Test(sim_commands, access_to_device_nodes)
{
	cr_expect_eq(access("/dev/infiniband/uverbs0", R_OK | W_OK), 0);
	cr_expect_eq(access("/dev/infiniband/uverbs0", F_OK), 0);
	cr_expect_eq(faccessat(AT_FDCWD, "/dev/infiniband/uverbs0", R_OK | W_OK, AT_EACCESS), 0);
	cr_expect_eq(euidaccess("/dev/infiniband/uverbs0", R_OK | W_OK), 0);
	errno = 0;
	cr_expect_eq(access("/dev/infiniband/uverbs0", X_OK), -1);
	cr_expect_eq(errno, EACCES);
	errno = 0;
	cr_expect_eq(access("/dev/infiniband/uverbs0", 0x40), -1);
	cr_expect_eq(errno, EINVAL);
	errno = 0;
	cr_expect_eq(access("/dev/infiniband/uverbs7", R_OK), -1);
	cr_expect_eq(errno, ENOENT);
}

/* A program may reach the kernel's mmap without passing our interposer (UCX patches the
 * first mmap in the process to jump to the system call): the command fd's pages are still
 * the device's. UAR page 0 mapped both ways is one memory, and the clock-info page reads
 * the same. */
Test(sim_commands, register_pages_by_raw_mmap)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	off_t clock = (off_t)(MLX5_IB_MMAP_CLOCK_INFO << 8 | MLX5_IB_CLOCK_INFO_V1) * (off_t)page;
	volatile uint64_t *lib, *raw;
	const struct mlx5_ib_clock_info *ci;
	struct stat st;

	lib = mmap(NULL, page, PROT_WRITE, MAP_SHARED, d.ctx->cmd_fd, 0);
	cr_assert_neq(lib, MAP_FAILED, "%s", strerror(errno));
	/* syscall() takes its arguments as longs: an int there leaves the register's high half
	 * as it was, and clang does not clear it. */
	raw = (void *)syscall(SYS_mmap, NULL, page, (long)(PROT_READ | PROT_WRITE), (long)MAP_SHARED,
			      (long)d.ctx->cmd_fd, 0L);
	cr_assert_neq(raw, MAP_FAILED, "%s", strerror(errno));
	lib[5] = 0x1122334455667788ull;
	cr_expect_eq(raw[5], 0x1122334455667788ull);
	raw[6] = 42;
	cr_expect_eq(lib[6], 42);
	lib[5] = lib[6] = 0;
	munmap((void *)lib, page);
	munmap((void *)raw, page);

	ci = (void *)syscall(SYS_mmap, NULL, page, (long)PROT_READ, (long)MAP_SHARED, (long)d.ctx->cmd_fd,
			     (long)clock);
	cr_assert_neq(ci, MAP_FAILED, "%s", strerror(errno));
	cr_expect_eq(ci->mult, 1);
	cr_expect_eq(ci->mask, ~0ull);
	cr_expect_neq(ci->nsec, 0);
	munmap((void *)ci, page);

	/* Whatever backs it, the fd still looks like the uverbs char device. */
	cr_assert_eq(fstat(d.ctx->cmd_fd, &st), 0);
	cr_expect(S_ISCHR(st.st_mode));
	cr_expect_eq(major(st.st_rdev), 231);
	cr_expect_eq(minor(st.st_rdev), 192);
}
