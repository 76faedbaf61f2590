"""harness.py - shared by the test API server's own tests and the end-to-end tests.

make_pki() makes a CA, a server certificate for 127.0.0.1 and client certificates with the
openssl CLI; ApiServer runs apiserver.py as a child process on a free port; Client talks to
it over TLS with a client certificate or a bearer token, through the stdlib only;
ServerTestCase is a unittest class with one ApiServer for all its tests.
"""

import http.client
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import threading
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import apiserver  # noqa: E402  (for write_kubeconfig)


def run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def make_pki(directory, clients=("admin",)):
    """ca.crt/ca.key, server.crt/server.key (SAN IP:127.0.0.1) and <name>.crt/<name>.key with
    CN=<name> for each client, signed by the CA. Returns the directory."""
    os.makedirs(directory, exist_ok=True)

    def path(name):
        return os.path.join(directory, name)
    run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=ksched-test-ca",
         "-keyout", path("ca.key"), "-out", path("ca.crt")])
    ext = path("server.ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    for name, extfile in [("server", ext)] + [(c, None) for c in clients]:
        run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=" + name,
             "-keyout", path(name + ".key"), "-out", path(name + ".csr")])
        cmd = ["openssl", "x509", "-req", "-in", path(name + ".csr"), "-CA", path("ca.crt"), "-CAkey",
               path("ca.key"), "-CAcreateserial", "-days", "2", "-out", path(name + ".crt")]
        if extfile:
            cmd += ["-extfile", extfile]
        run(cmd)
    return directory


class ApiServer:
    """apiserver.py as a child process (TLS with client CA and tokens when @pki is given)."""

    def __init__(self, workdir, pki=None, tokens=(), extra=()):
        self.workdir = workdir
        self.pki = pki
        port_file = os.path.join(workdir, "apiserver.port")
        if os.path.exists(port_file):
            os.unlink(port_file)
        cmd = [sys.executable, os.path.join(HERE, "apiserver.py"), "--port-file", port_file]
        if pki:
            cmd += ["--tls-cert", os.path.join(pki, "server.crt"), "--tls-key", os.path.join(pki, "server.key"),
                    "--client-ca", os.path.join(pki, "ca.crt")]
        for t in tokens:
            cmd += ["--token", t]
        cmd += list(extra)
        self.log_path = os.path.join(workdir, "apiserver.log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while not os.path.exists(port_file):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("apiserver did not start: " + open(self.log_path).read())
            time.sleep(0.05)
        self.port = int(open(port_file).read())
        self.url = "%s://127.0.0.1:%d" % ("https" if pki else "http", self.port)

    def kubeconfig(self, path, user=None, token=None, token_file=None):
        """A kubeconfig for this server: client certificate @user (from the PKI), @token or
        @token_file."""
        pki = self.pki

        def rd(name):
            with open(os.path.join(pki, name), "rb") as f:
                return f.read()
        apiserver.write_kubeconfig(path, self.url, rd("ca.crt") if pki else None,
                                   rd(user + ".crt") if user else None, rd(user + ".key") if user else None, token,
                                   token_file=token_file)
        return path

    def client(self, user="admin", token=None):
        return Client(self.port, self.pki, None if token else user, token)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


class Response:
    def __init__(self, status, body, headers):
        self.status = status
        self.raw = body
        self.headers = headers
        try:
            self.json = json.loads(body) if body else None
        except ValueError:
            self.json = None

    def __repr__(self):
        return "<%d %s>" % (self.status, self.raw[:300])


class Client:
    def __init__(self, port, pki=None, user=None, token=None, agent="ksched-e2e"):
        self.port, self.pki, self.user, self.token, self.agent = port, pki, user, token, agent
        self.local = threading.local()

    def connect(self, timeout=30):
        if not self.pki:
            return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        ctx = ssl.create_default_context(cafile=os.path.join(self.pki, "ca.crt"))
        if self.user:
            ctx.load_cert_chain(os.path.join(self.pki, self.user + ".crt"), os.path.join(self.pki, self.user + ".key"))
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=ctx, timeout=timeout)

    def close(self):
        conn = getattr(self.local, "conn", None)
        if conn is not None:
            conn.close()
            self.local.conn = None

    def headers(self, ctype):
        h = {"Accept": "application/json", "User-Agent": self.agent}
        if ctype:
            h["Content-Type"] = ctype
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        return h

    def request(self, method, path, body=None, ctype="application/json"):
        """One request on this thread's kept-alive connection (reconnecting once if the
        server closed it)."""
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body)
        for attempt in (0, 1):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = self.local.conn = self.connect()
            try:
                conn.request(method, path, body=body, headers=self.headers(ctype if body is not None else None))
                r = conn.getresponse()
                return Response(r.status, r.read(), dict(r.getheaders()))
            except (http.client.HTTPException, ConnectionError, ssl.SSLError):
                conn.close()
                self.local.conn = None
                if attempt:
                    raise

    def get(self, path):
        return self.request("GET", path)

    def post(self, path, body):
        return self.request("POST", path, body)

    def put(self, path, body):
        return self.request("PUT", path, body)

    def patch(self, path, body, ctype="application/strategic-merge-patch+json"):
        return self.request("PATCH", path, body, ctype)

    def delete(self, path, body=None):
        return self.request("DELETE", path, body)

    def must(self, method, path, body=None, ctype=None, ok=(200, 201)):
        if ctype is None:
            ctype = "application/strategic-merge-patch+json" if method == "PATCH" else "application/json"
        r = self.request(method, path, body, ctype)
        if r.status not in ok:
            raise RuntimeError("%s %s: %r" % (method, path, r))
        return r.json

    def watch(self, path, timeout=10):
        """A Watch over @path (query included, watch=1 added)."""
        return Watch(self, path, timeout)

    def test(self, what, args=None):
        return self.must("POST", "/_test/" + what, args or {})

    def state(self):
        return self.must("POST", "/_test/state", {})


class Watch:
    """Reads a chunked watch stream line by line, undoing the chunking itself so that a
    stream cut without its last chunk is told apart from a clean end."""

    def __init__(self, client, path, timeout):
        self.conn = client.connect(timeout)
        sep = "&" if "?" in path else "?"
        self.conn.request("GET", path + sep + "watch=1", headers=client.headers(None))
        self.resp = self.conn.getresponse()
        self.status = self.resp.status
        self.chunked = self.resp.getheader("Transfer-Encoding") == "chunked"
        self.buf = b""
        self.done = False

    def _fill(self):
        """Append the next chunk to buf; False at the last chunk."""
        size_line = self.resp.fp.readline()
        if not size_line:
            raise http.client.IncompleteRead(self.buf)
        size = int(size_line.split(b";")[0].strip(), 16)
        if size == 0:
            self.resp.fp.readline()
            return False
        data = self.resp.fp.read(size + 2)
        if len(data) < size + 2:
            raise http.client.IncompleteRead(self.buf + data[:size])
        self.buf += data[:size]
        return True

    def next_line(self):
        """The next raw line (bytes), b"" at a clean end of stream; raises
        http.client.IncompleteRead (with what was received) when the stream ends
        without its last chunk."""
        if not self.chunked:
            return self.resp.read()  # an error answered as a plain body
        while b"\n" not in self.buf and not self.done:
            if not self._fill():
                self.done = True
        if b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            return line + b"\n"
        line, self.buf = self.buf, b""
        return line

    def next(self):
        line = self.next_line()
        return json.loads(line) if line else None

    def events(self, n):
        return [self.next() for _ in range(n)]

    def close(self):
        self.conn.close()


class ServerTestCase(unittest.TestCase):
    """One test server for all of a class's tests (with the PKI of CLIENTS and the TOKENS and
    EXTRA flags a subclass sets), an admin client self.c, and a fresh namespace per ns()."""

    WORKDIR_PREFIX = "ksched-apiserver-"
    CLIENTS = ("admin",)
    TOKENS = ()
    EXTRA = ()
    NS_PREFIX = "t"

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix=cls.WORKDIR_PREFIX)
        cls.pki = make_pki(os.path.join(cls.tmp, "pki"), clients=cls.CLIENTS)
        cls.server = ApiServer(cls.tmp, cls.pki, tokens=cls.TOKENS, extra=list(cls.EXTRA))
        cls.c = cls.server.client("admin")
        cls.nsn = 0

    @classmethod
    def tearDownClass(cls):
        cls.c.close()
        cls.server.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def ns(self):
        """A fresh namespace for one test."""
        type(self).nsn += 1
        name = "%s%d" % (self.NS_PREFIX, self.nsn)
        self.c.must("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                    "metadata": {"name": name}})
        return name
