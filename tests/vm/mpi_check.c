// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mpi_check: two MPI ranks move buffers of several sizes, up to 1 MiB, and
 * check every byte. Rank 0 sends each buffer filled with a pattern of its
 * size and round; rank 1 checks each byte, answers with the buffer's
 * checksum (which rank 0 compares with its own) and sends the buffer back
 * with every byte inverted, which rank 0 checks in turn. Prints "ok" and
 * exits 0 only if every byte of every buffer came through.
 *
 * Usage: mpirun -np 2 mpi_check [ROUNDS]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_SIZE (1 << 20)

static const int sizes[] = { 1, 8, 1000, 4096, 65536, 65537, 300000, MAX_SIZE };
#define NSIZES ((int)(sizeof(sizes) / sizeof(sizes[0])))

static unsigned char pattern(int size, int round, int i)
{
	return (unsigned char)(i * 7 + size * 13 + round * 31 + (i >> 8));
}

static uint64_t checksum(const unsigned char *buf, int len)
{
	uint64_t sum = 1469598103934665603ULL;	/* FNV-1a */
	int i;

	for (i = 0; i < len; i++)
		sum = (sum ^ buf[i]) * 1099511628211ULL;
	return sum;
}

/* The first byte of @buf that is not @invert ^ pattern, or -1. */
static int first_bad(const unsigned char *buf, int size, int round,
		     unsigned char invert)
{
	int i;

	for (i = 0; i < size; i++)
		if (buf[i] != (unsigned char)(invert ^ pattern(size, round, i)))
			return i;
	return -1;
}

static int rank0(unsigned char *buf, int rounds)
{
	uint64_t theirs;
	int r, s, i, bad;

	for (r = 0; r < rounds; r++) {
		for (s = 0; s < NSIZES; s++) {
			int size = sizes[s];

			for (i = 0; i < size; i++)
				buf[i] = pattern(size, r, i);
			MPI_Send(buf, size, MPI_UNSIGNED_CHAR, 1, s, MPI_COMM_WORLD);
			MPI_Recv(&theirs, 1, MPI_UINT64_T, 1, s, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			if (theirs != checksum(buf, size)) {
				printf("round %d, %d B: rank 1's checksum %llx, ours %llx\n",
				       r, size, (unsigned long long)theirs,
				       (unsigned long long)checksum(buf, size));
				return 1;
			}
			for (i = 0; i < size; i++)
				buf[i] = 0;
			MPI_Recv(buf, size, MPI_UNSIGNED_CHAR, 1, s, MPI_COMM_WORLD,
				 MPI_STATUS_IGNORE);
			bad = first_bad(buf, size, r, 0xff);
			if (bad >= 0) {
				printf("round %d, %d B back from rank 1: byte %d is %#x\n",
				       r, size, bad, buf[bad]);
				return 1;
			}
		}
	}
	return 0;
}

static int rank1(unsigned char *buf, int rounds)
{
	MPI_Status st;
	uint64_t sum;
	int r, s, i, n, bad, err = 0;

	for (r = 0; r < rounds; r++) {
		for (s = 0; s < NSIZES; s++) {
			int size = sizes[s];

			for (i = 0; i < size; i++)
				buf[i] = 0;
			MPI_Recv(buf, MAX_SIZE, MPI_UNSIGNED_CHAR, 0, s, MPI_COMM_WORLD, &st);
			MPI_Get_count(&st, MPI_UNSIGNED_CHAR, &n);
			bad = first_bad(buf, size, r, 0);
			if (n != size || bad >= 0) {
				printf("round %d, %d B from rank 0: got %d B, first bad byte %d\n",
				       r, size, n, bad);
				err = 1;
			}
			/* Rank 0 compares: a bad buffer fails there too. */
			sum = checksum(buf, size);
			MPI_Send(&sum, 1, MPI_UINT64_T, 0, s, MPI_COMM_WORLD);
			for (i = 0; i < size; i++)
				buf[i] = (unsigned char)~buf[i];
			MPI_Send(buf, size, MPI_UNSIGNED_CHAR, 0, s, MPI_COMM_WORLD);
			if (err)
				return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	int rank, nranks, rounds = argc > 1 ? atoi(argv[1]) : 2;
	int err, any;
	unsigned char *buf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	buf = malloc(MAX_SIZE);
	if (nranks != 2 || !buf || rounds < 1) {
		if (rank == 0)
			printf("mpi_check: needs 2 ranks, memory and ROUNDS >= 1\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	err = rank == 0 ? rank0(buf, rounds) : rank1(buf, rounds);
	/* A rank that failed stopped early: the other may be stuck. */
	if (err)
		MPI_Abort(MPI_COMM_WORLD, 1);
	MPI_Allreduce(&err, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rank == 0 && !any)
		printf("ok: %d rounds of %d sizes up to %d B, every byte checked both ways\n",
		       rounds, NSIZES, MAX_SIZE);
	free(buf);
	MPI_Finalize();
	return any;
}
