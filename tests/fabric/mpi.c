/* Open MPI (Debian openmpi-bin) over UCX on the software device: mpirun starts two ranks of
 * tests/mpi/mpi-check, each through sim/fvsim-run on one fabric, with the UCX PML and UCX
 * limited to the device's transports (it would take shared memory between local ranks
 * otherwise): RC and UD, or DC alone. The ranks exchange messages of 1 byte to 1 MiB and
 * check every byte, run an allreduce and a broadcast, and ping-pong. Bounded by mpirun's own
 * timeout and ours. */
#include <stdio.h>
#include <stdlib.h>

#include <criterion/criterion.h>

#include "sim-proc.h"

#define LIMIT_S 150

static struct simt_fabric fab;

static void join_fabric(void)
{
	simt_fabric_join(&fab, "mpi");
	/* mpirun refuses root unless told twice. */
	setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
	setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
}

static void leave_fabric(void)
{
	simt_fabric_leave(&fab);
}

TestSuite(sim_mpi, .init = join_fabric, .fini = leave_fabric, .timeout = 240);

/*
 * The job over UCX limited to tls; lane: what UCX's log (UCX_LOG_LEVEL=info) must name as the
 * tag lane between the ranks in both, or NULL.
 *
 * At its time limit mpirun says which ranks still run (the tail shows it on failure). mpirun
 * fails a job whose rank exits 0 before mpirun has answered its finalize message, which PMIx
 * waits for only 2 s: on a loaded machine about 1 run in 100-400 (the job took 2 s longer,
 * "exiting improperly"). Each rank's line after MPI_Finalize checks that instead
 * (orte_allowed_exit_without_sync); other exits than 0 still fail it.
 */
static void mpi_job(const char *tls, const char *lane)
{
	char *args[] = { "mpirun", "-np", "2", "--allow-run-as-root", "--oversubscribe",
			 "--timeout", "120", "--report-state-on-timeout", "--mca", "pml", "ucx",
			 "--mca", "btl", "self", "--mca", "orte_allowed_exit_without_sync", "1",
			 "-x", "UCX_TLS", "-x", "UCX_LOG_LEVEL", "-x", "FVSIM_FABRIC", getenv("FVSIM_RUN"),
			 FV_TOP "/" FV_BUILD "/tests/mpi/mpi-check", "200", NULL };
	int rc;

	setenv("UCX_TLS", tls, 1);
	setenv("UCX_LOG_LEVEL", lane ? "info" : "warn", 1);
	rc = simt_finish_within(simt_spawn(args, fab.cli_out), LIMIT_S);
	cr_expect_eq(rc, 0, "mpirun exit %d", rc);
	cr_expect_eq(simt_count_lines(fab.cli_out, "there and back, every byte checked"), 6);
	cr_expect_eq(simt_count_lines(fab.cli_out, "allreduce and broadcast checked"), 1);
	cr_expect_eq(simt_count_lines(fab.cli_out, "1-byte ping-pong, 200 round trips"), 1);
	cr_expect_eq(simt_count_lines(fab.cli_out, "mpi-check: rank 0 finalized"), 1);
	cr_expect_eq(simt_count_lines(fab.cli_out, "mpi-check: rank 1 finalized"), 1);
	if (lane)
		cr_expect_eq(simt_count_lines(fab.cli_out, lane), 2, "each rank's tag lane to the other: %s", lane);
}

Test(sim_mpi, two_ranks_over_ucx)
{
	mpi_job("rc_mlx5,ud_mlx5,self", NULL);
}

/* DC alone, as large jobs run: each rank's DCI addresses the other's DCT in every WQE. */
Test(sim_mpi, two_ranks_over_ucx_dc)
{
	mpi_job("dc_mlx5,self", "ep_cfg[1]: tag(dc_mlx5/mlx5_0:1)");
}
