/*
 * version_cmd.c - `ksched version` and `ksched --version`: the project's version (CMake's
 * project VERSION) and the git commit the binary was built from, one line:
 *
 *   ksched 0.1.0 (commit 0123456789ab)
 *
 * The commit has "-dirty" appended when tracked files differed from it at build time and
 * is "unknown" when the tree was not a git checkout. Both come from ks_version.h, which
 * cmake/ks_version.cmake regenerates at every build; only this file includes it, so a new
 * commit recompiles one file.
 */
#include "commands.h"

#include "ks_version.h"

#include <stdio.h>
#include <string.h>

static const char usage_text[] = "usage: ksched version\n"
                                 "       ksched --version\n"
                                 "Prints the version and the git commit ksched was built from.\n";

int ks_cmd_version(int argc, char **argv)
{
    if (argc > 1) {
        if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
            fputs(usage_text, stdout);
            return 0;
        }
        fprintf(stderr, "ksched version: unknown argument \"%s\"\n%s", argv[1], usage_text);
        return 2;
    }
    printf("ksched %s (commit %s)\n", KS_VERSION, KS_COMMIT);
    return 0;
}
