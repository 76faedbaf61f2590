/*
 * bench_json_libs.c - which JSON library should feed the decoders: parse + decode of a
 * 50,000-Node NodeList (realistic ~2.5 KB Node objects) through each candidate.
 *
 *   yajl    : SAX events build the ks_yaml_node tree directly (kube/json_tree.c, shipped)
 *   json-c  : json_tokener DOM, then walked into a ks_yaml_node tree
 *   jansson : json_loadb DOM, then walked into a ks_yaml_node tree
 *
 * Every candidate ends in the same tree and the same ks_decode_node() calls, so the
 * figures compare what the informer would pay per byte. Not part of the build (it needs
 * json-c and jansson, which ksched does not link); docs/kube-client.md has the command:
 *
 *   for lib in jsonc:json-c jansson:jansson; do
 *     cc -O2 -D_GNU_SOURCE -Iinclude test/kube/bench_json_libs.c test/kube/bench_json_${lib%%:*}.c \
 *        build-kube/libksched_core.a $(pkg-config --cflags --libs ${lib#*:} yajl yaml-0.1 libcurl \
 *        liburcu-memb liburcu-cds ck) -lpthread -lm -o build-kube/bench_json_${lib%%:*}
 *   done
 *   for i in 1 2 3; do build-kube/bench_json_jsonc; build-kube/bench_json_jansson; done
 *
 * (json-c and jansson export clashing symbols, so each binary holds yajl and one of them.)
 */
#include "ksched/api.h"
#include "ksched/decode.h"
#include "ksched/json_tree.h"

#include "bench_json_libs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double ks_bench_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU time: fair on a loaded machine */
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- the candidates: text to tree, then decode every item ---- */

int ks_bench_decode_items(const struct ks_yaml_node *root)
{
    const struct ks_yaml_node *items = ks_yaml_get(root, "items");
    int n = 0;
    for (uint32_t i = 0; items && i < items->n; i++) {
        struct ks_node *node;
        struct ks_error err = {0};
        if (ks_decode_node("bench", items->items[i], &node, &err)) {
            char msg[1024];
            ks_error_format(&err, msg, sizeof(msg));
            fprintf(stderr, "decode: %s\n", msg);
            exit(1);
        }
        ks_node_destroy(node);
        n++;
    }
    return n;
}

static double run_yajl(const char *p, size_t len, int decode)
{
    double t0 = ks_bench_now_ms();
    struct ks_yaml_stream *s;
    struct ks_error err = {0};
    if (ks_json_parse("bench", p, len, &s, &err))
        abort();
    if (decode)
        ks_bench_decode_items(s->docs[0]);
    ks_yaml_stream_destroy(s);
    return ks_bench_now_ms() - t0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int nodes = argc > 1 ? atoi(argv[1]) : 50000;
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    struct buf b = gen_list(nodes);
    static const struct {
        const char *name;
        double (*run)(const char *, size_t, int);
    } libs[] = {{"yajl (SAX -> tree)", run_yajl},
                {"json-c (DOM -> tree)", ks_bench_run_jsonc},
                {"jansson (DOM -> tree)", ks_bench_run_jansson}};
    enum { NLIBS = sizeof(libs) / sizeof(libs[0]) };
    double *t[NLIBS][2];

    printf("%d nodes, %.1f MB of JSON (%.0f bytes/node), median CPU time of %d interleaved rounds\n", nodes,
           b.len / 1e6, (double)b.len / nodes, rounds);
    for (int l = 0; l < NLIBS; l++)
        for (int d = 0; d < 2; d++)
            t[l][d] = calloc((size_t)rounds, sizeof(double));
    for (int r = 0; r < rounds; r++)
        for (int l = 0; l < NLIBS; l++)
            for (int d = 0; d < 2 && libs[l].run; d++)
                t[l][d][r] = libs[l].run(b.p, b.len, d);
    printf("%-24s %12s %10s %16s %10s\n", "library", "to tree ms", "MB/s", "tree+decode ms", "MB/s");
    for (int l = 0; l < NLIBS; l++) {
        double med[2];
        if (!libs[l].run)
            continue;
        for (int d = 0; d < 2; d++) {
            qsort(t[l][d], (size_t)rounds, sizeof(double), cmp_double);
            med[d] = t[l][d][rounds / 2];
        }
        printf("%-24s %12.0f %10.1f %16.0f %10.1f\n", libs[l].name, med[0], b.len / 1e3 / med[0], med[1],
               b.len / 1e3 / med[1]);
    }
    free(b.p);
    return 0;
}
