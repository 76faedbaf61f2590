/*
 * kube_internal.h - what the kube/ files share and nothing outside kube/ uses.
 */
#ifndef KSCHED_KUBE_INTERNAL_H
#define KSCHED_KUBE_INTERNAL_H

#include "ksched/kube.h"

#include <curl/curl.h>
#include <stdbool.h>

/*
 * ks__kube_client_setup - configure @h (fresh or reset) for @method on @path of @c's server:
 * URL, TLS material, bearer token (re-read from token_file when it changed), user agent,
 * Accept: application/json, HTTP/2 over TLS, no signals. @hdrs receives the header list
 * the caller frees after the transfer (curl_slist_free_all). @stream: a watch (no total
 * timeout, no shared connection cache: the informer's multi handle keeps its own).
 * Thread-safe. 0 or -ENOMEM.
 */
int ks__kube_client_setup(struct ks_kube_client *c, CURL *h, const char *method, const char *path,
                          const char *content_type, bool stream, struct curl_slist **hdrs);

/* ks__kube_curl_errno - a negative errno for a libcurl error code. */
int ks__kube_curl_errno(CURLcode rc);

/* ks__kube_client_timeout_ms - the client's per-request timeout (for LIST requests). */
long ks__kube_client_timeout_ms(const struct ks_kube_client *c);

#endif
