#include "remote_cm.h"

#include <errno.h>
#include <time.h>

#include "../cm/cm.h"
#include "../fabric/mailbox.h"
#include "../fabric/segment.h"

#define REAP_NS 100000000L /* how often connections are checked for ended peers */

static int send_cm(int inbox, const struct sim_wire_cm *m)
{
	return inbox >= 0 && inbox < FAB_PROCS ? sim_mailbox_send_cm(inbox, m) : ESRCH;
}

int sim_remote_cm_pass(void)
{
	static struct timespec last_reap;
	struct sim_wire_cm m;
	struct timespec now;
	int inbox, n;

	if (!sim_fabric_on() || (inbox = sim_mailbox_inbox()) < 0)
		return 0;
	n = cm_flush(send_cm);
	while (sim_mailbox_take_cm(inbox, &m)) {
		cm_deliver(&m);
		n++;
	}
	if (n)
		cm_flush(send_cm); /* the answers to what just arrived */
	clock_gettime(CLOCK_MONOTONIC, &now);
	if ((now.tv_sec - last_reap.tv_sec) * 1000000000L + (now.tv_nsec - last_reap.tv_nsec) >
	    REAP_NS) {
		last_reap = now;
		cm_reap();
	}
	return n;
}
