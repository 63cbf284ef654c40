// What one kernel launch costs the host, without Python: the C workload of
// bench/trace_overhead.py (c_launch_runtime, c_launch_driver), so the
// tracer's per-launch cost can be read without an interpreter's noise.
// Each repetition launches an empty kernel LAUNCHES times on one stream
// (cudaLaunchKernel as PyTorch does, or cuLaunchKernel as CuPy does) and
// synchronizes; the host time of every batch of 1,000 launches is kept too,
// so that a sampled trace's windows (records on, records off) show as two
// levels. Prints one JSON line like the Python workloads:
//   {"workload": ..., "times_s": [...], "batch_us": [...]}
// Build: nvcc -O2 -arch=sm_90 -o launch_cost bench/launch_cost.cu -lcuda
// Usage: launch_cost runtime|driver [REPS]
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LAUNCHES 20000
#define BATCH 1000

__global__ void empty(float *x) {
	if (x && threadIdx.x == 1024)
		x[0] = 1;
}

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what, int code) {
	fprintf(stderr, "launch_cost: %s failed: %d\n", what, code);
	exit(1);
}

int main(int argc, char **argv) {
	if (argc < 2 || (strcmp(argv[1], "runtime") && strcmp(argv[1], "driver"))) {
		fprintf(stderr, "usage: launch_cost runtime|driver [REPS]\n");
		return 2;
	}
	int driver = !strcmp(argv[1], "driver");
	int reps = argc > 2 ? atoi(argv[2]) : 5;
	if (reps < 1 || reps > 1000) {
		fprintf(stderr, "launch_cost: REPS must be 1 to 1000\n");
		return 2;
	}
	float *x = NULL;
	cudaError_t e = cudaMalloc(&x, 4096);
	if (e != cudaSuccess)
		die("cudaMalloc", e);
	cudaStream_t s;
	if ((e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) != cudaSuccess)
		die("cudaStreamCreate", e);
	CUfunction f = NULL;
	if (driver && (e = cudaGetFuncBySymbol((cudaFunction_t *)&f, (const void *)empty)) != cudaSuccess)
		die("cudaGetFuncBySymbol", e);
	void *args[] = {&x};
	double *times = (double *)calloc(reps, sizeof *times);
	int nb = reps * (LAUNCHES / BATCH);
	double *batch = (double *)calloc(nb, sizeof *batch);
	if (!times || !batch)
		die("calloc", 0);
	for (int r = -1; r < reps; r++) { // r = -1: the warm-up
		double t0 = now(), tb = t0;
		for (int i = 0; i < LAUNCHES; i++) {
			if (driver) {
				CUresult c = cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, (CUstream)s, args, NULL);
				if (c != CUDA_SUCCESS)
					die("cuLaunchKernel", c);
			} else {
				empty<<<1, 32, 0, s>>>(x);
			}
			if ((i + 1) % BATCH == 0) {
				double t = now();
				if (r >= 0)
					batch[r * (LAUNCHES / BATCH) + i / BATCH] = (t - tb) * 1e6;
				tb = t;
			}
		}
		if ((e = cudaStreamSynchronize(s)) != cudaSuccess)
			die("cudaStreamSynchronize", e);
		if ((e = cudaGetLastError()) != cudaSuccess)
			die("launch", e);
		if (r >= 0)
			times[r] = now() - t0;
	}
	printf("{\"workload\": \"c_launch_%s\", \"times_s\": [", argv[1]);
	for (int r = 0; r < reps; r++)
		printf("%s%.9f", r ? ", " : "", times[r]);
	printf("], \"batch_us\": [");
	for (int i = 0; i < nb; i++)
		printf("%s%.2f", i ? ", " : "", batch[i]);
	printf("]}\n");
	fflush(stdout);
	free(times);
	free(batch);
	cudaFree(x);
	cudaStreamDestroy(s);
	return 0;
}
