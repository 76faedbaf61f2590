/*
 * serve_dra_extended.c - the JSON of the special claim for a pod's extended resources backed
 * by devices (see serve.h): the claim createExtendedResourceClaimInAPI posts, and the pod
 * status patch of patchPodExtendedResourceClaimStatus
 * (pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources.go).
 */
#include "serve.h"

#include "ksched/base/intern.h"
#include "ksched/internal/json_write.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int ks_serve_dra_extended_claim_body(const struct ks_resource_claim *c, const char *pod_name, char **out,
                                     size_t *out_len)
{
    char *buf = NULL, base[128];
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);

    if (!f)
        return -ENOMEM;
    snprintf(base, sizeof(base), "%s-extended-resources-", pod_name);
    fputs("{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceClaim\",\"metadata\":{\"generateName\":",
          f);
    ks_json_write_cstr(f, base);
    fputs(",\"namespace\":", f);
    ks_json_write_cstr(f, ks_intern_str(c->meta.namespace_id));
    fputs(",\"ownerReferences\":[", f);
    for (uint32_t i = 0; i < c->meta.nowners; i++) {
        const struct ks_owner_ref *o = &c->meta.owners[i];
        fputs(i ? ",{\"apiVersion\":" : "{\"apiVersion\":", f);
        ks_json_write_cstr(f, o->api_version ? o->api_version : "");
        fputs(",\"kind\":", f);
        ks_json_write_cstr(f, o->kind ? o->kind : "");
        fputs(",\"name\":", f);
        ks_json_write_cstr(f, o->name ? o->name : "");
        fputs(",\"uid\":", f);
        ks_json_write_cstr(f, o->uid ? o->uid : "");
        fputs(o->controller ? ",\"controller\":true}" : "}", f);
    }
    fputs("],\"annotations\":{", f);
    for (uint32_t i = 0; i < c->meta.annotations.n; i++) {
        if (i)
            fputc(',', f);
        ks_json_write_cstr(f, c->meta.annotations.items[i].key);
        fputc(':', f);
        ks_json_write_cstr(f, c->meta.annotations.items[i].value);
    }
    fputs("}},\"spec\":{\"devices\":{\"requests\":[", f);
    for (uint32_t i = 0; i < c->spec.nrequests; i++) {
        const struct ks_device_request *r = &c->spec.requests[i];
        fputs(i ? ",{\"name\":" : "{\"name\":", f);
        ks_json_write_cstr(f, r->name);
        fputs(",\"exactly\":{\"deviceClassName\":", f);
        ks_json_write_cstr(f, r->spec.device_class_name);
        fprintf(f, ",\"allocationMode\":\"ExactCount\",\"count\":%" PRId64 "}}", r->spec.count);
    }
    fputs("]}}}", f);
    if (!ks_serve_text_close(f, &buf))
        return -ENOMEM;
    *out = buf;
    *out_len = n;
    return 0;
}

int ks_serve_dra_pod_extended_patch(const char *claim_name, const struct ks_dra_ext_mapping *maps, uint32_t n,
                                    char **out, size_t *out_len)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    if (!f)
        return -ENOMEM;
    /* the two-way merge patch PatchPodStatus sends for a status that gained the field */
    fputs("{\"status\":{\"extendedResourceClaimStatus\":{\"requestMappings\":[", f);
    for (uint32_t i = 0; i < n; i++) {
        fputs(i ? ",{\"containerName\":" : "{\"containerName\":", f);
        ks_json_write_cstr(f, maps[i].container);
        fputs(",\"requestName\":", f);
        ks_json_write_cstr(f, maps[i].request);
        fputs(",\"resourceName\":", f);
        ks_json_write_cstr(f, maps[i].resource);
        fputc('}', f);
    }
    fputs("],\"resourceClaimName\":", f);
    ks_json_write_cstr(f, claim_name);
    fputs("}}}", f);
    if (!ks_serve_text_close(f, &buf))
        return -ENOMEM;
    *out = buf;
    *out_len = len;
    return 0;
}
