#include "tso.h"

#include <string.h>

#include "../common/be.h"
#include "../common/config.h"
#include "../common/frame.h"
#include "csum.h"
#include "synd.h"

#define TCP_FIN 0x01
#define TCP_PSH 0x08

/* The segment being built, at most len bytes. Not allocated: a pass may run in a poller's
 * tick, a signal handler (tick.c); passes hold the device lock, so one buffer serves. */
static uint8_t segment[SIM_MAX_TSO];

int sim_tso_split(const uint8_t *f, uint32_t len, uint32_t hdr_sz, uint32_t mss,
		  sim_tso_emit emit)
{
	struct sim_frame_info fi;
	uint32_t payload = len - hdr_sz, seq, off = 0;
	uint16_t id;
	uint8_t *seg;

	sim_frame_parse(f, hdr_sz, &fi);
	if (!mss || hdr_sz > len || len > SIM_MAX_TSO || !fi.l4 || fi.proto != SIM_PROTO_TCP ||
	    fi.l4 + (f[fi.l4 + 12] >> 4) * 4u != hdr_sz)
		return SYND_LOC_QP_OP;
	seg = segment;
	seq = ld_be32(f + fi.l4 + 4);
	id = fi.ip == 4 ? ld_be16(f + fi.l3 + 4) : 0;
	do {
		uint32_t n = payload - off < mss ? payload - off : mss;
		bool last = off + n == payload;
		struct sim_frame_info sfi = fi;
		uint8_t *ip = seg + fi.l3, *tcp = seg + fi.l4;

		memcpy(seg, f, hdr_sz);
		memcpy(seg + hdr_sz, f + hdr_sz + off, n);
		if (fi.ip == 4) {
			st_be16(ip + 2, (uint16_t)(hdr_sz - fi.l3 + n));
			st_be16(ip + 4, id++);
		} else {
			st_be16(ip + 4, (uint16_t)(hdr_sz - fi.l3 - 40 + n));
		}
		st_be32(tcp + 4, seq + off);
		if (!last)
			tcp[13] &= (uint8_t)~(TCP_FIN | TCP_PSH);
		sfi.len = hdr_sz + n;
		sim_csum_fill(seg, &sfi, true, true);
		emit(seg, hdr_sz + n);
		off += n;
	} while (off < payload);
	return SYND_OK;
}
