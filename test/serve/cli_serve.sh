#!/bin/sh
# cli_serve.sh KSCHED [DEPLOY_DIR] - `ksched serve`'s bad input: one "ksched: ..." line on
# standard error naming the file, line and field where there is one, nothing on standard
# output, exit status 2. (Runs no server: every case fails before the first request.)
# With DEPLOY_DIR, the KubeSchedulerConfiguration of deploy/ksched-deployment.yaml's
# ConfigMap must load, serve profile "ksched" and elect with the Lease named ksched.
set -u
ksched=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0

# expect STATUS PATTERN ARGS...: the exit status, and an extended regex standard error must match
expect() {
    want=$1 pattern=$2
    shift 2
    env -u KUBERNETES_SERVICE_HOST -u KUBERNETES_SERVICE_PORT "$ksched" serve "$@" >"$dir/out" 2>"$dir/err"
    got=$?
    bad=0
    [ "$got" -eq "$want" ] || bad=1
    [ -z "$pattern" ] || grep -Eq -- "$pattern" "$dir/err" || bad=1
    if [ "$want" -ne 0 ]; then
        [ -s "$dir/out" ] && bad=1
        [ "$(wc -l <"$dir/err")" -eq 1 ] || bad=1
    fi
    if [ "$bad" -ne 0 ]; then
        echo "FAIL: ksched serve $*: status $got (want $want), stderr:"
        sed 's/^/  /' "$dir/err"
        [ -s "$dir/out" ] && { echo "  stdout:"; sed 's/^/  /' "$dir/out"; }
        fail=1
    fi
}

cat >"$dir/bad-server.yaml" <<'YAML'
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: 42
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
users:
- name: u
  user: {token: abc}
YAML
cat >"$dir/no-context.yaml" <<'YAML'
apiVersion: v1
kind: Config
current-context: nope
YAML
cat >"$dir/ok.yaml" <<'YAML'
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
users:
- name: u
  user: {token: abc}
YAML
cat >"$dir/bad-config.yaml" <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
parallelism: -3
YAML

expect 2 "bad-server.yaml:6: clusters\[0\]\.cluster\.server: " --kubeconfig "$dir/bad-server.yaml"
expect 2 "no-context.yaml:3: current-context: " --kubeconfig "$dir/no-context.yaml"
expect 2 "/nonexistent" --kubeconfig /nonexistent
expect 2 "in-cluster" # no kubeconfig and not in a pod
expect 2 "bad-config.yaml:3: parallelism" --config "$dir/bad-config.yaml" --kubeconfig "$dir/ok.yaml"
expect 2 "unknown flag" --kubeconfig "$dir/ok.yaml" --bogus
cat >"$dir/yaml-content.yaml" <<'YAML'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  contentType: application/yaml
YAML
expect 2 "yaml-content.yaml: clientConnection.contentType: Unsupported value: \"application/yaml\"" \
    --config "$dir/yaml-content.yaml" --kubeconfig "$dir/ok.yaml"
expect 2 "--content-type: \"xml\": json or protobuf" --kubeconfig "$dir/ok.yaml" --content-type xml
expect 2 "invalid duration" --kubeconfig "$dir/ok.yaml" --lease-duration 15
expect 2 "lease duration > renew deadline" --kubeconfig "$dir/ok.yaml" --leader-elect --lease-duration 10s \
    --renew-deadline 10s --metrics-addr ""
expect 2 "metrics-addr" --kubeconfig "$dir/ok.yaml" --metrics-addr nonsense
# plain HTTP only on loopback; the secure port's flags
expect 2 "--metrics-addr \"0.0.0.0:10259\": plain HTTP is served on a loopback" --kubeconfig "$dir/ok.yaml" \
    --metrics-addr 0.0.0.0:10259
expect 2 "--bind-address \"nope\": not an IP address" --kubeconfig "$dir/ok.yaml" --bind-address nope
expect 2 "--secure-port: invalid port" --kubeconfig "$dir/ok.yaml" --secure-port 70000
expect 2 "--tls-private-key-file is missing" --kubeconfig "$dir/ok.yaml" --tls-cert-file "$dir/x.crt"
expect 2 "^ksched: /nonexistent/tls.crt:0: --tls-cert-file: No such file" --kubeconfig "$dir/ok.yaml" \
    --leader-elect=false --tls-cert-file /nonexistent/tls.crt --tls-private-key-file /nonexistent/tls.key
printf 'not a certificate\n' >"$dir/bad.crt"
expect 2 "^ksched: $dir/bad.crt:0: --tls-cert-file: no PEM certificate" --kubeconfig "$dir/ok.yaml" \
    --leader-elect=false --tls-cert-file "$dir/bad.crt" --tls-private-key-file "$dir/bad.crt"
: >"$dir/file"
expect 2 "^ksched: $dir/file/sub:0: --cert-dir: " --kubeconfig "$dir/ok.yaml" --leader-elect=false \
    --cert-dir "$dir/file/sub"
expect 2 "feature-gates" --kubeconfig "$dir/ok.yaml" --feature-gates NoSuchGate=true
expect 0 "" --help
"$ksched" serve --help | grep -q -- "--leader-elect" || { echo "FAIL: --help does not list --leader-elect"; fail=1; }
if [ $# -ge 2 ]; then
    # the block scalar under ksched-config.yaml:, dedented
    awk '/ksched-config.yaml: \|/ {on = 1; next} on && /^[^ ]/ {on = 0} on && /^---/ {on = 0} on {print}' \
        "$2/ksched-deployment.yaml" | sed 's/^    //' >"$dir/deploy-config.yaml"
    if ! "$ksched" config --print --config "$dir/deploy-config.yaml" >"$dir/printed" 2>"$dir/err"; then
        echo "FAIL: the deployment's configuration does not load:"
        sed 's/^/  /' "$dir/err"
        fail=1
    else
        for want in "schedulerName: ksched" "resourceName: ksched" "leaderElect: true"; do
            grep -q "$want" "$dir/printed" || { echo "FAIL: deployment config: no \"$want\""; fail=1; }
        done
    fi
    grep -q -- "- --leader-elect" "$2/ksched-deployment.yaml" || { echo "FAIL: deployment without --leader-elect"; fail=1; }
    # probed over HTTPS on the secure port, as kube-scheduler's manifest does; no plain HTTP
    [ "$(grep -c "scheme: HTTPS" "$2/ksched-deployment.yaml")" -ge 3 ] ||
        { echo "FAIL: deployment probes not over HTTPS"; fail=1; }
    grep -q -- "--metrics-addr" "$2/ksched-deployment.yaml" && { echo "FAIL: deployment serves plain HTTP"; fail=1; }
    grep -q "name: system:auth-delegator" "$2/ksched-rbac.yaml" ||
        { echo "FAIL: RBAC without the reviews of the secure port"; fail=1; }
fi
exit $fail
