/* tlb_storm - TLB-shootdown storm (live-lab load).
 *
 * USAGE: tlb_storm [seconds] [pages]
 * One thread per online CPU, each pinned, all in the same mm. Each keeps faulting a
 * small private region in and zapping it with madvise(MADV_DONTNEED), so every zap must flush the TLB of the other CPUs running this mm: the kernel
 * time lands in flush_tlb_mm_range / smp_call_function_many_cond.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile int stop;
static long page;
static long pages = 1;

static void pin_to(long cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *zapper(void *arg)
{
	long cpu = (long)arg;
	size_t len = pages * page;
	size_t pmd = 2UL << 20;	/* own page table per thread: no PTE-lock contention */
	char *area = mmap(NULL, len + 2 * pmd, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *region = (char *)(((unsigned long)area + pmd) & ~(pmd - 1));

	pin_to(cpu);
	while (!stop) {
		for (long p = 0; p < pages; p++)
			region[p * page] = 1;
		madvise(region, len, MADV_DONTNEED);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 60;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t tids[256];
	int n = 0;

	page = sysconf(_SC_PAGESIZE);
	if (argc > 2)
		pages = atol(argv[2]);
	if (cpus < 2) {
		fprintf(stderr, "tlb_storm: needs >= 2 CPUs (shootdowns only go to other CPUs)\n");
		return 2;
	}
	if (cpus > 256)
		cpus = 256;
	for (long c = 0; c < cpus; c++) {
		pthread_create(&tids[n++], NULL, zapper, (void *)c);
	}
	sleep(seconds);
	stop = 1;
	for (int t = 0; t < n; t++)
		pthread_join(tids[t], NULL);
	return 0;
}
