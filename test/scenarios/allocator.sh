#!/bin/bash
# allocator.sh - the ksched binary runs on jemalloc with the options cmd/malloc_conf.c compiles
# in (transparent huge pages for its extents and metadata), and MALLOC_CONF still overrides them.
# Sanitizer builds use the sanitizer's allocator: nothing to check there.
# usage: allocator.sh KSCHED
set -u
ksched=$1
if ! ldd "$ksched" 2>/dev/null | grep -q libjemalloc; then
  echo "allocator.sh: $ksched does not link jemalloc (a sanitizer build): skipped"
  exit 0
fi
fail=0
stats=$(MALLOC_CONF=stats_print:true "$ksched" version 2>&1 >/dev/null)
for opt in 'opt.thp: "always"' 'opt.metadata_thp: "always"'; do
  if ! grep -qF "$opt" <<<"$stats"; then
    echo "FAIL: jemalloc's statistics lack $opt"
    fail=1
  fi
done
stats=$(MALLOC_CONF=stats_print:true,thp:never "$ksched" version 2>&1 >/dev/null)
if ! grep -qF 'opt.thp: "never"' <<<"$stats"; then
  echo "FAIL: MALLOC_CONF=thp:never did not override the compiled-in option"
  fail=1
fi
[ "$fail" = 0 ] && echo "allocator.sh: ok"
exit "$fail"
