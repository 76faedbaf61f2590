/*
 * malloc_conf.c - the options of jemalloc, the allocator of the ksched binary and of the
 * micro-benchmarks (read by jemalloc before MALLOC_CONF, which still overrides them).
 *
 * thp:always backs jemalloc's extents with transparent huge pages (the kernel's "madvise"
 * mode is enough). A scheduling cycle's commit path allocates small objects without pause
 * (snapshot records, pod entries, queue nodes); in 4 KiB pages a fresh page is a fault,
 * and in a VM a fault costs microseconds: huge pages save about a third of the CPU per pod
 * for a few MB of resident memory (docs/perf.md, "Design constants"). Sanitizer builds do not link jemalloc;
 * the symbol is then unused.
 */
const char *malloc_conf = "thp:always,metadata_thp:always";
