/* Helpers for sim tests that start stock programs on the software device as further
 * processes (through $FVSIM_RUN, the sim/fvsim-run the test itself runs under), each with
 * its output in a file, and wait for them within a time limit. */
#ifndef SIM_PROC_H
#define SIM_PROC_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

/* Starts `fvsim-run ARGS...` with stdout and stderr to the file out; returns its pid. */
static inline pid_t simt_spawn(char *const args[], const char *out)
{
	const char *runner = getenv("FVSIM_RUN");
	char *argv[24];
	int n = 0;
	pid_t pid;

	cr_assert(runner, "run through sim/fvsim-run");
	argv[n++] = (char *)runner;
	for (int i = 0; args[i] && n < 23; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		FILE *f = freopen(out, "w", stdout);

		if (!f || dup2(1, 2) < 0)
			_exit(126);
		unsetenv("LD_PRELOAD");
		execv(runner, argv);
		_exit(127);
	}
	return pid;
}

/* Its exit status (128 + signal if killed); after secs seconds it is killed (137). */
static inline int simt_finish_within(pid_t pid, int secs)
{
	int status;

	for (long ms = 0; ms < secs * 1000L; ms += 10) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		cr_assert_geq(r, 0);
		if (r == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	kill(pid, SIGKILL);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	return 128 + SIGKILL;
}

static inline int simt_finish(pid_t pid)
{
	return simt_finish_within(pid, 3600);
}

/* How many lines of the file contain needle. */
static inline int simt_count_lines(const char *path, const char *needle)
{
	char line[512];
	int n = 0;
	FILE *f = fopen(path, "r");

	cr_assert(f, "%s: no output file", path);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

/* Removes the shared segment of the fabric named name (what sim/fabric/segment.c opens for
 * FVSIM_FABRIC=name), so test fabrics do not outlive their tests. */
static inline void simt_fabric_unlink(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/fvsim-%u-%s", (unsigned)getuid(), name);
	shm_unlink(path);
}

/* A fabric of this test process's own, "<prefix>-<pid>", joined through FVSIM_FABRIC, and the
 * output files of the server and client programs a test starts on it. */
struct simt_fabric {
	char name[64], srv_out[96], cli_out[96];
};

static inline void simt_fabric_join(struct simt_fabric *f, const char *prefix)
{
	int pid = (int)getpid();

	snprintf(f->name, sizeof(f->name), "%s-%d", prefix, pid);
	setenv("FVSIM_FABRIC", f->name, 1);
	snprintf(f->srv_out, sizeof(f->srv_out), "/tmp/fvsim-%s-%d.srv", prefix, pid);
	snprintf(f->cli_out, sizeof(f->cli_out), "/tmp/fvsim-%s-%d.cli", prefix, pid);
}

static inline void simt_fabric_leave(const struct simt_fabric *f)
{
	simt_fabric_unlink(f->name);
	unlink(f->srv_out);
	unlink(f->cli_out);
}

#endif
