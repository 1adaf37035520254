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

/*
 * Milliseconds since t0 (CLOCK_MONOTONIC). Waits are timed by it, not by a count of sleeps: a
 * signal cuts a sleep short (the software device's poller tick does, in a process that set up
 * a CQ), and counted sleeps then end a wait early.
 */
static inline long simt_ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* The programs simt_spawn started (pid, name, output file), for simt_finish_within to show
 * the output of one that failed; add a program with name set, find one with name NULL. */
struct simt_child {
	pid_t pid;
	char name[32], out[96];
};

static inline const struct simt_child *simt_child(pid_t pid, const char *name, const char *out)
{
	static struct simt_child kids[16];
	static unsigned next;
	struct simt_child *k;

	if (!name) {
		for (unsigned i = 0; i < 16; i++)
			if (kids[i].pid == pid)
				return &kids[i];
		return NULL;
	}
	k = &kids[next++ % 16];
	k->pid = pid;
	snprintf(k->name, sizeof(k->name), "%.31s", name);
	snprintf(k->out, sizeof(k->out), "%.95s", out);
	return k;
}

#define SIMT_TAIL_BYTES 2048

/* Puts the end of a program's output file in the test's log, each line as "[OUT ] | line"
 * (tools/test-summary.sh shows them with Criterion's): the tests delete these files, and a
 * program that fails in CI would otherwise leave no trace of why. what says which program
 * and how it ended. Plain stderr: a Criterion warning would make the whole binary exit 1. */
static inline void simt_show_output(const char *what, const char *path)
{
	char buf[SIMT_TAIL_BYTES + 1], msg[4 * SIMT_TAIL_BYTES + 256], *s, *d = msg;
	FILE *f = fopen(path, "r");
	long size = -1, from = 0;
	size_t n = 0;

	if (f && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > SIMT_TAIL_BYTES)
		from = size - SIMT_TAIL_BYTES;
	if (f && fseek(f, from, SEEK_SET) == 0)
		n = fread(buf, 1, SIMT_TAIL_BYTES, f);
	if (f)
		fclose(f);
	buf[n] = 0;
	s = buf;
	if (from > 0 && strchr(s, '\n'))
		s = strchr(s, '\n') + 1;	/* from the first whole line */
	d += snprintf(msg, 256, "[OUT ] %.96s; %.96s (%ld bytes)%s:\n", what, path, size,
		      !f ? ", missing" : from ? ", its end" : "");
	for (bool bol = true; *s && d < msg + sizeof(msg) - 12; s++) {
		if (bol)
			d += sprintf(d, "[OUT ] | ");
		*d++ = *s;
		bol = *s == '\n';
	}
	if (d > msg && d[-1] != '\n')
		*d++ = '\n';
	/* One write, so the lines of tests running at once (--jobs) do not interleave. */
	if (write(STDERR_FILENO, msg, (size_t)(d - msg)) < 0)
		return;
}

/* Starts `fvsim-run ARGS...` with stdout and stderr to the file out; returns its pid, which
 * is also the process group of the program and whatever it starts (simt_finish_within). */
static inline pid_t simt_spawn(char *const args[], const char *out)
{
	const char *runner = getenv("FVSIM_RUN");
	char *argv[32];
	int n = 0;
	pid_t pid;

	cr_assert(runner, "run through sim/fvsim-run");
	argv[n++] = (char *)runner;
	for (int i = 0; args[i] && n < 31; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		FILE *f = freopen(out, "w", stdout);

		if (!f || dup2(1, 2) < 0 || setpgid(0, 0) < 0)
			_exit(126);
		unsetenv("LD_PRELOAD");
		execv(runner, argv);
		_exit(127);
	}
	simt_child(pid, args[0], out);
	return pid;
}

/* Its exit status (128 + signal if killed); after secs seconds it is killed (137). A program
 * simt_spawn started that exits other than 0 gets its output shown (simt_show_output). Then
 * what is left of its process group is killed: a launcher killed at its limit (mpirun) or one
 * that exited before its children would leave them spinning on the CPUs the rest of the
 * suite needs. */
static inline int simt_finish_within(pid_t pid, int secs)
{
	const struct simt_child *k = simt_child(pid, NULL, NULL);
	char what[96];
	int status, rc = -1;
	bool late = false;
	struct timespec t0, nap = { 0, 10 * 1000 * 1000 };

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (rc < 0 && simt_ms_since(&t0) < secs * 1000L) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		cr_assert_geq(r, 0);
		if (r == pid)
			rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		else
			nanosleep(&nap, NULL);
	}
	if (rc < 0) {
		late = true;
		kill(k ? -pid : pid, SIGKILL);
		cr_assert_eq(waitpid(pid, &status, 0), pid);
		rc = 128 + SIGKILL;
	}
	if (k)
		kill(-pid, SIGKILL);	/* the group outlives its leader while a member lives */
	if (rc && k) {
		snprintf(what, sizeof(what), "%s (pid %d) exit %d%s", k->name, (int)pid, rc,
			 late ? ", killed at its time limit" : "");
		simt_show_output(what, k->out);
	}
	return rc;
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
