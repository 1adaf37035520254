/* Writes the sysfs tree libibverbs walks to discover devices (SYSFS_PATH points at it):
 * class/infiniband_verbs/uverbsN names the device and its char device number, and the
 * PCI modalias under class/infiniband/mlx5_N is what makes libmlx5 claim it. */
#include "sysfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/config.h"

static int mkdirs(const char *path)
{
	char tmp[4096];
	size_t n = strlen(path);

	if (n >= sizeof(tmp))
		return ENAMETOOLONG;
	memcpy(tmp, path, n + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return errno;
		*p = '/';
	}
	if (mkdir(tmp, 0755) && errno != EEXIST)
		return errno;
	return 0;
}

/* Whether the file at path holds exactly the n bytes val. */
static int holds(const char *path, const char *val, int n)
{
	char cur[256];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return 0;
	r = read(fd, cur, sizeof(cur));
	close(fd);
	return r == n && !memcmp(cur, val, (size_t)n);
}

/* Each file is written under a temporary name and renamed, so a program reading the tree
 * while another run regenerates it never sees a half-written file. A file that already
 * holds its value is left alone: regenerating a current tree then changes nothing, not even
 * a directory's mtime -- which libibverbs takes as the device's creation time, so a change
 * between two ibv_get_device_list() calls made it drop the device and list it again at the
 * end (another program's fvsim-run, or sim-fabric's other tests, swapped mlx5_0 and mlx5_1). */
static int put(const char *root, const char *rel, const char *fmt, ...)
{
	char path[4096], tmp[4200], val[256];
	va_list ap;
	int fd, n, err = 0;
	char *slash;

	if (snprintf(path, sizeof(path), "%s/%s", root, rel) >= (int)sizeof(path))
		return ENAMETOOLONG;
	slash = strrchr(path, '/');
	*slash = 0;
	err = mkdirs(path);
	*slash = '/';
	if (err)
		return err;
	va_start(ap, fmt);
	n = vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(val))
		return EINVAL;
	if (holds(path, val, n))
		return 0;
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno;
	if (write(fd, val, (size_t)n) != n)
		err = errno ? errno : EIO;
	if (close(fd) && !err)
		err = errno;
	if (!err && rename(tmp, path))
		err = errno;
	if (err)
		unlink(tmp);
	return err;
}

static void guid_str(char *out, size_t len, uint64_t g)
{
	snprintf(out, len, "%04x:%04x:%04x:%04x", (unsigned)(g >> 48) & 0xffff,
		 (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff, (unsigned)g & 0xffff);
}

static int write_port(const char *root, const struct sim_config *cfg, int d, int p)
{
	char dir[256], rel[320], gid[64];
	uint8_t raw[16];
	int err = 0;

	snprintf(dir, sizeof(dir), "class/infiniband/mlx5_%d/ports/%d", d, p);
#define PUT(name, ...)                                                  \
	do {                                                            \
		snprintf(rel, sizeof(rel), "%s/%s", dir, name);         \
		if (!err)                                               \
			err = put(root, rel, __VA_ARGS__);              \
	} while (0)
	PUT("state", "4: ACTIVE\n");
	PUT("phys_state", "5: LinkUp\n");
	PUT("rate", "100 Gb/sec (4X EDR)\n");
	PUT("lid", "0x%x\n", sim_port_lid(d, p, cfg->nports));
	PUT("sm_lid", "0x1\n");
	PUT("sm_sl", "0\n");
	PUT("lid_mask_count", "0\n");
	PUT("cap_mask", "0x%08x\n", SIM_PORT_CAP_FLAGS);
	PUT("link_layer", "InfiniBand\n");
	PUT("pkeys/0", "0xffff\n");
	for (int i = 0; i < SIM_GID_TBL_LEN; i++) {
		char name[32];

		memset(raw, 0, sizeof(raw));
		if (i == 0)
			sim_port_gid(d, p, raw);
		snprintf(gid, sizeof(gid),
			 "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x\n",
			 raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7], raw[8], raw[9],
			 raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]);
		snprintf(name, sizeof(name), "gids/%d", i);
		PUT(name, "%s", gid);
	}
#undef PUT
	return err;
}

static int write_device(const char *root, const struct sim_config *cfg, int d)
{
	char rel[256], guid[32];
	int err = 0;

#define PUT(fmtrel, ...)                                                \
	do {                                                            \
		snprintf(rel, sizeof(rel), fmtrel, d);                  \
		if (!err)                                               \
			err = put(root, rel, __VA_ARGS__);              \
	} while (0)
	PUT("class/infiniband_verbs/uverbs%d/ibdev", "mlx5_%d\n", d);
	PUT("class/infiniband_verbs/uverbs%d/dev", "231:%d\n", 192 + d);
	PUT("class/infiniband_verbs/uverbs%d/abi_version", "1\n");
	guid_str(guid, sizeof(guid), sim_node_guid(d));
	PUT("class/infiniband/mlx5_%d/node_type", "1: CA\n");
	PUT("class/infiniband/mlx5_%d/node_guid", "%s\n", guid);
	PUT("class/infiniband/mlx5_%d/sys_image_guid", "%s\n", guid);
	PUT("class/infiniband/mlx5_%d/node_desc", "fvsim software mlx5 device\n");
	PUT("class/infiniband/mlx5_%d/fw_ver", "%s\n", SIM_FW_VER);
	PUT("class/infiniband/mlx5_%d/hca_type", "MT%d\n", SIM_VENDOR_PART_ID);
	PUT("class/infiniband/mlx5_%d/hw_rev", "0x0\n");
	PUT("class/infiniband/mlx5_%d/board_id", "FVSIM_0000000001\n");
	PUT("class/infiniband/mlx5_%d/device/vendor", "0x15b3\n");
	PUT("class/infiniband/mlx5_%d/device/device", "0x%04x\n", SIM_PCI_DEVICE);
	/* libibverbs matches this with fnmatch against "pci:v000015B3d00001017sv*sd*bc*sc*i*". */
	PUT("class/infiniband/mlx5_%d/device/modalias",
	    "pci:v000015B3d%08Xsv000015B3sd00000008bc02sc07i00\n", SIM_PCI_DEVICE);
#undef PUT
	for (int p = 1; p <= cfg->nports && !err; p++)
		err = write_port(root, cfg, d, p);
	return err;
}

int sim_sysfs_write(const char *root, const struct sim_config *cfg)
{
	int err = put(root, "class/infiniband_verbs/abi_version", "6\n");

	/* librdmacm reads the rdma_cm ABI here when netlink does not answer. */
	if (!err)
		err = put(root, "class/misc/rdma_cm/abi_version", "4\n");

	for (int d = 0; d < cfg->ndev && !err; d++)
		err = write_device(root, cfg, d);
	return err;
}
