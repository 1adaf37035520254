/* Writes the sysfs tree libibverbs walks to discover devices (SYSFS_PATH points at it):
 * class/infiniband_verbs/uverbsN names the device and its char device number, and the
 * PCI modalias under class/infiniband/mlx5_N is what makes libmlx5 claim it. As in Linux,
 * class/infiniband/mlx5_N is a link to the device's directory under its PCI function,
 * devices/pci0000:00/0000:BB:00.0/infiniband/mlx5_N, whose device/ links back up to the
 * function with its vendor and device ids: UCX finds the function so (resolving the link
 * and going two levels up), and offers its mlx5 transports only for a known vendor and
 * device id. */
#include "sysfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/config.h"
#include "../common/roce.h"

/* The device's PCI function: domain 0, bus 3 + d, function 0. */
#define SIM_PCI_BUS(d) (3 + (d))
#define SIM_SYSFS_PCI_FN "devices/pci0000:00/0000:%02x:00.0"

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
 * end (another program's fvsim-run, or the other tests of tests/device/devices.c, swapped
 * mlx5_0 and mlx5_1). */
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

/* A symbolic link rel -> target, replaced atomically unless it already points there (a
 * replaced link would change its directory's mtime, see put()). */
static int link_to(const char *root, const char *rel, const char *target)
{
	char path[4096], tmp[4200], cur[4096];
	ssize_t n;
	char *slash;
	int err;

	if (snprintf(path, sizeof(path), "%s/%s", root, rel) >= (int)sizeof(path))
		return ENAMETOOLONG;
	n = readlink(path, cur, sizeof(cur) - 1);
	if (n >= 0 && (size_t)n == strlen(target) && !memcmp(cur, target, (size_t)n))
		return 0;
	slash = strrchr(path, '/');
	*slash = 0;
	err = mkdirs(path);
	*slash = '/';
	if (err)
		return err;
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	unlink(tmp);
	if (symlink(target, tmp))
		return errno;
	if (rename(tmp, path)) {
		err = errno;
		unlink(tmp);
		return err;
	}
	return 0;
}

static void guid_str(char *out, size_t len, uint64_t g)
{
	snprintf(out, len, "%04x:%04x:%04x:%04x", (unsigned)(g >> 48) & 0xffff,
		 (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff, (unsigned)g & 0xffff);
}

static void gid_str(char *out, size_t len, const uint8_t *raw)
{
	snprintf(out, len,
		 "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x\n",
		 raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7], raw[8], raw[9],
		 raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]);
}

/* An InfiniBand port has a LID, an SM and GID 0 from its port GUID; an Ethernet (RoCE)
 * port has neither LID nor SM, and each GID a type and a network interface (gid_attrs/,
 * which libibverbs reads for ibv_query_gid_ex and ibv_query_gid_table). */
static int write_port(const char *root, const struct sim_config *cfg, int d, int p)
{
	struct sim_gid_entry tbl[SIM_GID_TBL_LEN];
	char dir[256], rel[320], gid[64], name[48];
	bool eth = cfg->eth[p];
	int err = 0;

	snprintf(dir, sizeof(dir), SIM_SYSFS_PCI_FN "/infiniband/mlx5_%d/ports/%d", SIM_PCI_BUS(d), d, p);
#define PUT(name, ...)                                                  \
	do {                                                            \
		snprintf(rel, sizeof(rel), "%s/%s", dir, name);         \
		if (!err)                                               \
			err = put(root, rel, __VA_ARGS__);              \
	} while (0)
	PUT("state", "4: ACTIVE\n");
	PUT("phys_state", "5: LinkUp\n");
	PUT("rate", "100 Gb/sec (4X EDR)\n");
	PUT("lid", "0x%x\n", eth ? 0 : sim_port_lid(d, p, cfg->nports));
	PUT("sm_lid", "0x%x\n", eth ? 0 : 1);
	PUT("sm_sl", "0\n");
	PUT("lid_mask_count", "0\n");
	PUT("cap_mask", "0x%08x\n", eth ? SIM_ETH_PORT_CAP_FLAGS : SIM_PORT_CAP_FLAGS);
	PUT("link_layer", "%s\n", eth ? "Ethernet" : "InfiniBand");
	PUT("pkeys/0", "0xffff\n");
	memset(tbl, 0, sizeof(tbl));
	if (eth)
		sim_roce_gids(cfg, d, p, tbl);
	else
		sim_port_gid(d, p, tbl[0].gid);
	for (int i = 0; i < SIM_GID_TBL_LEN; i++) {
		gid_str(gid, sizeof(gid), tbl[i].gid);
		snprintf(name, sizeof(name), "gids/%d", i);
		PUT(name, "%s", gid);
		if (!eth)
			continue;
		/* The kernel fails reads of an unused row's type with EINVAL, which a file
		 * cannot do; libibverbs takes that as v1, so unused rows say v1. */
		snprintf(name, sizeof(name), "gid_attrs/types/%d", i);
		PUT(name, "%s", tbl[i].type == SIM_GID_ROCE_V2 ? "RoCE v2\n" : "IB/RoCE v1\n");
		snprintf(name, sizeof(name), "gid_attrs/ndevs/%d", i);
		PUT(name, "%s%s", tbl[i].ndev, tbl[i].ndev[0] ? "\n" : "");
	}
#undef PUT
	return err;
}

static int write_device(const char *root, const struct sim_config *cfg, int d)
{
	char rel[256], fn[64], ib[128], target[256], guid[32];
	int err = 0;

	snprintf(fn, sizeof(fn), SIM_SYSFS_PCI_FN, SIM_PCI_BUS(d));
	snprintf(ib, sizeof(ib), "%s/infiniband/mlx5_%d", fn, d);
#define PUT(fmtrel, ...)                                                \
	do {                                                            \
		snprintf(rel, sizeof(rel), fmtrel, d);                  \
		if (!err)                                               \
			err = put(root, rel, __VA_ARGS__);              \
	} while (0)
#define PUT_IN(dir, name, ...)                                          \
	do {                                                            \
		snprintf(rel, sizeof(rel), "%s/%s", dir, name);         \
		if (!err)                                               \
			err = put(root, rel, __VA_ARGS__);              \
	} while (0)
	PUT("class/infiniband_verbs/uverbs%d/ibdev", "mlx5_%d\n", d);
	PUT("class/infiniband_verbs/uverbs%d/dev", "231:%d\n", 192 + d);
	PUT("class/infiniband_verbs/uverbs%d/abi_version", "1\n");
	/* The PCI function: ids, class (network controller, InfiniBand), a PCIe 3.0 x16 link. */
	PUT_IN(fn, "vendor", "0x15b3\n");
	PUT_IN(fn, "device", "0x%04x\n", SIM_PCI_DEVICE);
	PUT_IN(fn, "subsystem_vendor", "0x15b3\n");
	PUT_IN(fn, "subsystem_device", "0x0008\n");
	PUT_IN(fn, "class", "0x020700\n");
	/* libibverbs matches this with fnmatch against "pci:v000015B3d00001017sv*sd*bc*sc*i*". */
	PUT_IN(fn, "modalias", "pci:v000015B3d%08Xsv000015B3sd00000008bc02sc07i00\n", SIM_PCI_DEVICE);
	PUT_IN(fn, "current_link_speed", "8.0 GT/s PCIe\n");
	PUT_IN(fn, "current_link_width", "16\n");
	PUT_IN(fn, "max_link_speed", "8.0 GT/s PCIe\n");
	PUT_IN(fn, "max_link_width", "16\n");
	PUT_IN(fn, "numa_node", "-1\n");
	guid_str(guid, sizeof(guid), sim_node_guid(d));
	PUT_IN(ib, "node_type", "1: CA\n");
	PUT_IN(ib, "node_guid", "%s\n", guid);
	PUT_IN(ib, "sys_image_guid", "%s\n", guid);
	PUT_IN(ib, "node_desc", "fvsim software mlx5 device\n");
	PUT_IN(ib, "fw_ver", "%s\n", SIM_FW_VER);
	PUT_IN(ib, "hca_type", "MT%d\n", SIM_VENDOR_PART_ID);
	PUT_IN(ib, "hw_rev", "0x0\n");
	PUT_IN(ib, "board_id", "FVSIM_0000000001\n");
#undef PUT
#undef PUT_IN
	snprintf(rel, sizeof(rel), "%s/device", ib);
	snprintf(target, sizeof(target), "../../../0000:%02x:00.0", SIM_PCI_BUS(d));
	if (!err)
		err = link_to(root, rel, target);
	for (int p = 1; p <= cfg->nports && !err; p++)
		err = write_port(root, cfg, d, p);
	/* Last: the class entry appears once the directory it names is complete. */
	snprintf(rel, sizeof(rel), "class/infiniband/mlx5_%d", d);
	snprintf(target, sizeof(target), "../../%s", ib);
	if (!err)
		err = link_to(root, rel, target);
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
