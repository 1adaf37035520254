/* The rdma_cm character device: open, the write() framing, close, stat. */
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
#include "../engine/dma.h"
#include "../engine/remote_cm.h"
#include "../engine/thread.h"
#include "../model/world.h"
#include "fdtab.h"

#define UCMA_NODE "/dev/infiniband/rdma_cm"
#define UCMA_MAJOR 10 /* a misc device */
#define UCMA_MINOR 58
#define UCMA_MAX_IN 512 /* larger than every command struct */

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

/* Kernel ucma_write(): a header { cmd, in, out }, then in bytes of command. */
ssize_t sim_ucma_write(struct cm_chan *ch, int fd, const void *buf, size_t count)
{
	struct rdma_ucm_cmd_hdr hdr;
	uint8_t in[UCMA_MAX_IN];
	struct ucma_req r;
	int err;

	err = EINVAL;
	if (count < sizeof(hdr))
		goto out;
	err = sim_dma_read(&hdr, (uint64_t)(uintptr_t)buf, sizeof(hdr));
	if (err)
		goto out;
	err = EINVAL;
	if (hdr.in + sizeof(hdr) > count)
		goto out;
	memset(in, 0, sizeof(in));
	err = sim_dma_read(in, (uint64_t)(uintptr_t)buf + sizeof(hdr),
			   hdr.in < sizeof(in) ? hdr.in : sizeof(in));
	if (err)
		goto out;
	r = (struct ucma_req){ .ch = ch, .fd = fd, .in = in, .in_len = hdr.in, .out_len = hdr.out };
	err = sim_ucma_cmd(hdr.cmd, &r);
	sim_remote_cm_pass(); /* what the command sent to other processes goes out now */
out:
	if (err) {
		sim_info("rdma_cm command %u: %s", count >= sizeof(hdr) ? hdr.cmd : 0, strerror(err));
		errno = err;
		return -1;
	}
	return (ssize_t)count;
}
