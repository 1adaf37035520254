/* The stock rdma-core tools see the software device: `fvsim-run ibv_devinfo` lists
 * mlx5_0 with an active InfiniBand port, and FVSIM_DEVICES adds devices. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <infiniband/verbs.h>

#include "sim-util.h"

/* Runs `fvsim-run ARGS...` with a clean LD_PRELOAD (this test binary may itself carry
 * the ASan runtime in it) and returns its standard output. */
static char *run_tool(const char *env, char *const args[])
{
	const char *runner = getenv("FVSIM_RUN");
	static char out[65536];
	size_t len = 0;
	int fd[2], status;
	pid_t pid;

	cr_assert(runner, "FVSIM_RUN unset: run this test through sim/fvsim-run");
	cr_assert_eq(pipe(fd), 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		char *argv[16];
		int n = 0;

		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		unsetenv("LD_PRELOAD");
		if (env)
			putenv((char *)env);
		argv[n++] = (char *)runner;
		for (int i = 0; args[i] && n < 15; i++)
			argv[n++] = args[i];
		argv[n] = NULL;
		execv(runner, argv);
		_exit(127);
	}
	close(fd[1]);
	for (;;) {
		ssize_t r = read(fd[0], out + len, sizeof(out) - 1 - len);

		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd[0]);
	out[len] = 0;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "tool failed: %d\n%s", status, out);
	return out;
}

TestSuite(sim_devinfo, .timeout = 60);

Test(sim_devinfo, lists_mlx5_0)
{
	char *args[] = { "ibv_devinfo", NULL };
	char *out = run_tool(NULL, args);

	cr_expect(strstr(out, "hca_id:\tmlx5_0"), "no mlx5_0 in:\n%s", out);
	cr_expect(strstr(out, "PORT_ACTIVE"), "port not active:\n%s", out);
	cr_expect(strstr(out, "link_layer:\t\tInfiniBand"), "not IB:\n%s", out);
	cr_expect(strstr(out, "vendor_part_id:\t\t\t4119"), "not a ConnectX-5:\n%s", out);
}

Test(sim_devinfo, verbose_shows_caps)
{
	char *args[] = { "ibv_devinfo", "-v", NULL };
	char *out = run_tool(NULL, args);

	cr_expect(strstr(out, "atomic_cap:\t\t\tATOMIC_HCA"), "%s", out);
	cr_expect(strstr(out, "XRC"), "%s", out);
	cr_expect(strstr(out, "GID[  0]:\t\tfe80:0000:0000:0000:0002:c903:00f5:0001"), "%s", out);
}

/* FVSIM_LINK chooses the link layer per port: here port 1 InfiniBand, port 2 Ethernet. */
Test(sim_devinfo, ethernet_port_from_env)
{
	char *args[] = { "ibv_devinfo", "-v", NULL };
	char *out, *p2;

	setenv("FVSIM_PORTS", "2", 1);
	out = run_tool("FVSIM_LINK=ib,eth", args);
	cr_expect(strstr(out, "link_layer:\t\tInfiniBand"), "%s", out);
	p2 = strstr(out, "port:\t2");
	cr_assert(p2, "no port 2:\n%s", out);
	cr_expect(strstr(p2, "link_layer:\t\tEthernet"), "%s", p2);
	cr_expect(strstr(p2, "port_lid:\t\t0\n"), "%s", p2);
	cr_expect(strstr(p2, "GID[  0]:\t\tfe80:0000:0000:0000:0202:c9ff:fef5:0002, RoCE v1"),
		  "%s", p2);
	cr_expect(strstr(p2, "GID[  1]:\t\tfe80::202:c9ff:fef5:2, RoCE v2"), "%s", p2);
}

Test(sim_devinfo, more_devices_from_env)
{
	char *args[] = { "ibv_devices", NULL };
	char *out = run_tool("FVSIM_DEVICES=3", args);

	cr_expect(strstr(out, "mlx5_0"), "%s", out);
	cr_expect(strstr(out, "mlx5_2"), "%s", out);
	cr_expect(!strstr(out, "mlx5_3"), "%s", out);
}

/*
 * Every fvsim-run regenerates the sysfs tree, possibly while other programs read it.
 * libibverbs takes the mtime of class/infiniband/<device> as the device's creation time: if
 * a regeneration of an up-to-date tree changed it, the next ibv_get_device_list() would drop
 * the device and list it anew, at the end (tests/device/devices.c's devices once swapped
 * places so).
 */
Test(sim_devinfo, regenerating_a_current_tree_changes_nothing)
{
	const char *root = getenv("SYSFS_PATH");
	char dir[4096];
	struct stat before, after;
	struct ibv_device **l1, **l2;
	int n1, n2;

	cr_assert(root, "run this test through sim/fvsim-run");
	snprintf(dir, sizeof(dir), "%s/class/infiniband/mlx5_0", root);
	l1 = ibv_get_device_list(&n1);
	cr_assert(l1 && n1 >= 1);
	cr_assert_eq(stat(dir, &before), 0);
	nanosleep(&(struct timespec){ 0, 20 * 1000 * 1000 }, NULL);	/* past the mtime granularity */
	simt_write_sysfs(root);
	cr_assert_eq(stat(dir, &after), 0);
	cr_expect(before.st_mtim.tv_sec == after.st_mtim.tv_sec && before.st_mtim.tv_nsec == after.st_mtim.tv_nsec,
		  "the device directory changed");
	l2 = ibv_get_device_list(&n2);
	cr_assert(l2);
	cr_expect_eq(n2, n1);
	cr_expect_eq(l2[0], l1[0], "libibverbs took mlx5_0 for a new device");
	ibv_free_device_list(l1);
	ibv_free_device_list(l2);
}

/* sysfs cap_mask and QUERY_PORT's port_cap_flags are one PortInfo CapabilityMask. */
Test(sim_devinfo, cap_mask_matches_query_port)
{
	const char *root = getenv("SYSFS_PATH");
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_port_attr pa;
	char path[4096];
	unsigned long mask = 0;
	FILE *f;

	cr_assert(root, "run this test through sim/fvsim-run");
	snprintf(path, sizeof(path), "%s/class/infiniband/mlx5_0/ports/1/cap_mask", root);
	f = fopen(path, "r");
	cr_assert(f, "%s: %s", path, strerror(errno));
	cr_assert_eq(fscanf(f, "%lx", &mask), 1);
	fclose(f);
	list = ibv_get_device_list(NULL);
	cr_assert(list && list[0]);
	ctx = ibv_open_device(list[0]);
	cr_assert(ctx);
	cr_assert_eq(ibv_query_port(ctx, 1, &pa), 0);
	cr_expect_eq(mask, pa.port_cap_flags, "sysfs 0x%lx, QUERY_PORT 0x%x", mask, pa.port_cap_flags);
	cr_expect_eq(pa.port_cap_flags & IBV_PORT_SM, 0, "IsSM, but nothing answers SM MADs");
	ibv_close_device(ctx);
	ibv_free_device_list(list);
}

/* The tree has Linux's PCI layout: class/infiniband/mlx5_0 resolves to the device's
 * directory under its PCI function, two levels below the function, whose vendor and device
 * ids name a ConnectX-5 (UCX looks there before it offers its mlx5 transports). */
Test(sim_devinfo, pci_function_layout)
{
	const char *root = getenv("SYSFS_PATH");
	char path[4096], real[4096], id[32];
	FILE *f;

	cr_assert(root, "run this test through sim/fvsim-run");
	snprintf(path, sizeof(path), "%s/class/infiniband/mlx5_0", root);
	cr_assert(realpath(path, real), "%s: %s", path, strerror(errno));
	cr_assert(strstr(real, "/devices/pci0000:00/0000:03:00.0/infiniband/mlx5_0"), "%s", real);
	strcat(real, "/../../device");
	f = fopen(real, "r");
	cr_assert(f, "%s: %s", real, strerror(errno));
	cr_assert(fgets(id, sizeof(id), f));
	fclose(f);
	cr_expect_str_eq(id, "0x1017\n");
	snprintf(path, sizeof(path), "%s/class/infiniband/mlx5_0/device/vendor", root);
	f = fopen(path, "r");
	cr_assert(f, "%s: %s", path, strerror(errno));
	cr_assert(fgets(id, sizeof(id), f));
	fclose(f);
	cr_expect_str_eq(id, "0x15b3\n");
}
