/* TCP segmentation offload: one large send becomes frames of at most mss payload bytes,
 * each with the inlined header replicated and fixed up. */
#ifndef FVSIM_TSO_H
#define FVSIM_TSO_H

#include <stdint.h>

/* Each segment built goes to emit (which may not keep the pointer past the call). */
typedef void (*sim_tso_emit)(const uint8_t *frame, uint32_t len);

/* f: the whole frame, whose first hdr_sz bytes are the Ethernet + IP + TCP header.
 * Per segment: IPv4 total length and identification (+1 per segment), or IPv6 payload
 * length; TCP sequence number advanced by the payload before it; FIN and PSH only on
 * the last segment; IPv4 and TCP checksums computed. Returns SYND_OK, or
 * SYND_LOC_QP_OP when the header is no Ethernet/IP/TCP header or mss is 0. */
int sim_tso_split(const uint8_t *f, uint32_t len, uint32_t hdr_sz, uint32_t mss,
		  sim_tso_emit emit);

#endif
