/* The methods the ioctl() channel answers, declared the way the kernel's uverbs ioctl
 * framework declares them: per method, the attributes it takes (pointer in or out,
 * inline constant, object handle, new fd), whether each is mandatory and how long it may
 * be. ioctl.c checks a call against this before the handler runs, in the kernel's order
 * (uverbs_ioctl.c): unknown mandatory attribute EPROTONOSUPPORT (unknown optional ones
 * are ignored), duplicate EINVAL, bad length or reserved bits EINVAL, a handle that names
 * nothing ENOENT or another type EINVAL, a mandatory attribute missing EINVAL. */
#ifndef FVSIM_IOCTL_H
#define FVSIM_IOCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/rdma_user_ioctl_cmds.h>

struct sim_ctx;

enum sim_attr_kind {
	SIM_ATTR_PTR_OUT = 1, /* data points at len bytes the method writes */
	SIM_ATTR_PTR_IN, /* len bytes the method reads: inline in data up to 8, else at data */
	SIM_ATTR_CONST_IN, /* an integer inline in data */
	SIM_ATTR_IDR_READ, /* data is the handle of an existing object of type uobj */
	SIM_ATTR_IDR_NEW, /* the method creates an object; its handle goes back in data */
	SIM_ATTR_IDR_DESTROY, /* data is the handle of the object the method destroys */
	SIM_ATTR_FD_NEW, /* the method opens an fd; its number goes back in data */
	SIM_ATTR_FD_COMP, /* data is a completion-channel fd of the context */
	SIM_ATTR_FD_ASYNC, /* data is an async-event fd of the context */
};

struct sim_attr_spec {
	uint16_t id;
	uint8_t kind;
	bool mandatory;
	uint8_t uobj; /* IDR kinds: SIM_UOBJ_* */
	uint16_t min_len, max_len; /* PTR_* and CONST_IN lengths accepted */
};

#define SIM_IOCTL_ATTRS 18

struct sim_bundle;

struct sim_ioctl_method {
	uint16_t object, method;
	const char *name;
	int (*fn)(struct sim_bundle *b);
	struct sim_attr_spec attr[SIM_IOCTL_ATTRS]; /* ends at the first id-0 kind-0 entry */
};

/* One call being answered: the caller's attribute array (copied in; data written back
 * through its user address) and, per spec entry, which attribute filled it. */
struct sim_bundle {
	struct sim_ctx *ctx;
	const struct sim_ioctl_method *m;
	uint64_t uattrs; /* user address of the attribute array */
	struct ib_uverbs_attr *attr;
	int at[SIM_IOCTL_ATTRS]; /* index into attr, -1 if absent */
	void *obj[SIM_IOCTL_ATTRS]; /* IDR_READ/IDR_DESTROY: the object looked up */
};

/* The methods, one table per family (ioctl_ctx.c, ioctl_obj.c, ioctl_uar.c). */
extern const struct sim_ioctl_method sim_ioctl_ctx_methods[];
extern const struct sim_ioctl_method sim_ioctl_obj_methods[];
extern const struct sim_ioctl_method sim_ioctl_uar_methods[];
extern const struct sim_ioctl_method sim_ioctl_create_methods[];

/* For handlers. */
bool sim_ioctl_has(const struct sim_bundle *b, uint16_t id);
size_t sim_ioctl_len(const struct sim_bundle *b, uint16_t id); /* 0 if absent */
void *sim_ioctl_obj(const struct sim_bundle *b, uint16_t id);
uint64_t sim_ioctl_const(const struct sim_bundle *b, uint16_t id);
uint32_t sim_ioctl_handle(const struct sim_bundle *b, uint16_t id);
/* A PTR_IN attribute's bytes: min(n, its length) into p, the rest of p zeroed. 0, EFAULT,
 * or ENOENT if the caller did not pass it. */
int sim_ioctl_read(const struct sim_bundle *b, uint16_t id, void *p, size_t n);
/* Copies min(n, the attribute's length) bytes out and flags the attribute as written,
 * as uverbs_copy_to(): 0, EFAULT, or ENOENT if the caller did not pass it. _zero also
 * clears what the caller's buffer has past n (uverbs_copy_to_struct_or_zero). */
int sim_ioctl_copy_to(struct sim_bundle *b, uint16_t id, const void *p, size_t n);
int sim_ioctl_copy_to_zero(struct sim_bundle *b, uint16_t id, const void *p, size_t n);
/* Writes a new object's handle or fd into the attribute's data: 0 or EFAULT. */
int sim_ioctl_set_id(struct sim_bundle *b, uint16_t id, int64_t value);


#endif
