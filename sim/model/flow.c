/* Flow steering: the rules ibv_create_flow attaches to RAW_PACKET QPs and the matching of
 * a frame against them. A frame is cut into the same filter views the rules carry, so a
 * rule matches when every spec's (view & mask) equals its value. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "../common/be.h"
#include "../common/frame.h"
#include "../fabric/owners.h"
#include "model.h"
#include "world.h"

/* The filter views of one frame; a view is absent (size 0) when the frame lacks the
 * layer. Layouts as struct sim_flow_spec describes. */
struct views {
	uint8_t eth[16], ip4[12], ip6[40], l4[4];
	uint16_t l4_type; /* SIM_FLOW_SPEC_TCP/UDP or 0 */
	bool has_ip4, has_ip6, mcast;
};

static void parse(const uint8_t *f, uint32_t len, struct views *v)
{
	struct sim_frame_info fi;

	memset(v, 0, sizeof(*v));
	sim_frame_parse(f, len, &fi);
	if (len < 14)
		return;
	memcpy(v->eth, f, 12); /* dst MAC, src MAC */
	st_be16(v->eth + 12, fi.ethertype);
	if (fi.vlan)
		memcpy(v->eth + 14, f + 14, 2); /* VLAN tag */
	v->mcast = fi.mcast;
	if (fi.ip == 4) {
		const uint8_t *ip = f + fi.l3;

		v->has_ip4 = true;
		memcpy(v->ip4, ip + 12, 8); /* src, dst */
		v->ip4[8] = ip[9];
		v->ip4[9] = ip[1]; /* TOS */
		v->ip4[10] = ip[8]; /* TTL */
		v->ip4[11] = ip[6] >> 5; /* flags */
	} else if (fi.ip == 6) {
		const uint8_t *ip = f + fi.l3;

		v->has_ip6 = true;
		memcpy(v->ip6, ip + 8, 32); /* src, dst */
		st_be32(v->ip6 + 32, ld_be32(ip) & 0xfffff); /* flow label */
		v->ip6[36] = ip[6];
		v->ip6[37] = (uint8_t)(ld_be32(ip) >> 20); /* traffic class */
		v->ip6[38] = ip[7];
	}
	if (fi.l4) {
		v->l4_type = fi.proto == SIM_PROTO_TCP ? SIM_FLOW_SPEC_TCP : SIM_FLOW_SPEC_UDP;
		memcpy(v->l4, f + fi.l4 + 2, 2); /* dst port first, as the filter has it */
		memcpy(v->l4 + 2, f + fi.l4, 2);
	}
}

static const uint8_t *view_of(const struct views *v, uint16_t type, uint16_t *size)
{
	switch (type) {
	case SIM_FLOW_SPEC_ETH:
		*size = sizeof(v->eth);
		return v->eth;
	case SIM_FLOW_SPEC_IPV4:
		*size = sizeof(v->ip4);
		return v->has_ip4 ? v->ip4 : NULL;
	case SIM_FLOW_SPEC_IPV6:
		*size = sizeof(v->ip6);
		return v->has_ip6 ? v->ip6 : NULL;
	case SIM_FLOW_SPEC_TCP:
	case SIM_FLOW_SPEC_UDP:
		*size = sizeof(v->l4);
		return v->l4_type == type ? v->l4 : NULL;
	default:
		return NULL;
	}
}

static bool matches(const struct sim_flow *f, const struct views *v)
{
	for (int i = 0; i < f->nspecs; i++) {
		const struct sim_flow_spec *s = &f->spec[i];
		uint16_t size;
		const uint8_t *view = view_of(v, s->type, &size);

		if (!view)
			return false;
		for (uint16_t b = 0; b < s->size && b < size; b++)
			if ((view[b] & s->mask[b]) != s->val[b])
				return false;
	}
	return true;
}

/* Rules of this process: while it has any, the other processes of a fabric send it their
 * frames. */
static unsigned nflows;

static void count_rules(int delta)
{
	bool was = nflows > 0;

	nflows = (unsigned)((int)nflows + delta);
	if (sim_fabric_on() && was != (nflows > 0))
		sim_fabric_eth_listen(nflows > 0);
}

int sim_flow_create(const struct sim_flow *tmpl, struct sim_flow **out)
{
	struct sim_flow *f = malloc(sizeof(*f));

	if (!f)
		return ENOMEM;
	*f = *tmpl;
	for (int i = 0; i < f->nspecs; i++)
		for (int b = 0; b < f->spec[i].size; b++)
			f->spec[i].val[b] &= f->spec[i].mask[b];
	sim_list_add_tail(&f->qp->flows, &f->link);
	count_rules(1);
	*out = f;
	return 0;
}

int sim_flow_destroy(struct sim_flow *f)
{
	sim_list_del(&f->link);
	free(f);
	count_rules(-1);
	return 0;
}

static bool can_receive(const struct sim_qp *qp)
{
	return qp->state == IBV_QPS_RTR || qp->state == IBV_QPS_RTS ||
	       qp->state == IBV_QPS_SQD || qp->state == IBV_QPS_SQE;
}

/* A rule that matches a frame, and whose QP it names. */
struct hit {
	struct sim_qp *qp;
	uint8_t type;
	uint16_t priority;
};

#define MAX_HITS 256

/* Every matching rule of every QP able to receive; at most MAX_HITS. */
static int find_hits(const struct views *v, struct hit *h)
{
	struct sim_list *q, *qt, *l, *lt;
	int n = 0;

	sim_list_for_each_safe(q, qt, &sim_world.qps) {
		struct sim_qp *qp = sim_container_of(q, struct sim_qp, link);

		if (qp->type != IBV_QPT_RAW_PACKET || !can_receive(qp))
			continue;
		sim_list_for_each_safe(l, lt, &qp->flows) {
			struct sim_flow *f = sim_container_of(l, struct sim_flow, link);

			if (n < MAX_HITS && matches(f, v))
				h[n++] = (struct hit){ qp, f->type, f->priority };
		}
	}
	return n;
}

/* Adds the QPs of the hits of this type (NORMAL: only at priority prio), each once. */
static int collect(const struct hit *h, int nh, uint8_t type, int prio, struct sim_qp **out,
		   int n, int max)
{
	for (int i = 0; i < nh; i++) {
		bool dup = false;

		if (h[i].type != type || (prio >= 0 && h[i].priority != prio))
			continue;
		for (int j = 0; j < n && !dup; j++)
			dup = out[j] == h[i].qp;
		if (!dup && n < max)
			out[n++] = h[i].qp;
	}
	return n;
}

int sim_flow_steer(const uint8_t *frame, uint32_t len, struct sim_qp **out, int max)
{
	static struct hit h[MAX_HITS]; /* under the world lock */
	struct views v;
	int nh, n = 0, prio = -1;

	parse(frame, len, &v);
	nh = find_hits(&v, h);
	for (int i = 0; i < nh; i++)
		if (h[i].type == IBV_FLOW_ATTR_NORMAL && (prio < 0 || h[i].priority < prio))
			prio = h[i].priority;
	if (prio >= 0)
		n = collect(h, nh, IBV_FLOW_ATTR_NORMAL, prio, out, n, max);
	if (!n && v.mcast)
		n = collect(h, nh, IBV_FLOW_ATTR_MC_DEFAULT, -1, out, n, max);
	if (!n)
		n = collect(h, nh, IBV_FLOW_ATTR_ALL_DEFAULT, -1, out, n, max);
	return collect(h, nh, IBV_FLOW_ATTR_SNIFFER, -1, out, n, max);
}
