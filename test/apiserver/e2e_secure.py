#!/usr/bin/env python3
"""e2e_secure.py KSCHED - `ksched serve`'s secure port against the test API server.

kube-scheduler serves /healthz, /readyz, /livez and /metrics over HTTPS and lets only the
probes through without a check; everything else is authenticated with a TokenReview and
authorized with a SubjectAccessReview. The test API server (apiserver.py) answers both
reviews from its token table and --nonresource-rule list:

  reader-token    metrics-reader, allowed to get /metrics
  plain-token     plain-user, authenticated but allowed nothing
  admin-token     admin in system:masters (allowed without an access review)

Checked, with the certificate made in memory (no certificate flags):
  - /healthz, /readyz and /livez answer 200 without a token;
  - /metrics without a token is 403 for system:anonymous (upstream's delegating
    authenticator lets anonymous requests on to authorization), with an unknown token 401,
    with plain-token 403, with reader-token 200 and the scheduler's metrics; a second scrape
    within the cache TTL sends no new review; admin-token needs no access review;
  - the certificate served is the self-signed localhost@<time> (DNS:localhost,
    IP:127.0.0.1) issued by localhost-ca@<time>, after it in the chain;
  - --metrics-addr on loopback still serves /metrics in plain HTTP without a token.
Then with --tls-cert-file/--tls-private-key-file: the given certificate is served (a client
that trusts only the test CA connects and verifies it).

Exit 0 on success, 1 on failure.
"""

import http.client
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
import harness  # noqa: E402

TOKENS = ["reader-token:metrics-reader", "plain-token:plain-user", "admin-token:admin:system:masters"]
RULES = ["metrics-reader:get:/metrics"]
check = e2e.check


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def https(port, path, token=None, cafile=None):
    """(status, body, the server certificate's DER) of one GET over TLS."""
    if cafile:
        ctx = ssl.create_default_context(cafile=cafile)
    else:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=15 * e2e.SLOW)
    headers = {"Authorization": "Bearer " + token} if token else {}
    conn.request("GET", path, headers=headers)
    der = conn.sock.getpeercert(binary_form=True)  # before the answer: Connection: close drops the socket
    r = conn.getresponse()
    body = r.read().decode()
    conn.close()
    return r.status, body, der


def plain(port, path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15 * e2e.SLOW)
    conn.request("GET", path)
    r = conn.getresponse()
    out = r.status, r.read().decode()
    conn.close()
    return out


def cert_text(der):
    pem = ssl.DER_cert_to_PEM_cert(der)
    r = subprocess.run(["openssl", "x509", "-noout", "-subject", "-issuer", "-ext", "subjectAltName"],
                       input=pem, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=True)
    return r.stdout


def chain_subjects(port):
    """The subjects of every certificate the server sends, in order."""
    r = subprocess.run(["openssl", "s_client", "-connect", "127.0.0.1:%d" % port, "-showcerts"],
                       input="", stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=30)
    return [line.split("s:", 1)[1].strip() for line in r.stdout.splitlines() if line.strip()[:4] in ("0 s:", "1 s:")]


class Run:
    def __init__(self, ksched, work, server, extra, name):
        kc = server.kubeconfig(os.path.join(work, "kubeconfig-" + name), user="ksched-a")
        self.port = free_port()
        cmd = [ksched, "serve", "--kubeconfig", kc, "--leader-elect=false", "--secure-port", str(self.port),
               "--bind-address", "127.0.0.1"] + list(extra)
        self.serve = e2e.Serve(cmd, os.path.join(work, "serve-%s.log" % name), name)

    def wait_ready(self):
        deadline = time.monotonic() + 30 * e2e.SLOW
        while True:
            self.serve.check_alive()
            try:
                if https(self.port, "/readyz")[0] == 200:
                    return
            except (OSError, http.client.HTTPException):
                pass
            if time.monotonic() > deadline:
                raise e2e.Failure("the secure port never answered /readyz 200")
            time.sleep(0.2)


def reviews(api):
    req = api.state()["requests"]
    return (req.get("POST tokenreviews.authentication.k8s.io", 0),
            req.get("POST subjectaccessreviews.authorization.k8s.io", 0))


def scenario_self_signed(ksched, work, server, api):
    run = Run(ksched, work, server, ["--metrics-addr", "127.0.0.1:0"], "self-signed")
    try:
        run.wait_ready()
        for path in ("/healthz", "/readyz", "/livez"):
            status, body, _ = https(run.port, path)
            check(status == 200 and body == "ok", "%s without a token: %d %s" % (path, status, body))

        status, body, _ = https(run.port, "/metrics")
        check(status == 403, "anonymous /metrics: %d %s" % (status, body))
        st = json.loads(body)
        check(st["reason"] == "Forbidden" and st["code"] == 403 and
              st["message"] == 'forbidden: User "system:anonymous" cannot get path "/metrics"', body)

        status, body, _ = https(run.port, "/metrics", "no-such-token")
        check(status == 401 and json.loads(body)["message"] == "Unauthorized",
              "unknown token: %d %s" % (status, body))

        status, body, _ = https(run.port, "/metrics", "plain-token")
        check(status == 403 and 'User \\"plain-user\\" cannot get path \\"/metrics\\"' in body,
              "authenticated, not authorized: %d %s" % (status, body))

        status, body, der = https(run.port, "/metrics", "reader-token")
        check(status == 200 and "scheduler_schedule_attempts_total" in body,
              "authorized token: %d %s" % (status, body[:300]))
        before = reviews(api)
        status, body, _ = https(run.port, "/metrics", "reader-token")
        check(status == 200, "second scrape: %d" % status)
        check(reviews(api) == before, "a scrape within the TTL sent reviews: %s -> %s" % (before, reviews(api)))

        status, body, _ = https(run.port, "/metrics", "admin-token")
        after = reviews(api)
        check(status == 200 and after[1] == before[1],
              "system:masters: %d, access reviews %d -> %d" % (status, before[1], after[1]))
        granted = [r for r in api.state()["accessReviews"] if r["user"] == "metrics-reader"]
        check(granted and granted[0]["path"] == "/metrics" and granted[0]["verb"] == "get" and
              "system:authenticated" in granted[0]["groups"], "the access review asked: %s" % granted)

        text = cert_text(der)
        check("subject=CN = localhost@" in text and "issuer=CN = localhost-ca@" in text and
              "DNS:localhost" in text and "IP Address:127.0.0.1" in text, "served certificate:\n" + text)
        subjects = chain_subjects(run.port)
        check(len(subjects) == 2 and subjects[0].startswith("CN = localhost@") and
              subjects[1].startswith("CN = localhost-ca@"), "chain: %s" % subjects)

        status, body = plain(run.serve.port(), "/metrics")
        check(status == 200 and "scheduler_schedule_attempts_total" in body,
              "--metrics-addr on loopback: %d" % status)
        print("self-signed: probes open; /metrics 403 anonymous, 401 unknown token, 403 plain-user, 200 "
              "metrics-reader (cached), 200 system:masters without an access review; %s; plain loopback ok"
              % " / ".join(subjects))
    finally:
        problems = run.serve.stop()
        if problems:
            run.serve.dump()
        check(not problems, "; ".join(problems))


def scenario_given_cert(ksched, work, server, pki):
    run = Run(ksched, work, server, ["--tls-cert-file", os.path.join(pki, "server.crt"),
                                     "--tls-private-key-file", os.path.join(pki, "server.key")], "given-cert")
    try:
        run.wait_ready()
        status, body, der = https(run.port, "/healthz", cafile=os.path.join(pki, "ca.crt"))
        check(status == 200, "/healthz verified against the test CA: %d %s" % (status, body))
        check("subject=CN = server" in cert_text(der), "not the given certificate:\n" + cert_text(der))
        status, body, _ = https(run.port, "/metrics", "reader-token", cafile=os.path.join(pki, "ca.crt"))
        check(status == 200, "/metrics with the given certificate: %d" % status)
        print("given-cert: the certificate of --tls-cert-file is served and verifies against its CA")
    finally:
        problems = run.serve.stop()
        if problems:
            run.serve.dump()
        check(not problems, "; ".join(problems))


def main():
    if len(sys.argv) != 2:
        print("usage: e2e_secure.py KSCHED", file=sys.stderr)
        return 2
    ksched = sys.argv[1]
    work = tempfile.mkdtemp(prefix="ksched-e2e-secure-")
    pki = harness.make_pki(os.path.join(work, "pki"), clients=("admin", "ksched-a"))
    extra = ["--bookmark-interval", "1"]
    for r in RULES:
        extra += ["--nonresource-rule", r]
    server = harness.ApiServer(work, pki, tokens=TOKENS, extra=extra)
    api = server.client("admin")
    ok = False
    try:
        scenario_self_signed(ksched, work, server, api)
        scenario_given_cert(ksched, work, server, pki)
        ok = True
    except e2e.Failure as err:
        print("FAIL: secure: %s" % err)
    finally:
        api.close()
        server.stop()
        if ok:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("--- apiserver log (tail) ---")
            print(e2e.tail(server.log_path))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
