/*
 * plugin_helpers_node_affinity.h - node selector terms as component-helpers' nodeaffinity
 * package parses and matches them.
 *
 * Mirrors k8s.io/component-helpers/scheduling/corev1/nodeaffinity (newNodeSelectorTerm,
 * LazyErrorNodeSelector, PreferredSchedulingTerms, GetRequiredNodeAffinity). The object
 * decoder already rejects what the API server rejects in a pod (operators, value counts,
 * Gt/Lt integers, matchFields keys); what it lets through and upstream's parser does not
 * is a matchExpressions key that is not a qualified name or a value that is not a label
 * value. Such a term never matches a required selector (LazyErrorNodeSelector skips it)
 * and makes preferred terms an error (NewPreferredSchedulingTerms).
 *
 * Context: pure functions over immutable objects; any thread. The *_valid and match
 * functions are allocation-free; the checks walk key and value strings, so plugins run
 * them once per pod (PreFilter, PreScore) and keep the answer.
 */
#ifndef KSCHED_PLUGIN_HELPERS_NODE_AFFINITY_H
#define KSCHED_PLUGIN_HELPERS_NODE_AFFINITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksched/api_types.h"
#include "ksched/name_check.h" /* ks_qualified_name_ok, ks_label_value_ok */

/*
 * ks_node_selector_term_valid - @t parses as upstream's newNodeSelectorTerm: every
 * matchExpressions key is a qualified name and every value a label value.
 */
bool ks_node_selector_term_valid(const struct ks_node_selector_term *t);

/*
 * ks_node_selector_term_errors - the errors ks_node_selector_term_valid() rejects @t for,
 * formatted as upstream's field errors under @path ("<path>.matchExpressions[i].key:
 * Invalid value: \"k\": <why>", "<path>.matchExpressions[i].values[j][k]: ..."), appended
 * to the NUL-terminated @buf (size @len) separated by ", ", and counted in *nerr. Values
 * are numbered in their decoded (sorted) order. Returns the number of errors added.
 */
uint32_t ks_node_selector_term_errors(const struct ks_node_selector_term *t, const char *path, char *buf,
                                      size_t len, uint32_t *nerr);

/*
 * ks_preferred_terms_error - NewPreferredSchedulingTerms' error for @n @terms (terms with
 * weight 0 or no requirements are skipped unchecked, as upstream): false when they all
 * parse; otherwise true with the aggregate message in @buf ("[0].matchExpressions[0].key:
 * ...", several errors as "[e1, e2]").
 */
bool ks_preferred_terms_error(const struct ks_preferred_term *terms, uint32_t n, char *buf, size_t len);

/*
 * ks_node_selector_matches_parsed - LazyErrorNodeSelector.Match: some term of @sel that
 * parses matches @labels / @node_name. @valid (one flag per term, from
 * ks_node_selector_term_valid) may be NULL: each term is then checked here (slow).
 */
bool ks_node_selector_matches_parsed(const struct ks_node_selector *sel, const bool *valid,
                                     const struct ks_labels *labels, uint32_t node_name);

/*
 * ks_labels_superset - labels.SelectorFromSet(@set).Matches(@labels): every pair of @set
 * is in @labels (an empty @set matches everything).
 */
bool ks_labels_superset(const struct ks_labels *set, const struct ks_labels *labels);

#endif
