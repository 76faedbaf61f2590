/*
 * malloc_conf.c - the options of jemalloc, the allocator of the ksched binary and of the
 * micro-benchmarks (read by jemalloc before MALLOC_CONF, which still overrides them).
 *
 * thp:always backs jemalloc's extents with transparent huge pages (the kernel's "madvise"
 * mode is enough). A scheduling cycle's commit path allocates small objects without pause
 * (snapshot records, pod entries, queue nodes); in 4 KiB pages a fresh page is a fault,
 * and in a VM a fault costs microseconds: with huge pages SchedulingBasic at 5,000 nodes
 * takes 0.66 times the CPU per pod, for 7 MB more resident memory (bench/results/
 * 2026-12-02-index.md). Sanitizer builds do not link jemalloc; the symbol is then unused.
 */
const char *malloc_conf = "thp:always,metadata_thp:always";
