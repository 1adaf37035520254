/* Flow steering commands: CREATE_FLOW takes the rule's attributes and its specs (each a
 * header, then a value and a mask filter of equal size) as the kernel's uverbs layer
 * checks them; DESTROY_FLOW removes a rule. Matching is the model's (model/flow.c). */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <linux/capability.h>
#include <rdma/ib_user_verbs.h>

#include "../model/model.h"
#include "handles.h"
#include "uverbs.h"

#define MAX_SPECS 10 /* the kernel's IB_FLOW_SPEC_SUPPORT_LAYERS */
#define ATTR_FLAGS_RESERVED 4u /* IB_FLOW_ATTR_FLAGS_RESERVED: DONT_TRAP(2) and below */

bool sim_cap_net_raw(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = { { 0 } };

	if (syscall(SYS_capget, &h, d))
		return false;
	return d[CAP_NET_RAW / 32].effective & (1u << (CAP_NET_RAW % 32));
}

/* The filter bytes the kernel knows per spec type (its ib_uverbs_flow_*_filter). */
static uint16_t known_filter(uint32_t type)
{
	switch (type) {
	case SIM_FLOW_SPEC_ETH: return sizeof(struct ib_uverbs_flow_eth_filter);
	case SIM_FLOW_SPEC_IPV4: return sizeof(struct ib_uverbs_flow_ipv4_filter);
	case SIM_FLOW_SPEC_IPV6: return sizeof(struct ib_uverbs_flow_ipv6_filter);
	case SIM_FLOW_SPEC_TCP:
	case SIM_FLOW_SPEC_UDP: return sizeof(struct ib_uverbs_flow_tcp_udp_filter);
	default: return 0;
	}
}

static bool cleared(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* One spec at p (room bytes left): fills s; EINVAL for a malformed or unknown one. A
 * filter shorter than the kernel's leaves the rest unmatched; a longer one may only
 * carry zeros past it. */
static int parse_spec(const uint8_t *p, size_t room, struct sim_flow_spec *s, uint16_t *used)
{
	struct ib_uverbs_flow_spec_hdr h;
	uint16_t known, fsz;

	if (room < sizeof(h))
		return EINVAL;
	memcpy(&h, p, sizeof(h));
	if (h.size < sizeof(h) || h.size > room || (h.size - sizeof(h)) % 2)
		return EINVAL;
	known = known_filter(h.type);
	if (!known)
		return EINVAL; /* inner (tunnel) specs, actions and other layers */
	fsz = (uint16_t)((h.size - sizeof(h)) / 2);
	if (fsz > known && (!cleared(p + sizeof(h) + known, fsz - known) ||
			    !cleared(p + sizeof(h) + fsz + known, fsz - known)))
		return EINVAL;
	s->type = (uint16_t)h.type;
	s->size = fsz < known ? fsz : known;
	memset(s->val, 0, sizeof(s->val));
	memset(s->mask, 0, sizeof(s->mask));
	memcpy(s->val, p + sizeof(h), s->size);
	memcpy(s->mask, p + sizeof(h) + fsz, s->size);
	*used = h.size;
	return 0;
}

int sim_cmd_create_flow(struct sim_cmd *c)
{
	struct ib_uverbs_create_flow req;
	struct ib_uverbs_create_flow_resp resp = { 0 };
	struct sim_flow tmpl = { 0 }, *f;
	const uint8_t *p;
	size_t left;
	int err;

	CMD_REQ(c, req);
	if (req.comp_mask || c->req_len < sizeof(req))
		return EINVAL;
	if (!sim_cap_net_raw())
		return EPERM;
	if (req.flow_attr.flags >= ATTR_FLAGS_RESERVED ||
	    req.flow_attr.num_of_specs > MAX_SPECS ||
	    req.flow_attr.size > c->req_len - sizeof(req))
		return EINVAL;
	if (req.flow_attr.type > IBV_FLOW_ATTR_SNIFFER)
		return EINVAL;
	tmpl.qp = sim_handle_get(c->ctx, req.qp_handle, SIM_UOBJ_QP);
	if (!tmpl.qp || (tmpl.qp->type != IBV_QPT_RAW_PACKET && tmpl.qp->type != IBV_QPT_UD))
		return EINVAL;
	if (tmpl.qp->type == IBV_QPT_UD)
		return EOPNOTSUPP; /* IPoIB underlay steering is not modelled */
	if (req.flow_attr.port < 1 || req.flow_attr.port > c->ctx->dev->nports ||
	    !c->ctx->dev->port[req.flow_attr.port].eth)
		return EINVAL;
	if (req.flow_attr.num_of_specs > SIM_FLOW_MAX_SPECS)
		return EOPNOTSUPP;
	tmpl.type = (uint8_t)req.flow_attr.type;
	tmpl.port = req.flow_attr.port;
	tmpl.priority = req.flow_attr.priority;
	p = c->req + sizeof(req);
	left = req.flow_attr.size;
	for (int i = 0; i < req.flow_attr.num_of_specs; i++) {
		uint16_t used;

		if ((err = parse_spec(p, left, &tmpl.spec[i], &used)))
			return err;
		p += used;
		left -= used;
		tmpl.nspecs++;
	}
	if (left)
		return EINVAL; /* the specs must fill the declared size exactly */
	err = sim_flow_create(&tmpl, &f);
	if (!err)
		err = sim_handle_bind(c->ctx, SIM_UOBJ_FLOW, f, &f->handle);
	if (err)
		return err;
	resp.flow_handle = f->handle;
	CMD_RESP(c, resp);
	return 0;
}

int sim_cmd_destroy_flow(struct sim_cmd *c)
{
	struct ib_uverbs_destroy_flow req;

	CMD_REQ(c, req);
	if (req.comp_mask)
		return EINVAL;
	return sim_handle_destroy(c->ctx, req.flow_handle, SIM_UOBJ_FLOW);
}
