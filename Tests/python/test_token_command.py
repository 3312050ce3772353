"""`synchub token` (A5) checked by a third party: PyJWT verifies what the
built binary prints. Also the open-mode refusal (A1) and key-file errors
(A2) as the command line reports them."""
import subprocess, time

import pytest

from hubprocess import BIN

jwt = pytest.importorskip("jwt", reason="PyJWT is not in the venv (scripts/install-deps.sh)")
serialization = pytest.importorskip("cryptography.hazmat.primitives.serialization")
ed25519 = pytest.importorskip("cryptography.hazmat.primitives.asymmetric.ed25519")
ec = pytest.importorskip("cryptography.hazmat.primitives.asymmetric.ec")


def synchub(*args, timeout=20):
    return subprocess.run([str(BIN / "synchub"), *args], capture_output=True, text=True, timeout=timeout)


def mint(*args):
    result = synchub("token", *args)
    assert result.returncode == 0, result.stderr
    token = result.stdout.strip()
    assert result.stdout == token + "\n", "prints the token and nothing else"
    return token


@pytest.fixture
def secret_file(tmp_path):
    path = tmp_path / "hub.secret"
    path.write_bytes(bytes(range(40)))
    return path


def test_hs256_token_verifies_with_pyjwt(secret_file):
    before = int(time.time())
    token = mint("--secret-file", str(secret_file), "--sub", "ana", "--name", "Ana",
                 "--board", "set/*=write", "--board", "boards/lobby=read", "--ttl", "2h")
    claims = jwt.decode(token, secret_file.read_bytes(), algorithms=["HS256"], audience="synchub")
    assert claims["sub"] == "ana" and claims["name"] == "Ana"
    assert claims["boards"] == {"set/*": "write", "boards/lobby": "read"}
    assert isinstance(claims["exp"], int) and isinstance(claims["iat"], int)
    assert before <= claims["iat"] <= int(time.time())
    assert claims["exp"] - claims["iat"] == 7200
    assert jwt.get_unverified_header(token)["alg"] == "HS256"
    assert "kid" not in jwt.get_unverified_header(token)


def test_kid_is_written_when_given(secret_file):
    token = mint("--secret-file", str(secret_file), "--sub", "ana", "--board", "*=read", "--kid", "2026-06")
    assert jwt.get_unverified_header(token)["kid"] == "2026-06"


def test_wrong_secret_does_not_verify(secret_file, tmp_path):
    token = mint("--secret-file", str(secret_file), "--sub", "ana", "--board", "*=read")
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(token, b"another secret of at least 32 bytes!!", algorithms=["HS256"], audience="synchub")


@pytest.mark.parametrize("curve", ["ed25519", "p256"])
def test_private_key_tokens_verify_with_pyjwt(tmp_path, curve):
    key = ed25519.Ed25519PrivateKey.generate() if curve == "ed25519" else ec.generate_private_key(ec.SECP256R1())
    private = tmp_path / "issuer.pem"
    private.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    token = mint("--private-key", str(private), "--sub", "bot", "--board", "todo/*=write")
    alg = "EdDSA" if curve == "ed25519" else "ES256"
    assert jwt.get_unverified_header(token)["alg"] == alg
    claims = jwt.decode(token, key.public_key(), algorithms=[alg], audience="synchub")
    assert claims["sub"] == "bot" and claims["boards"] == {"todo/*": "write"}


def test_short_secret_is_refused_with_its_size(tmp_path):
    short = tmp_path / "short.secret"
    short.write_bytes(b"too short\n")
    result = synchub("token", "--secret-file", str(short), "--sub", "ana", "--board", "*=read")
    assert result.returncode != 0 and result.stdout == ""
    assert "holds 10 bytes" in result.stderr and "at least 32" in result.stderr


def test_bad_board_option_is_refused(secret_file):
    result = synchub("token", "--secret-file", str(secret_file), "--sub", "ana", "--board", "set/*=owner")
    assert result.returncode != 0 and "PATTERN=read, PATTERN=write or PATTERN=admin" in result.stderr


def test_open_hub_refuses_a_non_loopback_address():
    result = synchub("--host", "0.0.0.0", "--port", "0", "--in-memory")
    assert result.returncode != 0
    assert "refusing to serve an open hub on 0.0.0.0" in result.stderr
    assert "--allow-anonymous" in result.stderr


def test_hub_refuses_a_short_secret_at_start(tmp_path):
    short = tmp_path / "short.secret"
    short.write_bytes(b"x" * 31)
    result = synchub("--auth-secret-file", str(short), "--port", "0", "--in-memory")
    assert result.returncode != 0
    assert f"--auth-secret-file {short}: holds 31 bytes" in result.stderr
