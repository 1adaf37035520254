/* The connection manager behind /dev/infiniband/rdma_cm: what the kernel's rdma_cm and
 * IB CM keep per rdma_cm_id (address, port, route, the connection handshake and its
 * state) and the events they report. The front (front/ucma*.c) decodes the write()
 * commands and calls these; each returns 0 or the positive errno the kernel reports.
 *
 * An event channel is one open rdma_cm file. Its events wait in a queue; an eventfd
 * counts them (one unit per queued event, taken under the CM lock whenever one leaves
 * the queue), so poll/select/epoll on the user's fd see them, and a blocking reader
 * sleeps in poll() until one arrives. */
#ifndef FVSIM_CM_H
#define FVSIM_CM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <rdma/rdma_user_cm.h>

struct cm_chan;

struct cm_chan *cm_chan_new(int efd); /* efd: the eventfd the user holds; NULL on ENOMEM */
void cm_chan_free(struct cm_chan *ch); /* the file is closed: destroys its ids */
int cm_chan_efd(const struct cm_chan *ch);

int cm_create_id(struct cm_chan *ch, uint64_t uid, uint16_t ps, uint8_t qp_type,
		 uint32_t *handle);
int cm_destroy_id(struct cm_chan *ch, uint32_t handle, uint32_t *events_reported);
/* Moves an id (and its queued events) from channel from to channel to. */
int cm_migrate_id(struct cm_chan *to, struct cm_chan *from, uint32_t handle,
		  uint32_t *events_reported);

int cm_bind(struct cm_chan *ch, uint32_t handle, const struct sockaddr *addr);
int cm_resolve_addr(struct cm_chan *ch, uint32_t handle, const struct sockaddr *src,
		    const struct sockaddr *dst);
int cm_resolve_route(struct cm_chan *ch, uint32_t handle);
int cm_query_route(struct cm_chan *ch, uint32_t handle, struct rdma_ucm_query_route_resp *r);
int cm_query_addr(struct cm_chan *ch, uint32_t handle, struct rdma_ucm_query_addr_resp *r);
int cm_query_gid(struct cm_chan *ch, uint32_t handle, struct rdma_ucm_query_addr_resp *r);
/* QUERY_PATH: *r and up to max path records after it; *len gets the bytes to copy. */
int cm_query_path(struct cm_chan *ch, uint32_t handle, struct rdma_ucm_query_path_resp *r,
		  size_t room, size_t *len);
int cm_init_qp_attr(struct cm_chan *ch, uint32_t handle, uint32_t state,
		    struct ib_uverbs_qp_attr *r);

int cm_listen(struct cm_chan *ch, uint32_t handle, int backlog);
int cm_connect(struct cm_chan *ch, uint32_t handle, const struct rdma_ucm_conn_param *p);
/* p NULL: the active side's ACCEPT after CONNECT_RESPONSE (sends the RTU). */
int cm_accept(struct cm_chan *ch, uint32_t handle, uint64_t uid,
	      const struct rdma_ucm_conn_param *p);
/* reason 0: consumer defined, the default. */
int cm_reject(struct cm_chan *ch, uint32_t handle, uint8_t reason, const uint8_t *pd,
	      uint8_t len);
int cm_disconnect(struct cm_chan *ch, uint32_t handle);
int cm_notify(struct cm_chan *ch, uint32_t handle, uint32_t event);
/* optval: the option's bytes, already copied from the caller. */
int cm_set_option(struct cm_chan *ch, uint32_t handle, uint32_t level, uint32_t name,
		  const void *optval, size_t optlen);

/* The oldest queued event, or EAGAIN when there is none. */
int cm_get_event(struct cm_chan *ch, struct rdma_ucm_event_resp *r);

#endif
