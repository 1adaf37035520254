/* write() on the rdma_cm file: the framing, then the commands. Each checks its request
 * the way the kernel's ucma.c does, calls the connection manager and writes the response
 * to the caller's pointer. Every command but GET_EVENT (which may sleep) runs with the CM
 * lock held. */
#include "ucma_cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>

#include <netinet/in.h>
#include <rdma/rdma_user_cm.h>

#include "../cm/cm.h"
#include "../common/log.h"
#include "../common/sys.h"
#include "../engine/dma.h"
#include "../engine/remote_cm.h"
#include "ucma.h"

#define REQ(r, var) memcpy(&(var), (r)->in, sizeof(var))
/* The id a command names, or return the kernel's errno for a bad handle. */
#define ID(r, handle, id)                                              \
	do {                                                           \
		int err_;                                              \
		if (!((id) = cm_id_find((r)->ch, (handle), &err_)))    \
			return err_;                                   \
	} while (0)
#define UCMA_MAX_BACKLOG 1024 /* the kernel's default max_backlog sysctl */
#define UCMA_MAX_IN 512 /* larger than every command struct */

/* One decoded command. */
struct ucma_req {
	struct cm_chan *ch;
	int fd;
	const uint8_t *in; /* the command after its header, zero-filled to 512 bytes */
	uint16_t in_len, out_len;
};

static int put(uint64_t ptr, const void *p, size_t n)
{
	return sim_dma_write(ptr, p, n);
}

/* Address length by family, 0 for an unknown one (rdma_addr_size). */
static size_t addr_size(const void *a)
{
	switch (((const struct sockaddr *)a)->sa_family) {
	case AF_INET:
		return sizeof(struct sockaddr_in);
	case AF_INET6:
		return sizeof(struct sockaddr_in6);
	case AF_IB:
		return 48; /* struct sockaddr_ib */
	default:
		return 0;
	}
}

static size_t addr_size_in6(const struct sockaddr_in6 *a)
{
	size_t n = addr_size(a);

	return n <= sizeof(*a) ? n : 0;
}

static int cmd_create_id(const struct ucma_req *r)
{
	struct rdma_ucm_create_id cmd;
	struct rdma_ucm_create_id_resp resp = { 0 };
	int err;

	if (r->out_len < sizeof(resp))
		return ENOSPC;
	REQ(r, cmd);
	err = cm_create_id(r->ch, cmd.uid, cmd.ps, cmd.qp_type, &resp.id);
	if (!err && (err = put(cmd.response, &resp, sizeof(resp)))) {
		uint32_t n;
		struct cm_id *id = cm_id_find(r->ch, resp.id, &err);

		cm_destroy_id(id, &n);
		err = EFAULT;
	}
	return err;
}

static int cmd_destroy_id(const struct ucma_req *r)
{
	struct rdma_ucm_destroy_id cmd;
	struct rdma_ucm_destroy_id_resp resp = { 0 };
	struct cm_id *id;

	if (r->out_len < sizeof(resp))
		return ENOSPC;
	REQ(r, cmd);
	ID(r, cmd.id, id);
	cm_destroy_id(id, &resp.events_reported);
	return put(cmd.response, &resp, sizeof(resp));
}

static int cmd_bind_ip(const struct ucma_req *r)
{
	struct rdma_ucm_bind_ip cmd;
	struct cm_id *id;

	REQ(r, cmd);
	if (!addr_size_in6(&cmd.addr))
		return EINVAL;
	ID(r, cmd.id, id);
	return cm_bind(id, (struct sockaddr *)&cmd.addr);
}

static int cmd_bind_addr(const struct ucma_req *r)
{
	struct rdma_ucm_bind cmd;
	struct cm_id *id;

	REQ(r, cmd);
	if (cmd.reserved || !cmd.addr_size || cmd.addr_size != addr_size(&cmd.addr))
		return EINVAL;
	ID(r, cmd.id, id);
	return cm_bind(id, (struct sockaddr *)&cmd.addr);
}

static int cmd_resolve_ip(const struct ucma_req *r)
{
	struct rdma_ucm_resolve_ip cmd;
	struct cm_id *id;

	REQ(r, cmd);
	if ((cmd.src_addr.sin6_family && !addr_size_in6(&cmd.src_addr)) ||
	    !addr_size_in6(&cmd.dst_addr))
		return EINVAL;
	ID(r, cmd.id, id);
	return cm_resolve_addr(id, (struct sockaddr *)&cmd.src_addr,
			       (struct sockaddr *)&cmd.dst_addr);
}

static int cmd_resolve_addr(const struct ucma_req *r)
{
	struct rdma_ucm_resolve_addr cmd;
	struct cm_id *id;

	REQ(r, cmd);
	if (cmd.reserved || (cmd.src_size && cmd.src_size != addr_size(&cmd.src_addr)) ||
	    !cmd.dst_size || cmd.dst_size != addr_size(&cmd.dst_addr))
		return EINVAL;
	ID(r, cmd.id, id);
	return cm_resolve_addr(id, (struct sockaddr *)&cmd.src_addr,
			       (struct sockaddr *)&cmd.dst_addr);
}

static int cmd_resolve_route(const struct ucma_req *r)
{
	struct rdma_ucm_resolve_route cmd;
	struct cm_id *id;

	REQ(r, cmd);
	ID(r, cmd.id, id);
	return cm_resolve_route(id);
}

static int cmd_query_route(const struct ucma_req *r)
{
	struct rdma_ucm_query cmd;
	struct rdma_ucm_query_route_resp resp;
	struct cm_id *id;

	if (r->out_len < sizeof(resp))
		return ENOSPC;
	REQ(r, cmd);
	ID(r, cmd.id, id);
	cm_query_route(id, &resp);
	return put(cmd.response, &resp, sizeof(resp));
}

static int cmd_query(const struct ucma_req *r)
{
	struct rdma_ucm_query cmd;
	union {
		struct rdma_ucm_query_addr_resp addr;
		struct rdma_ucm_query_path_resp path;
		uint8_t room[sizeof(struct rdma_ucm_query_path_resp) + 2 * sizeof(struct ib_path_rec_data)];
	} resp;
	size_t len = sizeof(resp.addr);
	struct cm_id *id;

	REQ(r, cmd);
	ID(r, cmd.id, id);
	switch (cmd.option) {
	case RDMA_USER_CM_QUERY_ADDR:
	case RDMA_USER_CM_QUERY_GID:
		if (r->out_len < sizeof(resp.addr))
			return ENOSPC;
		(cmd.option == RDMA_USER_CM_QUERY_ADDR ? cm_query_addr : cm_query_gid)(id, &resp.addr);
		break;
	case RDMA_USER_CM_QUERY_PATH:
		if (r->out_len < sizeof(resp.path))
			return ENOSPC;
		/* A record goes out only if it fits whole (kernel ucma_query_path). */
		cm_query_path(id, &resp.path, r->out_len - 1u, &len);
		break;
	default:
		return ENOSYS;
	}
	return put(cmd.response, &resp, len);
}

static int cmd_connect(const struct ucma_req *r)
{
	struct rdma_ucm_connect cmd;
	struct cm_id *id;

	REQ(r, cmd);
	if (!cmd.conn_param.valid)
		return EINVAL;
	ID(r, cmd.id, id);
	return cm_connect(id, &cmd.conn_param);
}

static int cmd_listen(const struct ucma_req *r)
{
	struct rdma_ucm_listen cmd;
	struct cm_id *id;

	REQ(r, cmd);
	ID(r, cmd.id, id);
	return cm_listen(id, (int)cmd.backlog > 0 && cmd.backlog < UCMA_MAX_BACKLOG
				     ? (int)cmd.backlog
				     : UCMA_MAX_BACKLOG);
}

static int cmd_accept(const struct ucma_req *r)
{
	struct rdma_ucm_accept cmd;
	struct cm_id *id;

	REQ(r, cmd);
	ID(r, cmd.id, id);
	return cm_accept(id, cmd.uid, cmd.conn_param.valid ? &cmd.conn_param : NULL);
}

static int cmd_reject(const struct ucma_req *r)
{
	struct rdma_ucm_reject cmd;
	struct cm_id *id;

	REQ(r, cmd);
	ID(r, cmd.id, id);
	/* Consumer defined (28, also for 0) or vendor option not supported (35). */
	if (cmd.reason && cmd.reason != 28 && cmd.reason != 35)
		return EINVAL;
	return cm_reject(id, cmd.reason, cmd.private_data, cmd.private_data_len);
}

static int cmd_disconnect(const struct ucma_req *r)
{
	struct rdma_ucm_disconnect cmd;
	struct cm_id *id;

	REQ(r, cmd);
	ID(r, cmd.id, id);
	return cm_disconnect(id);
}

static int cmd_init_qp_attr(const struct ucma_req *r)
{
	struct rdma_ucm_init_qp_attr cmd;
	struct ib_uverbs_qp_attr resp;
	struct cm_id *id;
	int err;

	if (r->out_len < sizeof(resp))
		return ENOSPC;
	REQ(r, cmd);
	if (cmd.qp_state > 6) /* IB_QPS_ERR */
		return EINVAL;
	ID(r, cmd.id, id);
	err = cm_init_qp_attr(id, cmd.qp_state, &resp);
	return err ? err : put(cmd.response, &resp, sizeof(resp));
}

/* Blocks, unless the fd is non-blocking, until an event is queued (ucma_get_event). */
static int cmd_get_event(const struct ucma_req *r)
{
	struct rdma_ucm_get_event cmd;
	struct rdma_ucm_event_resp resp;
	struct pollfd p = { .fd = r->fd, .events = POLLIN };
	int err;

	if (r->out_len < sizeof(resp))
		return ENOSPC;
	REQ(r, cmd);
	for (;;) {
		cm_lock();
		err = cm_get_event(r->ch, &resp);
		cm_unlock();
		if (err != EAGAIN)
			break;
		if (sim_sys_fcntl(r->fd, F_GETFL) & O_NONBLOCK)
			return EAGAIN;
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return errno;
	}
	return err ? err : put(cmd.response, &resp, sizeof(resp));
}

static int cmd_set_option(const struct ucma_req *r)
{
	struct rdma_ucm_set_option cmd;
	uint8_t val[1024];
	struct cm_id *id;
	int err;

	REQ(r, cmd);
	ID(r, cmd.id, id);
	if (cmd.optlen > sizeof(val))
		return EINVAL;
	err = sim_dma_read(val, cmd.optval, cmd.optlen);
	return err ? err : cm_set_option(id, cmd.level, cmd.optname, val, cmd.optlen);
}

static int cmd_notify(const struct ucma_req *r)
{
	struct rdma_ucm_notify cmd;
	struct cm_id *id;

	REQ(r, cmd);
	ID(r, cmd.id, id);
	/* Only "communication established" means something to the kernel, and our
	 * handshake always ends with an RTU: nothing to do. */
	return 0;
}

static int cmd_migrate_id(const struct ucma_req *r)
{
	struct rdma_ucm_migrate_id cmd;
	struct rdma_ucm_migrate_resp resp = { 0 };
	struct cm_chan *from;
	struct cm_id *id;
	int err;

	REQ(r, cmd);
	from = sim_ucma_chan((int)cmd.fd);
	if (!from)
		return sim_sys_fcntl((int)cmd.fd, F_GETFD) < 0 ? EBADF : EINVAL;
	if (!(id = cm_id_find(from, cmd.id, &err)))
		return err;
	cm_migrate_id(r->ch, id, &resp.events_reported);
	return put(cmd.response, &resp, sizeof(resp));
}

/* Multicast needs a subnet manager's groups; GET_OPTION has no handler in the kernel. */
static int (*const table[])(const struct ucma_req *) = {
	[RDMA_USER_CM_CMD_CREATE_ID] = cmd_create_id,
	[RDMA_USER_CM_CMD_DESTROY_ID] = cmd_destroy_id,
	[RDMA_USER_CM_CMD_BIND_IP] = cmd_bind_ip,
	[RDMA_USER_CM_CMD_RESOLVE_IP] = cmd_resolve_ip,
	[RDMA_USER_CM_CMD_RESOLVE_ROUTE] = cmd_resolve_route,
	[RDMA_USER_CM_CMD_QUERY_ROUTE] = cmd_query_route,
	[RDMA_USER_CM_CMD_CONNECT] = cmd_connect,
	[RDMA_USER_CM_CMD_LISTEN] = cmd_listen,
	[RDMA_USER_CM_CMD_ACCEPT] = cmd_accept,
	[RDMA_USER_CM_CMD_REJECT] = cmd_reject,
	[RDMA_USER_CM_CMD_DISCONNECT] = cmd_disconnect,
	[RDMA_USER_CM_CMD_INIT_QP_ATTR] = cmd_init_qp_attr,
	[RDMA_USER_CM_CMD_GET_EVENT] = cmd_get_event,
	[RDMA_USER_CM_CMD_GET_OPTION] = NULL,
	[RDMA_USER_CM_CMD_SET_OPTION] = cmd_set_option,
	[RDMA_USER_CM_CMD_NOTIFY] = cmd_notify,
	[RDMA_USER_CM_CMD_JOIN_IP_MCAST] = NULL,
	[RDMA_USER_CM_CMD_LEAVE_MCAST] = NULL,
	[RDMA_USER_CM_CMD_MIGRATE_ID] = cmd_migrate_id,
	[RDMA_USER_CM_CMD_QUERY] = cmd_query,
	[RDMA_USER_CM_CMD_BIND] = cmd_bind_addr,
	[RDMA_USER_CM_CMD_RESOLVE_ADDR] = cmd_resolve_addr,
	[RDMA_USER_CM_CMD_JOIN_MCAST] = NULL,
};

/* Runs command cmd; 0 or an errno (ENOSYS for a command that is not there). */
static int run(uint32_t cmd, const struct ucma_req *r)
{
	int err;

	if (cmd >= sizeof(table) / sizeof(table[0]))
		return EINVAL;
	if (!table[cmd])
		return ENOSYS;
	if (cmd == RDMA_USER_CM_CMD_GET_EVENT)
		return cmd_get_event(r); /* locks around each try, not while it sleeps */
	cm_lock();
	err = table[cmd](r);
	cm_unlock();
	return err;
}

/* Kernel ucma_write(): a header { cmd, in, out }, then in bytes of command. */
ssize_t sim_ucma_write(struct cm_chan *ch, int fd, const void *buf, size_t count)
{
	struct rdma_ucm_cmd_hdr hdr;
	uint8_t in[UCMA_MAX_IN];
	struct ucma_req r;
	int err;

	err = EINVAL;
	if (count < sizeof(hdr))
		goto out;
	err = sim_dma_read(&hdr, (uint64_t)(uintptr_t)buf, sizeof(hdr));
	if (err)
		goto out;
	err = EINVAL;
	if (hdr.in + sizeof(hdr) > count)
		goto out;
	memset(in, 0, sizeof(in));
	err = sim_dma_read(in, (uint64_t)(uintptr_t)buf + sizeof(hdr),
			   hdr.in < sizeof(in) ? hdr.in : sizeof(in));
	if (err)
		goto out;
	r = (struct ucma_req){ .ch = ch, .fd = fd, .in = in, .in_len = hdr.in, .out_len = hdr.out };
	err = run(hdr.cmd, &r);
	sim_remote_cm_pass(); /* what the command sent to other processes goes out now */
out:
	if (err) {
		sim_info("rdma_cm command %u: %s", count >= sizeof(hdr) ? hdr.cmd : 0, strerror(err));
		errno = err;
		return -1;
	}
	return (ssize_t)count;
}
