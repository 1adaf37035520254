/* Two MPI ranks over UCX on the software device (tests/fabric/mpi.c starts them under
 * mpirun): rank 0 sends messages of several sizes, rank 1 checks every byte and sends each
 * back transformed, rank 0 checks that; then a collective (allreduce and broadcast), and a
 * 1-byte ping-pong whose median round trip is printed. Any wrong byte aborts the job. Each
 * rank says when MPI_Finalize has returned. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(const char *what, size_t at)
{
	fprintf(stderr, "mpi-check: %s (byte %zu)\n", what, at);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static uint8_t pattern(size_t i, size_t len, int back)
{
	return (uint8_t)(i * 31 + len + (back ? 0x5a : 0));
}

static void check(const uint8_t *b, size_t len, int back, const char *what)
{
	for (size_t i = 0; i < len; i++)
		if (b[i] != pattern(i, len, back))
			fail(what, i);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 1, 8, 100, 4096, 65536, 1 << 20 };
	int rank, n, peer, iters = argc > 1 ? atoi(argv[1]) : 1000;
	uint8_t *buf = malloc(1 << 20);

	/* Each line as it is printed: mpirun's pipe would hold them all until exit, and a job
	 * killed at its time limit showed nothing of how far it got. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if (n != 2 || !buf || iters < 1)
		fail("needs two ranks and memory", 0);
	peer = !rank;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t len = sizes[s];

		if (rank == 0) {
			for (size_t i = 0; i < len; i++)
				buf[i] = pattern(i, len, 0);
			MPI_Send(buf, (int)len, MPI_BYTE, peer, (int)s, MPI_COMM_WORLD);
			memset(buf, 0, len);
			MPI_Recv(buf, (int)len, MPI_BYTE, peer, (int)s, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			check(buf, len, 1, "echo differs");
		} else {
			memset(buf, 0, len);
			MPI_Recv(buf, (int)len, MPI_BYTE, peer, (int)s, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			check(buf, len, 0, "message differs");
			for (size_t i = 0; i < len; i++)
				buf[i] = pattern(i, len, 1);
			MPI_Send(buf, (int)len, MPI_BYTE, peer, (int)s, MPI_COMM_WORLD);
		}
		if (rank == 0)
			printf("mpi-check: %zu bytes there and back, every byte checked\n", len);
	}

	/* Collectives: the sum of both ranks' vectors, and rank 1's vector to everyone. */
	{
		long mine[64], sum[64], bc[64];

		for (int i = 0; i < 64; i++) {
			mine[i] = (long)(rank + 1) * 1000 + i;
			bc[i] = rank == 1 ? 7 * i + 3 : -1;
		}
		MPI_Allreduce(mine, sum, 64, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
		MPI_Bcast(bc, 64, MPI_LONG, 1, MPI_COMM_WORLD);
		for (int i = 0; i < 64; i++) {
			if (sum[i] != 3000 + 2L * i)
				fail("allreduce differs", (size_t)i);
			if (bc[i] != 7L * i + 3)
				fail("broadcast differs", (size_t)i);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0)
			printf("mpi-check: allreduce and broadcast checked\n");
	}

	/* 1-byte ping-pong: its median round trip. */
	{
		double *rtt = malloc(sizeof(*rtt) * (size_t)iters);
		uint8_t b = 0;

		if (!rtt)
			fail("no memory", 0);
		for (int i = 0; i < iters; i++) {
			double t0 = MPI_Wtime();

			if (rank == 0) {
				b = (uint8_t)i;
				MPI_Send(&b, 1, MPI_BYTE, peer, 99, MPI_COMM_WORLD);
				MPI_Recv(&b, 1, MPI_BYTE, peer, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				if (b != (uint8_t)(i + 1))
					fail("ping-pong byte differs", 0);
			} else {
				MPI_Recv(&b, 1, MPI_BYTE, peer, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				b++;
				MPI_Send(&b, 1, MPI_BYTE, peer, 99, MPI_COMM_WORLD);
			}
			rtt[i] = MPI_Wtime() - t0;
		}
		if (rank == 0) {
			qsort(rtt, (size_t)iters, sizeof(*rtt), cmp_d);
			printf("mpi-check: 1-byte ping-pong, %d round trips, median %.2f us\n", iters,
			       rtt[iters / 2] * 1e6);
		}
		free(rtt);
	}
	MPI_Finalize();
	printf("mpi-check: rank %d finalized\n", rank);
	free(buf);
	return 0;
}
