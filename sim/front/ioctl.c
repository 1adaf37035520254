/* The uverbs ioctl() channel (RDMA_VERBS_IOCTL). It answers the methods that exist only
 * as ioctls and that importing a context needs (ioctl.h; the handlers in ioctl_*.c); any
 * other method gets EPROTONOSUPPORT, as from a kernel that lacks it: libibverbs then
 * marks that method unsupported and falls back to the write() command for it
 * (cmd_fallback.c); methods without a write() form (DevX, most mlx5dv objects) fail with
 * EPROTONOSUPPORT or EOPNOTSUPP, the errnos callers treat as "not supported here".
 * The checks run in the kernel's order (uverbs_ioctl.c: ib_uverbs_ioctl, then
 * ib_uverbs_cmd_verbs, then each attribute, then the handler):
 *   request code other than RDMA_VERBS_IOCTL    ENOTTY
 *   header unreadable                           EFAULT
 *   length > page, or != header + attributes    EINVAL
 *   reserved1/reserved2 not zero                EPROTONOSUPPORT
 *   driver_id not mlx5                          EINVAL
 *   object/method unknown                       EPROTONOSUPPORT
 *   attribute array unreadable                  EFAULT
 *   attributes                                  see ioctl.h */
#include "uverbs.h"

#include <errno.h>
#include <stdlib.h>

#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "../common/log.h"
#include "../engine/dma.h"
#include "../model/world.h"
#include "fdtab.h"
#include "handles.h"
#include "ioctl.h"

#define IOCTL_MAX_LEN 4096 /* the kernel's PAGE_SIZE bound on hdr.length */

static const struct sim_ioctl_method *const tables[] = {
	sim_ioctl_ctx_methods,
	sim_ioctl_obj_methods,
	sim_ioctl_uar_methods,
	sim_ioctl_create_methods,
};

static const struct sim_ioctl_method *find(uint16_t object, uint16_t method)
{
	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (const struct sim_ioctl_method *m = tables[t]; m->fn; m++)
			if (m->object == object && m->method == method)
				return m;
	return NULL;
}

static int spec_index(const struct sim_ioctl_method *m, uint16_t id)
{
	for (int i = 0; i < SIM_IOCTL_ATTRS && m->attr[i].kind; i++)
		if (m->attr[i].id == id)
			return i;
	return -1;
}

/* The object a handle names: ENOENT if none (or a negative id), EINVAL if of another
 * type, as rdma_lookup_get_uobject() answers. */
static int lookup(struct sim_ctx *ctx, uint64_t data, int type, void **out)
{
	int64_t id = (int64_t)data;

	if (id < 0)
		return EINVAL;
	if (id > UINT32_MAX || sim_handle_type(ctx, (uint32_t)id) == SIM_UOBJ_FREE)
		return ENOENT;
	*out = sim_handle_get(ctx, (uint32_t)id, type);
	return *out ? 0 : EINVAL;
}

/* An fd of the context's own of the kind asked for; EBADF otherwise, as the kernel's
 * lookup_get_fd_uobject() answers for a file of another type or another context. */
static int lookup_fd(struct sim_ctx *ctx, uint64_t data, int kind)
{
	int64_t fd = (int64_t)data;
	int k;

	if (fd < 0 || fd > INT32_MAX || sim_fd_lookup((int)fd, &k) != ctx)
		return EBADF;
	return k == kind ? 0 : EBADF;
}

static int check_attr(struct sim_bundle *b, int a)
{
	const struct ib_uverbs_attr *u = &b->attr[a];
	int i = spec_index(b->m, u->attr_id);
	const struct sim_attr_spec *s;

	if (i < 0)
		return (u->flags & UVERBS_ATTR_F_MANDATORY) ? EPROTONOSUPPORT : 0;
	if (b->at[i] >= 0)
		return EINVAL; /* duplicate */
	s = &b->m->attr[i];
	switch (s->kind) {
	case SIM_ATTR_PTR_OUT:
	case SIM_ATTR_PTR_IN:
	case SIM_ATTR_CONST_IN:
		if (u->len < s->min_len || u->len > s->max_len || u->attr_data.reserved)
			return EINVAL;
		break;
	default:
		if (u->attr_data.reserved || u->len)
			return EINVAL;
		if (s->kind == SIM_ATTR_IDR_READ || s->kind == SIM_ATTR_IDR_DESTROY) {
			int err = lookup(b->ctx, u->data, s->uobj, &b->obj[i]);

			if (err)
				return err;
		} else if (s->kind == SIM_ATTR_FD_COMP || s->kind == SIM_ATTR_FD_ASYNC) {
			int err = lookup_fd(b->ctx, u->data,
					    s->kind == SIM_ATTR_FD_COMP ? SIM_FD_COMP : SIM_FD_ASYNC);

			if (err)
				return err;
		}
		break;
	}
	b->at[i] = a;
	return 0;
}

static int run(struct sim_bundle *b, unsigned nattrs)
{
	int err;

	for (unsigned a = 0; a < nattrs; a++)
		if ((err = check_attr(b, (int)a)))
			return err;
	for (int i = 0; i < SIM_IOCTL_ATTRS && b->m->attr[i].kind; i++)
		if (b->m->attr[i].mandatory && b->at[i] < 0)
			return EINVAL;
	return b->m->fn(b);
}

int sim_uverbs_ioctl(struct sim_ctx *ctx, unsigned int req, uint64_t arg)
{
	struct ib_uverbs_ioctl_hdr hdr;
	struct sim_bundle b = { .ctx = ctx };
	size_t alen;
	int err;

	if (req != RDMA_VERBS_IOCTL)
		return ENOTTY;
	if (sim_dma_read(&hdr, arg, sizeof(hdr)))
		return EFAULT;
	if (hdr.length > IOCTL_MAX_LEN ||
	    hdr.length != sizeof(hdr) + (size_t)hdr.num_attrs * sizeof(struct ib_uverbs_attr))
		return EINVAL;
	if (hdr.reserved1 || hdr.reserved2)
		return EPROTONOSUPPORT;
	if (hdr.driver_id != RDMA_DRIVER_MLX5)
		return EINVAL;
	b.m = find(hdr.object_id, hdr.method_id);
	if (!b.m) {
		sim_dbg("ioctl object %#x method %#x: no such method", hdr.object_id,
			hdr.method_id);
		return EPROTONOSUPPORT;
	}
	alen = (size_t)hdr.num_attrs * sizeof(struct ib_uverbs_attr);
	b.uattrs = arg + sizeof(hdr);
	b.attr = malloc(alen ? alen : 1);
	if (!b.attr)
		return ENOMEM;
	for (int i = 0; i < SIM_IOCTL_ATTRS; i++)
		b.at[i] = -1;
	if (sim_dma_read(b.attr, b.uattrs, alen)) {
		free(b.attr);
		return EFAULT;
	}
	sim_lock();
	err = run(&b, hdr.num_attrs);
	sim_unlock();
	free(b.attr);
	if (err)
		sim_info("ioctl %s: %s", b.m->name, strerror(err));
	else
		sim_dbg("ioctl %s done", b.m->name);
	return err;
}

static int at(const struct sim_bundle *b, uint16_t id)
{
	int i = spec_index(b->m, id);

	return i < 0 ? -1 : b->at[i];
}

bool sim_ioctl_has(const struct sim_bundle *b, uint16_t id)
{
	return at(b, id) >= 0;
}

size_t sim_ioctl_len(const struct sim_bundle *b, uint16_t id)
{
	int a = at(b, id);

	return a < 0 ? 0 : b->attr[a].len;
}

void *sim_ioctl_obj(const struct sim_bundle *b, uint16_t id)
{
	int i = spec_index(b->m, id);

	return i < 0 ? NULL : b->obj[i];
}

uint64_t sim_ioctl_const(const struct sim_bundle *b, uint16_t id)
{
	int a = at(b, id);
	uint64_t v = 0;

	/* Inline little-endian bytes, len of them (the machine's order, as the kernel
	 * reads them). */
	if (a >= 0)
		memcpy(&v, &b->attr[a].data, b->attr[a].len < 8 ? b->attr[a].len : 8);
	return v;
}

uint32_t sim_ioctl_handle(const struct sim_bundle *b, uint16_t id)
{
	int a = at(b, id);

	return a < 0 ? 0 : (uint32_t)b->attr[a].data;
}

int sim_ioctl_read(const struct sim_bundle *b, uint16_t id, void *p, size_t n)
{
	int a = at(b, id);
	size_t len;

	memset(p, 0, n);
	if (a < 0)
		return ENOENT;
	len = b->attr[a].len < n ? b->attr[a].len : n;
	if (b->attr[a].len <= sizeof(b->attr[a].data)) {
		memcpy(p, &b->attr[a].data, len);
		return 0;
	}
	return sim_dma_read(p, b->attr[a].data, len) ? EFAULT : 0;
}

/* The caller's copy of attribute a, field at offset off. */
static uint64_t uattr_field(const struct sim_bundle *b, int a, size_t off)
{
	return b->uattrs + (uint64_t)a * sizeof(struct ib_uverbs_attr) + off;
}

static int copy_out(struct sim_bundle *b, uint16_t id, const void *p, size_t n, bool zero)
{
	int a = at(b, id);
	struct ib_uverbs_attr *u;
	size_t len;

	if (a < 0)
		return ENOENT;
	u = &b->attr[a];
	len = u->len;
	if (zero && len > n) {
		uint8_t *z = calloc(1, len);
		int err;

		if (!z)
			return ENOMEM;
		memcpy(z, p, n);
		err = sim_dma_write(u->data, z, len);
		free(z);
		if (err)
			return EFAULT;
	} else if (sim_dma_write(u->data, p, len < n ? len : n)) {
		return EFAULT;
	}
	u->flags |= UVERBS_ATTR_F_VALID_OUTPUT;
	return sim_dma_write(uattr_field(b, a, offsetof(struct ib_uverbs_attr, flags)),
			     &u->flags, sizeof(u->flags)) ? EFAULT : 0;
}

int sim_ioctl_copy_to(struct sim_bundle *b, uint16_t id, const void *p, size_t n)
{
	return copy_out(b, id, p, n, false);
}

int sim_ioctl_copy_to_zero(struct sim_bundle *b, uint16_t id, const void *p, size_t n)
{
	return copy_out(b, id, p, n, true);
}

int sim_ioctl_set_id(struct sim_bundle *b, uint16_t id, int64_t value)
{
	int a = at(b, id);

	if (a < 0)
		return ENOENT;
	b->attr[a].data = (uint64_t)value;
	return sim_dma_write(uattr_field(b, a, offsetof(struct ib_uverbs_attr, data)), &value,
			     sizeof(value)) ? EFAULT : 0;
}
