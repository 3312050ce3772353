"""Tokens, keys and connections for the end-to-end tests of who may do what
(test_auth.py; docs/SECURITY.md, rules A1-A12).

Tokens are made independently of the hub: with PyJWT, or by hand for the
ones no library will make (`alg: none`, an HS256 token keyed with a public
key's PEM bytes, a payload swapped under an old signature). `synchub token`
is run only where the test says so. Keys are made per test in a temporary
directory and never leave it.

Every wait here is on a condition (a frame, a close, a line of output) with
a deadline; nothing sleeps for a fixed time.
"""
from __future__ import annotations

import base64, hashlib, hmac, json, os, pathlib, subprocess, tempfile, time

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from hubprocess import BIN, ProcessLog, free_port

AUDIENCE = "synchub"


# MARK: Keys

def secret_file(directory: pathlib.Path, kid: str = "hub", size: int = 48) -> pathlib.Path:
    """A fresh HS256 secret of `size` random bytes in `directory/KID.secret`."""
    path = pathlib.Path(directory) / f"{kid}.secret"
    path.write_bytes(os.urandom(size))
    return path


class KeyPair:
    """A fresh Ed25519 (EdDSA) or P-256 (ES256) key: the private key for
    signing, `public_file` (PEM) for the hub, `private_file` for `synchub token`."""

    def __init__(self, directory: pathlib.Path, curve: str, kid: str):
        self.private = ed25519.Ed25519PrivateKey.generate() if curve == "ed25519" else ec.generate_private_key(ec.SECP256R1())
        self.alg = "EdDSA" if curve == "ed25519" else "ES256"
        self.kid = kid
        self.public_pem = self.private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        self.public_file = pathlib.Path(directory) / f"{kid}.pem"
        self.public_file.write_bytes(self.public_pem)
        self.private_file = pathlib.Path(directory) / f"{kid}-issuer.key"
        self.private_file.write_bytes(self.private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))


# MARK: Tokens

def claims(sub="ana", name=None, boards=None, ttl=3600, **extra) -> dict:
    """The claims A4 asks for, `exp` `ttl` seconds from now; `extra` adds or
    replaces (a value of None leaves the claim out)."""
    now = int(time.time())
    body = {"sub": sub, "aud": AUDIENCE, "iat": now, "exp": now + ttl,
            "boards": {"*": "write"} if boards is None else boards}
    if name is not None:
        body["name"] = name
    body.update(extra)
    return {k: v for k, v in body.items() if v is not None}


def mint(key, body: dict, alg="HS256", kid=None) -> str:
    """A token signed by PyJWT: `key` is secret bytes, a Path to a secret
    file, or a KeyPair (its algorithm then)."""
    headers = {"kid": kid} if kid else None
    if isinstance(key, KeyPair):
        return jwt.encode(body, key.private, algorithm=key.alg, headers=headers)
    if isinstance(key, pathlib.Path):
        key = key.read_bytes()
    return jwt.encode(body, key, algorithm=alg, headers=headers)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def compact(header: dict, body: dict) -> str:
    """`header.payload` of a JWT, base64url, compact JSON."""
    encode = lambda part: b64(json.dumps(part, separators=(",", ":")).encode())
    return f"{encode(header)}.{encode(body)}"


def hs256_by_hand(secret: bytes, body: dict, header=None) -> str:
    """HS256 over any bytes at all, also a public key's PEM (PyJWT refuses that)."""
    signing_input = compact(header or {"alg": "HS256", "typ": "JWT"}, body)
    return signing_input + "." + b64(hmac.new(secret, signing_input.encode(), hashlib.sha256).digest())


def unsigned(body: dict) -> str:
    """`alg: none` with an empty signature: a token anybody can make."""
    return compact({"alg": "none", "typ": "JWT"}, body) + "."


def with_payload(token: str, body: dict) -> str:
    """`token`'s header and signature around other claims (a tampered token)."""
    header, _, signature = token.split(".")
    return f"{header}.{b64(json.dumps(body, separators=(',', ':')).encode())}.{signature}"


def synchub_token(*args) -> str:
    """`synchub token ARGS...`: the token it prints."""
    done = subprocess.run([str(BIN / "synchub"), "token", *map(str, args)], capture_output=True, text=True, timeout=20)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


# MARK: The hub

class AuthHub:
    """The real synchub with any flags (in memory, on a free port), its
    output kept in a file; `listening on` means it is ready."""

    def __init__(self, *flags, host="127.0.0.1", log_level="warning"):
        self.port = free_port()
        self.host = host
        self.log = ProcessLog()
        args = [str(BIN / "synchub"), "--port", str(self.port), "--host", host, "--in-memory",
                "--log-level", log_level, *map(str, flags)]
        self.proc = subprocess.Popen(args, stdout=self.log.child, stderr=subprocess.STDOUT)
        deadline = time.time() + 15
        while time.time() < deadline:
            if b"listening on " in self.raw_output():
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.02)
        self.stop()
        raise RuntimeError("hub did not start: " + self.output())

    def url(self, path: str, host=None) -> str:
        return f"ws://{host or '127.0.0.1'}:{self.port}/{path}"

    def http(self, path: str, host=None) -> str:
        return f"http://{host or '127.0.0.1'}:{self.port}/{path}"

    def raw_output(self) -> bytes:
        self.log.seek(0)
        return self.log.read()

    def output(self) -> str:
        return self.raw_output().decode(errors="replace")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# MARK: Connections

class Refused(Exception):
    """The upgrade was answered with an HTTP status instead of 101."""

    def __init__(self, status: int, headers):
        super().__init__(f"HTTP {status}")
        self.status = status
        self.headers = headers

    @property
    def challenge(self) -> str:
        """The `WWW-Authenticate` header (RFC 6750), or ''."""
        return self.headers.get("WWW-Authenticate", "")


class Conn:
    """One board connection (websockets' sync client) that remembers every
    frame it read; `closed` is (code, reason) once the hub has closed it."""

    def __init__(self, url: str, token: str | None = None, origin=None):
        headers = {"Authorization": f"Bearer {token}"} if token else None
        try:
            self.ws = connect(url, additional_headers=headers, origin=origin, open_timeout=10).__enter__()
        except InvalidStatus as refused:
            raise Refused(refused.response.status_code, refused.response.headers) from None
        self.frames: list[dict] = []
        self.closed: tuple[int, str] | None = None
        self.refs = 0

    def send(self, frame: dict) -> str:
        """Sends `frame` with a fresh ref; returns the ref."""
        self.refs += 1
        ref = f"t{self.refs}"
        self.ws.send(json.dumps({**frame, "ref": ref}))
        return ref

    def send_raw(self, frame: dict):
        self.ws.send(json.dumps(frame))

    def auth(self, token: str):
        """The `auth` frame (first frame, or a refresh without a ref)."""
        self.send_raw({"type": "auth", "token": token})

    def recv(self, timeout=10) -> dict:
        """The next frame; raises ConnectionClosed (recording `closed`) or TimeoutError."""
        try:
            frame = json.loads(self.ws.recv(timeout=timeout))
        except ConnectionClosed as closed:
            if closed.rcvd is not None:
                self.closed = (closed.rcvd.code, closed.rcvd.reason)
            raise
        self.frames.append(frame)
        return frame

    def until(self, predicate, timeout=10) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no such frame within {timeout} s; frames seen: {self.frames[-8:]}")
            try:
                frame = self.recv(left)
            except TimeoutError:
                continue
            if predicate(frame):
                return frame

    def state(self, timeout=10) -> dict:
        return self.until(lambda m: m["type"] == "state", timeout)

    def state_at(self, version: int, timeout=10) -> dict:
        """The first state at or after `version`, perhaps one already read
        (a state may arrive before the ack that named its version)."""
        seen = next((m for m in self.frames if m["type"] == "state" and m["version"] >= version), None)
        return seen or self.until(lambda m: m["type"] == "state" and m["version"] >= version, timeout)

    def latest_state(self) -> dict | None:
        return next((m for m in reversed(self.frames) if m["type"] == "state"), None)

    def answer(self, ref: str, timeout=10) -> dict:
        return self.until(lambda m: m.get("ref") == ref and m["type"] in ("ack", "rejected", "error", "sync"), timeout)

    def ask(self, frame: dict, timeout=10) -> dict:
        return self.answer(self.send(frame), timeout)

    def close_event(self, timeout=10) -> tuple[int, str]:
        """Reads until the hub closes; returns (code, reason)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"not closed within {timeout} s; frames seen: {self.frames[-8:]}")
            try:
                self.recv(left)
            except TimeoutError:
                continue
            except ConnectionClosed:
                assert self.closed is not None, "closed without a close frame"
                return self.closed

    def closed_without_frames(self, timeout=10) -> tuple[int, str]:
        """The hub's close, asserting it sent nothing before it (A6)."""
        seen = len(self.frames)
        code = self.close_event(timeout)
        assert self.frames[seen:] == [], f"frames before the close: {self.frames[seen:]}"
        return code

    def nothing_within(self, seconds: float) -> bool:
        """True when no frame (and no close) arrives for `seconds`."""
        try:
            frame = self.recv(seconds)
        except TimeoutError:
            return True
        raise AssertionError(f"the hub sent {frame} before it should have")

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass


def open_with_token(url: str, token: str, header: bool) -> Conn:
    """A connection presenting `token` as the header (A6, scripts) or as
    the first frame (A6, browsers)."""
    if header:
        return Conn(url, token)
    conn = Conn(url)
    conn.auth(token)
    return conn


def refused_upgrade(url: str, token: str | None = None, **kwargs) -> Refused:
    """The HTTP refusal of an upgrade the test expects to be refused."""
    try:
        conn = Conn(url, token, **kwargs)
    except Refused as refused:
        return refused
    conn.close()
    raise AssertionError(f"the upgrade to {url} was not refused")
