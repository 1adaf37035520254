/* The uverbs ioctl() channel (RDMA_VERBS_IOCTL), answered as a kernel whose ioctl
 * framework is present but registers no method: every well-formed call gets
 * EPROTONOSUPPORT. libibverbs then marks that one method unsupported and falls back to
 * the write() command for it (cmd_fallback.c); methods without a write() form (DevX,
 * mlx5dv objects, ibv_import_*) fail with EPROTONOSUPPORT or EOPNOTSUPP, the errnos
 * callers treat as "not supported on this kernel".
 * The checks run in the kernel's order (uverbs_ioctl.c: ib_uverbs_ioctl, then
 * ib_uverbs_cmd_verbs):
 *   request code other than RDMA_VERBS_IOCTL    ENOTTY
 *   header unreadable                           EFAULT
 *   length > page, or != header + attributes    EINVAL
 *   reserved1/reserved2 not zero                EPROTONOSUPPORT
 *   driver_id not mlx5                          EINVAL
 *   object/method unknown                       EPROTONOSUPPORT */
#include "uverbs.h"

#include <errno.h>

#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "../common/log.h"
#include "../engine/dma.h"

#define IOCTL_MAX_LEN 4096 /* the kernel's PAGE_SIZE bound on hdr.length */

int sim_uverbs_ioctl(struct sim_ctx *ctx, unsigned int req, uint64_t arg)
{
	struct ib_uverbs_ioctl_hdr hdr;

	(void)ctx;
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
	sim_dbg("ioctl object %u method %u: no such method", hdr.object_id, hdr.method_id);
	return EPROTONOSUPPORT;
}
