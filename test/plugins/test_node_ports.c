/*
 * test_node_ports.c - the NodePorts plugin (plugins/node_ports.c).
 *
 * Cases from upstream's nodeports/node_ports_test.go: TestNodePorts (PreFilter Skip, then
 * Filter against a node whose one pod uses the given ports; sidecar and plain init
 * containers), TestPreFilterDisabled and TestFits. Ports are written as upstream's
 * newPod does: "PROTOCOL/hostIP/hostPort". The node's used ports are the sorted set the
 * cache keeps (struct ks_node_snap.ports); one case goes through the real cache instead.
 */
#include <criterion/criterion.h>
#include <criterion/new/assert.h>

#include "ksched/internal/cache.h"
#include "ksched/registry.h"
#include "plugin_fixtures.h"

TestSuite(nodeports);

static const struct ks_plugin *const np = &ks_plugin_node_ports;

#define ERR_PORTS "node(s) didn't have free ports for the requested pod ports"
#define MAX_PORTS 4

static enum ks_protocol protocol_of(const char *s, size_t n)
{
    if (n == 3 && strncmp(s, "UDP", 3) == 0)
        return KS_PROTO_UDP;
    if (n == 4 && strncmp(s, "SCTP", 4) == 0)
        return KS_PROTO_SCTP;
    return KS_PROTO_TCP; /* "TCP" and "" */
}

/* "UDP/127.0.0.1/8080" into a container port (empty hostIP: unset). */
static struct ks_container_port port_of(const char *spec)
{
    const char *a = strchr(spec, '/'), *b = a ? strchr(a + 1, '/') : NULL;
    cr_assert(a && b, "bad port %s", spec);
    char ip[64];
    snprintf(ip, sizeof(ip), "%.*s", (int)(b - a - 1), a + 1);
    return (struct ks_container_port){
        .container_port = 80,
        .host_port = atoi(b + 1),
        .host_ip = ip[0] ? ks_intern(ip) : KS_ID_EMPTY,
        .protocol = protocol_of(spec, (size_t)(a - spec)),
    };
}

static void set_ports(struct ks_pod *pod, struct ks_container *c, const char *const *specs)
{
    uint32_t n = 0;
    while (n < MAX_PORTS && specs[n])
        n++;
    c->ports = fx_must(ks_arena_calloc(&pod->arena, n ? n : 1, sizeof(*c->ports)));
    for (uint32_t i = 0; i < n; i++)
        c->ports[i] = port_of(specs[i]);
    c->nports = n;
}

/* upstream's newPod: one container with the given host ports. */
static struct ks_pod *pod_with(const char *const *specs)
{
    struct ks_pod *pod = ks_fake_pod("default", "pod");
    set_ports(pod, ks_fake_container(pod, NULL), specs);
    return fx_done(pod);
}

/* A pod whose only ports are on one init container (restartable or not). */
static struct ks_pod *init_pod(bool sidecar, const char *const *specs)
{
    struct ks_pod *pod = ks_fake_pod("default", "pod");
    set_ports(pod, ks_fake_init_container(pod, NULL, sidecar), specs);
    return fx_done(pod);
}

static int cmp_port(const void *a, const void *b)
{
    const struct ks_host_port *x = a, *y = b;
    if (x->port != y->port)
        return x->port < y->port ? -1 : 1;
    if (x->protocol != y->protocol)
        return x->protocol < y->protocol ? -1 : 1;
    return (x->ip > y->ip) - (x->ip < y->ip);
}

/* The node record of a node whose pod uses @specs: the sorted set of sanitized host ports. */
static struct ks_node_snap *node_using(struct ks_node *node, const char *const *specs,
                                       struct ks_host_port *ports)
{
    struct ks_node_snap *snap = fx_snap(node, NULL, 0);
    uint32_t n = 0;
    for (; n < MAX_PORTS && specs[n]; n++) {
        struct ks_container_port cp = port_of(specs[n]);
        ports[n] = (struct ks_host_port){
            .ip = cp.host_ip == KS_ID_EMPTY ? ks_intern("0.0.0.0") : cp.host_ip,
            .port = (uint16_t)cp.host_port,
            .protocol = (uint8_t)cp.protocol,
        };
    }
    qsort(ports, n, sizeof(*ports), cmp_port);
    snap->ports = ports;
    snap->nports = n;
    return snap;
}

#define P(...) ((const char *const[]){__VA_ARGS__, NULL})

struct port_case {
    const char *name;
    struct ks_pod *(*pod)(const struct port_case *);
    const char *const *pod_ports;
    const char *const *node_ports;
    bool skip;  /* PreFilter returns Skip */
    bool fails; /* Filter rejects */
};

static struct ks_pod *plain(const struct port_case *c)
{
    return pod_with(c->pod_ports);
}

static struct ks_pod *init_only(const struct port_case *c)
{
    return init_pod(false, c->pod_ports);
}

static struct ks_pod *sidecar(const struct port_case *c)
{
    return init_pod(true, c->pod_ports);
}

static struct ks_pod *no_ports(const struct port_case *c)
{
    (void)c;
    return fx_done(ks_fake_pod("default", "pod"));
}

static void run_case(const struct port_case *c)
{
    void *self = fx_init(np, NULL);
    struct ks_pod *pod = c->pod(c);
    struct ks_node *node = ks_fake_node("node", "");
    struct ks_host_port used[MAX_PORTS];
    struct ks_node_snap *snap = node_using(node, c->node_ports ? c->node_ports : P(NULL), used);
    struct ks_cycle_state cs;
    struct ks_status st = {0};
    struct ks_pre_filter_result res = {.all = true};
    fx_cs_init(&cs);

    int code = np->pre_filter(self, &cs, pod, &res, &st);
    cr_expect(eq(int, code, c->skip ? KS_SKIP : KS_SUCCESS), "%s: PreFilter", c->name);
    cr_expect(res.all, "%s: PreFilter narrowed", c->name);
    if (code == KS_SUCCESS) {
        code = np->filter(self, &cs, pod, snap, &st);
        if (c->fails) {
            cr_expect(eq(int, code, KS_UNSCHEDULABLE), "%s: Filter", c->name);
            cr_expect(eq(str, (char *)fx_reason(&st, 0), ERR_PORTS), "%s", c->name);
        } else {
            cr_expect(eq(int, code, KS_SUCCESS), "%s: Filter (%s)", c->name, fx_reason(&st, 0));
        }
    }
    fx_cs_free(&cs);
    fx_snap_free(snap);
    ks_node_destroy(node);
    ks_pod_destroy(pod);
    np->destroy(self);
}

Test(nodeports, upstream_node_ports)
{
    const struct port_case cases[] = {
        {"skip filter", no_ports, NULL, NULL, true, false},
        {"other port", plain, P("UDP/127.0.0.1/8080"), P("UDP/127.0.0.1/9090"), false, false},
        {"same udp port", plain, P("UDP/127.0.0.1/8080"), P("UDP/127.0.0.1/8080"), false, true},
        {"same tcp port", plain, P("TCP/127.0.0.1/8080"), P("TCP/127.0.0.1/8080"), false, true},
        {"different host ip", plain, P("TCP/127.0.0.1/8080"), P("TCP/127.0.0.2/8080"), false, false},
        {"different protocol", plain, P("UDP/127.0.0.1/8080"), P("TCP/127.0.0.1/8080"), false, false},
        {"second udp port conflict", plain, P("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
         P("UDP/127.0.0.1/8080"), false, true},
        {"first tcp port conflict", plain, P("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
         P("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"), false, true},
        {"first tcp port conflict due to 0.0.0.0 hostIP", plain, P("TCP/0.0.0.0/8001"),
         P("TCP/127.0.0.1/8001"), false, true},
        {"TCP hostPort conflict due to 0.0.0.0 hostIP", plain, P("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
         P("TCP/127.0.0.1/8001"), false, true},
        {"second tcp port conflict to 0.0.0.0 hostIP", plain, P("TCP/127.0.0.1/8001"), P("TCP/0.0.0.0/8001"),
         false, true},
        {"second different protocol", plain, P("UDP/127.0.0.1/8001"), P("TCP/0.0.0.0/8001"), false, false},
        {"UDP hostPort conflict due to 0.0.0.0 hostIP", plain, P("UDP/127.0.0.1/8001"),
         P("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"), false, true},
        {"non-sidecar initContainer using hostPort", init_only, P("TCP//8001"), P("TCP/0.0.0.0/8001"), true,
         false},
        {"TCP hostPort conflict from sidecar initContainer", sidecar, P("TCP//8001"), P("TCP/0.0.0.0/8001"),
         false, true},
        /* ksched's own: sanitize (empty hostIP is 0.0.0.0, empty protocol TCP), SCTP, no hostPort */
        {"an empty hostIP binds every IP", plain, P("TCP//8001"), P("TCP/10.1.1.1/8001"), false, true},
        {"an empty protocol is TCP", plain, P("/127.0.0.1/53"), P("TCP/127.0.0.1/53"), false, true},
        {"SCTP only conflicts with SCTP", plain, P("SCTP/0.0.0.0/9000"),
         P("TCP/0.0.0.0/9000", "UDP/0.0.0.0/9000"), false, false},
        {"container ports without a hostPort are not host ports", plain, P("TCP/127.0.0.1/0"), NULL, true,
         false},
        {"many used ports, one conflicting entry among them", plain, P("UDP/10.0.0.2/7000"),
         P("UDP/10.0.0.1/7000", "TCP/10.0.0.2/7000", "UDP/10.0.0.2/6999", "UDP/10.0.0.2/7000"), false, true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_case(&cases[i]);
}

Test(nodeports, upstream_fits)
{
    const struct port_case cases[] = {
        {"non-conflicting ports", plain, P("TCP/127.0.0.1/80"), P("TCP/127.0.0.1/9090"), false, false},
        {"multiple non-conflicting ports", plain,
         P("TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"),
         P("TCP/127.0.0.1/9090", "TCP/127.0.0.1/9191", "TCP/127.0.1.1/8080"), false, false},
        {"same ports on different protocols", plain, P("TCP/127.0.0.1/80"), P("UDP/127.0.0.1/80"), false,
         false},
        {"conflicting ports", plain, P("TCP/127.0.0.1/80"), P("TCP/127.0.0.1/80"), false, true},
        {"multiple ports, some conflicting", plain,
         P("TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"),
         P("TCP/127.0.0.1/9090", "TCP/127.0.1.1/90", "TCP/127.0.1.1/8080"), false, true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_case(&cases[i]);
}

Test(nodeports, filter_without_pre_filter_is_an_error)
{
    void *self = fx_init(np, NULL);
    struct ks_pod *pod = fx_done(ks_fake_pod("default", "pod"));
    struct ks_node *node = ks_fake_node("node", "");
    struct ks_node_snap *snap = fx_snap(node, NULL, 0);
    struct ks_cycle_state cs;
    struct ks_status st = {0};
    fx_cs_init(&cs);

    cr_expect(eq(int, np->filter(self, &cs, pod, snap, &st), KS_ERROR));
    cr_expect(
        eq(str, (char *)fx_reason(&st, 0), "reading \"PreFilterNodePorts\" from cycleState: not found"));
    fx_cs_free(&cs);
    fx_snap_free(snap);
    ks_node_destroy(node);
    ks_pod_destroy(pod);
    np->destroy(self);
}

/* The node record as the real cache builds it from the node's pods (sidecar ports included). */
Test(nodeports, ports_from_the_cache)
{
    struct ks_cache *c = NULL;
    cr_assert(eq(int, ks_cache_create(&c), 0));
    ks_rcu_register_thread();
    cr_assert(eq(int, ks_cache_add_node(c, ks_fake_node("node", "")), 0));
    struct ks_pod *sc = init_pod(true, P("UDP//53"));
    struct ks_pod *bound = ks_fake_pod("default", "bound");
    set_ports(bound, ks_fake_container(bound, NULL), P("TCP/10.0.0.1/8080"));
    fx_done(bound);
    sc->refs = bound->refs = 1; /* the reference add_pod takes over */
    cr_assert(eq(int, ks_cache_add_pod(c, sc, ks_intern("node")), 0));
    cr_assert(eq(int, ks_cache_add_pod(c, bound, ks_intern("node")), 0));
    cr_assert(ge(int, ks_cache_refresh(c), 0));

    static const struct {
        const char *port;
        bool fails;
    } cases[] = {
        {"UDP/10.9.9.9/53", true},    /* the sidecar bound 0.0.0.0 */
        {"TCP/10.9.9.9/53", false},   /* other protocol */
        {"TCP/10.0.0.1/8080", true},  /* same IP */
        {"TCP/10.0.0.2/8080", false}, /* other IP */
        {"TCP/0.0.0.0/8080", true},   /* every IP */
        {"TCP//8080", true},          /* unset IP: every IP */
    };
    void *self = fx_init(np, NULL);
    ks_rcu_read_lock();
    const struct ks_node_snap *snap = ks_snapshot_find(ks_cache_snapshot(c), ks_intern("node"));
    cr_assert(ne(ptr, (void *)snap, NULL));
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct ks_pod *pod = pod_with(P(cases[i].port));
        struct ks_cycle_state cs;
        struct ks_status st = {0};
        struct ks_pre_filter_result res = {.all = true};
        fx_cs_init(&cs);
        cr_assert(eq(int, np->pre_filter(self, &cs, pod, &res, &st), KS_SUCCESS));
        cr_expect(
            eq(int, np->filter(self, &cs, pod, snap, &st), cases[i].fails ? KS_UNSCHEDULABLE : KS_SUCCESS),
            "%s", cases[i].port);
        fx_cs_free(&cs);
        ks_pod_destroy(pod);
    }
    ks_rcu_read_unlock();
    np->destroy(self);
    ks_cache_destroy(c);
    ks_rcu_unregister_thread();
}
