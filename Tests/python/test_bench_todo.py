"""`syncclient bench --kind todo` against the real hub: its summary, never its speed (issue 11)."""
from test_bench import run_bench


def test_todo_bench_edits_lists_and_converges(hub):
    # Clients on two reminder lists: each list's first client fills it to 12
    # items, then every client edits titles (with base), flips done, adds and
    # deletes from the list it was shown; every client of a list ends on the
    # same items, and nothing the hub sent was an error.
    report = run_bench(hub, "--kind", "todo", "--boards", 2, "--clients", 4, "--items", 12,
                       "--rate", 120, "--duration", 2, "--warmup", 0.5)
    assert report["kind"] == "todo"
    assert report["converged"] is True and report["divergentBoards"] == []
    assert report["connected"] == 8 and report["connectFailures"] == 0 and report["disconnects"] == 0
    assert report["errors"] == 0
    sent = report["intentsSent"]
    assert sent.get("edit", 0) > 0 and sent.get("done", 0) > 0
    assert sent.get("add", 0) + sent.get("delete", 0) > 0
    assert report["operationsAcknowledged"] > 0
    # The only refusal concurrent clients cause is an item deleted meanwhile.
    assert set(report["refusals"]) <= {"no_such_item"}
    # The lists were filled and stay near their size (adds below it, deletes at it).
    assert report["todo"]["target"] == 12
    assert set(report["todo"]["finalItems"]) == {"bench-0", "bench-1"}
    assert all(6 <= count <= 24 for count in report["todo"]["finalItems"].values())
    # Every acknowledged change reached every client of its list.
    assert report["unseen"] == 0 and report["visibilityAtEveryClientMillis"]["count"] > 0


def test_todo_bench_refuses_bad_items():
    import subprocess
    from hubprocess import BIN
    out = subprocess.run([str(BIN / "syncclient"), "bench", "ws://127.0.0.1:1", "--kind", "todo", "--items", "0"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode != 0 and "--items must be positive" in out.stderr


def test_connect_only_presents_each_listed_token(make_hub, tmp_path):
    # A hub that checks HS256 tokens; a list of three distinct tokens and one
    # token signed with another secret: the bench gives connection i token
    # i mod 4, so exactly a quarter of the connections are refused.
    import json, subprocess
    from hubprocess import BIN
    secret, other = tmp_path / "hub.secret", tmp_path / "other.secret"
    secret.write_bytes(b"s" * 40)
    other.write_bytes(b"o" * 40)

    def token(key, sub):
        out = subprocess.run([str(BIN / "synchub"), "token", "--secret-file", str(key), "--sub", sub, "--board", "*=write"],
                             capture_output=True, text=True, timeout=30, check=True)
        return out.stdout.strip()
    listed = tmp_path / "tokens.txt"
    listed.write_text("\n".join([token(secret, "a"), token(secret, "b"), token(secret, "c"), token(other, "d")]) + "\n\n")
    hub = make_hub(extra=["--auth-secret-file", str(secret)])
    out = subprocess.run([str(BIN / "syncclient"), "bench", f"ws://127.0.0.1:{hub.port}", "--connect-only",
                          "--connections", "40", "--concurrency", "4", "--token-list", str(listed), "--json", "--quiet"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["token"] is True
    assert report["succeeded"] == 30 and report["failed"] == 10
    assert "401" in report["firstFailure"]


def test_token_list_is_only_for_connect_only(tmp_path):
    import subprocess
    from hubprocess import BIN
    listed = tmp_path / "tokens.txt"
    listed.write_text("x\n")
    out = subprocess.run([str(BIN / "syncclient"), "bench", "ws://127.0.0.1:1", "--token-list", str(listed)],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode != 0 and "--token-list is for --connect-only" in out.stderr
