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
struct cm_id;

/* Everything below is called with the CM lock held, except cm_flush, cm_deliver and
 * cm_reap, which take it. */
void cm_lock(void);
void cm_unlock(void);

struct cm_chan *cm_chan_new(int efd); /* efd: the eventfd the user holds; NULL on ENOMEM */
void cm_chan_free(struct cm_chan *ch); /* the file is closed: destroys its ids */

/* The id with this handle in channel ch: NULL with *err ENOENT (no such id) or EINVAL
 * (another file's), as the kernel's ucma lookup answers. */
struct cm_id *cm_id_find(struct cm_chan *ch, uint32_t handle, int *err);

int cm_create_id(struct cm_chan *ch, uint64_t uid, uint16_t ps, uint8_t qp_type,
		 uint32_t *handle);
void cm_destroy_id(struct cm_id *id, uint32_t *events_reported);
/* Moves id (and its queued events) to channel to. */
void cm_migrate_id(struct cm_chan *to, struct cm_id *id, uint32_t *events_reported);

int cm_bind(struct cm_id *id, const struct sockaddr *addr);
int cm_resolve_addr(struct cm_id *id, const struct sockaddr *src, const struct sockaddr *dst);
int cm_resolve_route(struct cm_id *id);
void cm_query_route(const struct cm_id *id, struct rdma_ucm_query_route_resp *r);
void cm_query_addr(const struct cm_id *id, struct rdma_ucm_query_addr_resp *r);
void cm_query_gid(const struct cm_id *id, struct rdma_ucm_query_addr_resp *r);
/* QUERY_PATH: *r, then a path record if room (the caller's response size, less one)
 * holds it whole; *len gets the bytes to copy out. */
void cm_query_path(const struct cm_id *id, struct rdma_ucm_query_path_resp *r, size_t room,
		   size_t *len);
int cm_init_qp_attr(const struct cm_id *id, uint32_t state, struct ib_uverbs_qp_attr *r);

int cm_listen(struct cm_id *id, int backlog);
int cm_connect(struct cm_id *id, const struct rdma_ucm_conn_param *p);
/* p NULL: the active side's ACCEPT after CONNECT_RESPONSE (sends the RTU). */
int cm_accept(struct cm_id *id, uint64_t uid, const struct rdma_ucm_conn_param *p);
/* reason 0: consumer defined, the default. */
int cm_reject(struct cm_id *id, uint8_t reason, const uint8_t *pd, uint8_t len);
int cm_disconnect(struct cm_id *id);
/* optval: the option's bytes, already copied from the caller. */
int cm_set_option(struct cm_id *id, uint32_t level, uint32_t name, const void *optval,
		  size_t optlen);

/* The oldest queued event, or EAGAIN when there is none. */
int cm_get_event(struct cm_chan *ch, struct rdma_ucm_event_resp *r);

/* Between processes of a fabric the engine carries the CM's messages
 * (engine/remote_cm.c); each of these takes the CM lock.
 *   cm_flush    hands each message queued for another process to send(inbox, m): 0 sent,
 *               EAGAIN keep it for later (and stop), another errno drop it (gone);
 *               returns how many left the queue
 *   cm_deliver  a message from another process arrived
 *   cm_reap     connections whose peer process ended hear what its closing file would
 *               have sent */
struct sim_wire_cm;
int cm_flush(int (*send)(int inbox, const struct sim_wire_cm *m));
void cm_deliver(const struct sim_wire_cm *m);
void cm_reap(void);

#endif
