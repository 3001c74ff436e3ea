/* thp_frag - fragment memory, then fault huge pages so THP faults compact (live-lab load).
 *
 * USAGE: thp_frag FRAG_MIB [seconds] [pause_us]
 * 1. Fragmenter: touches FRAG_MIB of 4 KiB pages from two interleaved arenas (THP off
 *    for them), frees one arena and mlock()s the other, so free memory is holes of
 *    single pages. With vm.compact_unevictable_allowed=0 compaction cannot move the
 *    locked pages, so it scans and fails again and again (a real compaction stall).
 * 2. Taker (THP_FRAG_TAKE_MIB): holds the remaining free 2 MiB blocks as huge pages, and
 *    again before every faulting round, for blocks freed later by other jobs.
 *    On a host with much free memory the caller first takes most of it as hugetlb pages
 *    (vm.nr_hugepages, see thp-compaction.sh): touching it all would take minutes.
 * 3. Faulter: keeps mapping, touching and unmapping MADV_HUGEPAGE regions: each fault
 *    enters direct compaction (defrag=always) before falling back to small pages.
 *    pause_us (default 0) sleeps between 32 MiB rounds to leave CPU to compaction.
 * Environment: THP_FRAG_MLOCK=1 mlock()s the kept arena; THP_FRAG_TAKE_MIB=N first
 * holds up to N MiB of huge pages (to use up the free 2 MiB blocks), never taking free
 * memory below TAKE_FLOOR_MIB.
 * Prints "ready" on stdout once the faulting phase starts.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define HUGE (2UL << 20)
#define TAKE_FLOOR_MIB 384	/* free memory the taker never goes below (plus one 128 MiB step) */
#define RETAKE_MIB 512		/* blocks held per faulting round, at most */

static long page;

static char *map_region(size_t len, int advice)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("thp_frag: mmap");
		exit(1);
	}
	madvise(p, len, advice);
	return p;
}

static void fragment(size_t len)
{
	char *keep = map_region(len, MADV_NOHUGEPAGE);
	char *drop = map_region(len, MADV_NOHUGEPAGE);

	for (size_t off = 0; off < len; off += page) {
		keep[off] = 1;
		drop[off] = 1;
	}
	munmap(drop, len);
	if (getenv("THP_FRAG_MLOCK") && mlock(keep, len) != 0)
		perror("thp_frag: mlock");
}

static long free_huge_blocks(void)
{
	FILE *f = fopen("/proc/buddyinfo", "r");
	char line[512];
	long blocks = 0;

	while (f && fgets(line, sizeof(line), f)) {
		long n[11];
		char zone[32];
		if (sscanf(line, "Node %*d, zone %31s %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld",
			   zone, &n[0], &n[1], &n[2], &n[3], &n[4], &n[5], &n[6], &n[7], &n[8],
			   &n[9], &n[10]) == 12 && strcmp(zone, "DMA") != 0)
			blocks += n[9] + 2 * n[10];
	}
	if (f)
		fclose(f);
	return blocks;
}

static void touch(char *p, size_t len)
{
	for (size_t off = 0; off < len; off += page)
		p[off] = 1;
}

static long mem_free_mib(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	long kib = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemFree: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib < 0 ? 0 : kib >> 10;
}

/* Hold huge pages until no free 2 MiB block is left (bounded by max_mib), and never below
 * floor_mib of free memory: while other jobs free memory, new blocks keep appearing, THP
 * faults that fall back to small pages eat the holes, and taking on until no block is left
 * drove free memory to zero and the OOM killer picked this process. */
static void take_free_blocks(long max_mib, long step_blocks, long floor_mib)
{
	for (long taken = 0; taken < max_mib / 2 && free_huge_blocks() > 0 &&
	     mem_free_mib() > floor_mib + 128; taken += step_blocks)
		touch(map_region(step_blocks * HUGE, MADV_HUGEPAGE), step_blocks * HUGE);
}

int main(int argc, char **argv)
{
	long frag_mib = argc > 1 ? atol(argv[1]) : 0;
	int seconds = argc > 2 ? atoi(argv[2]) : 60;
	long pause_us = argc > 3 ? atol(argv[3]) : 0;
	time_t end;

	page = sysconf(_SC_PAGESIZE);
	if (frag_mib < 64) {
		fprintf(stderr, "usage: thp_frag FRAG_MIB [seconds] [pause_us]   (FRAG_MIB >= 64)\n");
		return 2;
	}
	fragment((size_t)frag_mib << 20);
	if (getenv("THP_FRAG_TAKE_MIB"))
		take_free_blocks(atol(getenv("THP_FRAG_TAKE_MIB")), 64, TAKE_FLOOR_MIB);
	printf("ready\n");
	fflush(stdout);
	end = time(NULL) + seconds;
	while (time(NULL) < end) {
		char *p;

		/* 2 MiB blocks that appear later (other jobs exiting, memory a lazily initialising
		 * kernel hands over late) would let every fault below map a huge page without
		 * compacting: hold them first, one block at a time so no fallback eats the holes */
		if (getenv("THP_FRAG_TAKE_MIB"))
			take_free_blocks(RETAKE_MIB, 1, TAKE_FLOOR_MIB);
		p = map_region(16 * HUGE, MADV_HUGEPAGE);
		touch(p, 16 * HUGE);
		munmap(p, 16 * HUGE);
		if (pause_us > 0)
			usleep(pause_us);
	}
	return 0;
}
