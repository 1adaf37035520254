#include "frame.h"

#include <string.h>

#include "be.h"

void sim_frame_parse(const uint8_t *f, uint32_t len, struct sim_frame_info *fi)
{
	uint32_t l3 = 14, l4 = 0;

	memset(fi, 0, sizeof(*fi));
	fi->len = len;
	if (len < 14)
		return;
	fi->mcast = f[0] & 1;
	fi->ethertype = ld_be16(f + 12);
	if (fi->ethertype == 0x8100 && len >= 18) {
		fi->vlan = true;
		fi->ethertype = ld_be16(f + 16);
		l3 = 18;
	}
	if (fi->ethertype == 0x0800 && len >= l3 + 20 && f[l3] >> 4 == 4 &&
	    (f[l3] & 0xf) >= 5 && len >= l3 + (f[l3] & 0xfu) * 4) {
		fi->ip = 4;
		fi->proto = f[l3 + 9];
		l4 = l3 + (f[l3] & 0xfu) * 4;
	} else if (fi->ethertype == 0x86dd && len >= l3 + 40 && f[l3] >> 4 == 6) {
		fi->ip = 6;
		fi->proto = f[l3 + 6];
		l4 = l3 + 40;
	}
	if (!fi->ip)
		return;
	fi->l3 = l3;
	if ((fi->proto == SIM_PROTO_TCP && len >= l4 + 20 && len >= l4 + (f[l4 + 12] >> 4) * 4u) ||
	    (fi->proto == SIM_PROTO_UDP && len >= l4 + 8))
		fi->l4 = l4;
}
