#include "remote_eth.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "../common/log.h"
#include "../fabric/mailbox.h"
#include "../fabric/segment.h"
#include "eth_rx.h"
#include "now.h"

/* How long a sender waits for a listener's full ring before dropping the frame for it:
 * long enough for a busy receiver's device thread to come round, short enough that a
 * stuck one does not hold the sender's device for long. */
#define FULL_WAIT_NS 200000000ull
#define FULL_NAP_NS 20000L
/* Frames taken per call: the rest wait for the next pass. */
#define SERVE_BUDGET 64

static uint8_t rx_buf[FAB_FRAME_MAX]; /* under the world lock */

int sim_remote_eth_serve(void)
{
	int inbox, n = 0;
	uint32_t len;

	if (!sim_fabric_on() || (inbox = sim_fab_my_proc_if_claimed()) < 0)
		return 0;
	while (n < SERVE_BUDGET && (len = sim_mailbox_take_frame(inbox, rx_buf))) {
		sim_eth_rx(rx_buf, len);
		n++;
	}
	return n;
}

static void to_peer(int inbox, const uint8_t *f, uint32_t len)
{
	struct timespec nap = { 0, FULL_NAP_NS };
	uint64_t t0 = 0;
	int err;

	while ((err = sim_mailbox_send_frame(inbox, f, len)) == EAGAIN) {
		uint64_t now = sim_now_ns();

		if (!t0)
			t0 = now;
		else if (now - t0 > FULL_WAIT_NS)
			break;
		/* The peer may be waiting for room in our ring just the same. */
		if (!sim_remote_eth_serve())
			nanosleep(&nap, NULL);
	}
	if (err)
		sim_info("fabric: frame of %u bytes not delivered to inbox %d: %s", len, inbox,
			 err == EAGAIN ? "its ring stays full" : strerror(err));
}

void sim_remote_eth_send(const uint8_t *f, uint32_t len)
{
	int peers[FAB_PROCS], n;

	if (!sim_fabric_on())
		return;
	n = sim_mailbox_eth_peers(peers, FAB_PROCS);
	for (int i = 0; i < n; i++)
		to_peer(peers[i], f, len);
}
