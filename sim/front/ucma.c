/* The rdma_cm character device: open, close, stat and the fd -> channel table; write()
 * is ucma_cmd.c. */
#include "ucma.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <netinet/in.h>
#include <rdma/rdma_user_cm.h>

#include "../cm/cm.h"
#include "../common/log.h"
#include "../common/sys.h"
#include "../engine/remote_cm.h"
#include "../engine/thread.h"
#include "../model/world.h"
#include "fdtab.h"

#define UCMA_NODE "/dev/infiniband/rdma_cm"
#define UCMA_MAJOR 10 /* a misc device */
#define UCMA_MINOR 58

static struct cm_chan *chans[SIM_FD_MAX];

bool sim_ucma_path(const char *path)
{
	return path && !strcmp(path, UCMA_NODE);
}

int sim_ucma_open(int flags)
{
	int fd = eventfd(0, EFD_SEMAPHORE | ((flags & O_CLOEXEC) ? EFD_CLOEXEC : 0) |
				    ((flags & O_NONBLOCK) ? EFD_NONBLOCK : 0));
	struct cm_chan *ch;

	if (fd < 0)
		return -1;
	if (fd >= SIM_FD_MAX || !(ch = cm_chan_new(fd))) {
		sim_sys_close(fd);
		errno = fd >= SIM_FD_MAX ? EMFILE : ENOMEM;
		return -1;
	}
	__atomic_store_n(&chans[fd], ch, __ATOMIC_RELEASE);
	/* The device thread carries CM messages between processes of a fabric. */
	sim_world_init();
	sim_thread_ensure();
	sim_dbg("opened rdma_cm as fd %d", fd);
	return fd;
}

struct cm_chan *sim_ucma_chan(int fd)
{
	return fd >= 0 && fd < SIM_FD_MAX ? __atomic_load_n(&chans[fd], __ATOMIC_ACQUIRE) : NULL;
}

void sim_ucma_close(int fd)
{
	struct cm_chan *ch = sim_ucma_chan(fd);

	if (!ch)
		return;
	__atomic_store_n(&chans[fd], NULL, __ATOMIC_RELEASE);
	cm_lock();
	cm_chan_free(ch);
	cm_unlock();
	sim_remote_cm_pass();
	sim_dbg("closed rdma_cm fd %d", fd);
}

void sim_ucma_stat(struct stat *st)
{
	st->st_mode = S_IFCHR | 0666;
	st->st_rdev = makedev(UCMA_MAJOR, UCMA_MINOR);
}
