"""`syncclient bench` against the real hub: its summary, never its speed (issue 5)."""
import copy, itertools, json, math, subprocess, sys
import pytest
from hubprocess import Hub, BIN, ROOT


def run_bench(hub, *args):
    out = subprocess.run([str(BIN / "syncclient"), "bench", f"ws://127.0.0.1:{hub.port}", "--json", "--quiet",
                          "--hub-pid", str(hub.proc.pid), *map(str, args)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_paced_bench_converges_and_its_counts_add_up(hub):
    report = run_bench(hub, "--boards", 3, "--clients", 4, "--rate", 60, "--duration", 2, "--warmup", 0.5)
    assert report["converged"] is True and report["divergentBoards"] == []
    assert report["connected"] == 12 and report["connectFailures"] == 0 and report["disconnects"] == 0
    assert report["errors"] == 0
    assert report["operationsAcknowledged"] > 0
    # Every acknowledged change was seen by every client of its board: one
    # visibility sample per (change, client), none unseen.
    changes = round(report["changesPerSecond"] * report["seconds"])
    assert report["unseen"] == 0
    assert report["visibilityMillis"]["count"] == changes * 4
    assert report["visibilityAtEveryClientMillis"]["count"] == changes
    assert report["ackMillis"]["count"] == report["operationsAcknowledged"] + report["operationsRejected"]
    assert report["hubRSSMiB"] > 0 and report["benchCPUPercent"] >= 0


def test_histogram_holds_every_visibility_sample_and_its_percentiles(hub):
    # `--histogram` (pooling runs, Benchmarks/paced_letters.py --slices): the
    # buckets hold exactly the samples the percentiles were read from.
    report = run_bench(hub, "--clients", 4, "--rate", 40, "--duration", 1.5, "--warmup", 0.3, "--histogram")
    buckets = report["visibilityHistogram"]
    assert buckets and all(count > 0 for _, count in buckets)
    values = [value for value, _ in buckets]
    assert values == sorted(values) and len(set(values)) == len(values)
    total = sum(count for _, count in buckets)
    assert total == report["visibilityMillis"]["count"] > 0
    # The p99 read back from the buckets as the histogram reads it (the
    # first bucket where the running count reaches 99 %) is the report's own.
    wanted = math.ceil(math.nextafter(99.0, 0.0) * total / 100)
    running = itertools.accumulate(count for _, count in buckets)
    p99 = next(value for value, upto in zip(values, running) if upto >= wanted)
    # (HdrHistogram caps a percentile at the largest sample, which a bucket's
    # upper edge may pass.)
    assert min(round(p99 / 1e6, 3), report["visibilityMillis"]["max"]) == report["visibilityMillis"]["p99"]
    # The last bucket holds the largest sample (its upper edge, within the
    # histogram's resolution of 0.1 %).
    assert values[-1] / 1e6 == pytest.approx(report["visibilityMillis"]["max"], rel=0.002, abs=0.001)
    # Without the flag the report has no histogram.
    assert "visibilityHistogram" not in run_bench(hub, "--clients", 2, "--rate", 20, "--duration", 0.5, "--warmup", 0.2)


def test_pooled_slices_read_the_percentiles_of_all_their_samples(hub):
    # Benchmarks/paced_letters.py --slices pools each server's slices with
    # `pooled`: one slice alone gives back its own figures, two give the
    # figures of all their samples and the sums of their counters.
    sys.path.insert(0, str(ROOT / "Benchmarks"))
    from paced_letters import pooled
    args = ("--clients", 4, "--rate", 40, "--duration", 1, "--warmup", 0.3, "--histogram")
    one, two = run_bench(hub, *args), run_bench(hub, *args)
    alone = pooled([copy.deepcopy(one)])
    assert alone["visibilityMillis"] == one["visibilityMillis"]
    both = pooled([copy.deepcopy(one), copy.deepcopy(two)])
    assert both["visibilityMillis"]["count"] == one["visibilityMillis"]["count"] + two["visibilityMillis"]["count"]
    for key in ("operationsAcknowledged", "errors", "unseen", "seconds"):
        assert both[key] == one[key] + two[key]
    for q in ("p50", "p90", "p99", "p999", "max"):
        low, high = sorted((one["visibilityMillis"][q], two["visibilityMillis"][q]))
        assert low <= both["visibilityMillis"][q] <= high, q
    assert both["slicesVisibilityP99"] == [one["visibilityMillis"]["p99"], two["visibilityMillis"]["p99"]]
    assert both["converged"] is True


def test_histogram_needs_an_operations_report(hub):
    for extra in ([], ["--json", "--connect-only"]):
        out = subprocess.run([str(BIN / "syncclient"), "bench", f"ws://127.0.0.1:{hub.port}", "--histogram", *extra],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 2 and "--histogram adds to the --json report" in out.stderr


def test_saturated_bench_converges(make_hub):
    hub = make_hub(extra=["--rate", "1000000", "--burst", "1000000"])
    report = run_bench(hub, "--clients", 8, "--duration", 1, "--warmup", 0.5, "--in-flight", 32)
    assert report["converged"] is True and report["divergentBoards"] == []
    assert report["mode"] == "saturated"
    assert report["operationsAcknowledged"] > 0 and report["unseen"] == 0


def test_idle_bench_only_connects(hub):
    report = run_bench(hub, "--clients", 20, "--idle", "--duration", 0.5, "--warmup", 0)
    assert report["connected"] == 20 and report["connectFailures"] == 0 and report["disconnects"] == 0
    # Nobody sent anything: no sender, no answer of either kind, no change.
    assert report["sendersPerBoard"] == 0
    assert report["operationsAcknowledged"] == 0 and report["operationsRejected"] == 0
    assert report["ackMillis"]["count"] == 0 and report["changesPerSecond"] == 0
    assert report["converged"] is True


def test_set_bench_plays_and_converges(hub):
    # Players on two Set tables: they join, choose cards from the tables they
    # are shown, and every player of a table ends on the same table.
    report = run_bench(hub, "--kind", "set", "--boards", 2, "--clients", 3, "--rate", 60, "--duration", 2, "--warmup", 0.5)
    assert report["kind"] == "set"
    assert report["converged"] is True and report["divergentBoards"] == []
    assert report["connected"] == 6 and report["connectFailures"] == 0 and report["disconnects"] == 0
    assert report["errors"] == 0
    assert report["answersPerSecond"] > 0 and report["operationsAcknowledged"] > 0
    assert report["intentsSent"].get("choose", 0) > 0
    assert report["matches"] > 0
    assert report["unseen"] == 0


def test_stock_bench_keeps_counts_in_range_and_conserves_fruit(hub):
    # Clients on a juice bar make random juices and restock: every state any
    # client received keeps each count in 0...999, every client ends on the
    # same stock, and the stock equals its start plus the acknowledged
    # restocks minus the fruit of the acknowledged makes.
    report = run_bench(hub, "--kind", "stock", "--clients", 4, "--rate", 200, "--duration", 2, "--warmup", 0.5)
    assert report["kind"] == "stock"
    assert report["converged"] is True and report["errors"] == 0 and report["connectFailures"] == 0
    stock = report["stock"]
    assert stock["countViolations"] == 0 and stock["statesChecked"] > 0
    assert stock["conserved"] is True and stock["conservation"]["bench-0"]["makesAcknowledged"] > 0
    assert report["intentsSent"].get("make", 0) > 0 and report["intentsSent"].get("restock", 0) > 0
    assert set(report["refusals"]) <= {"not_enough_fruit", "out_of_range"}
    assert report["unseen"] == 0


def test_shop_bench_never_oversells_and_conserves_stock(hub):
    # Customers order 1-3 of a dish on sale at the price they were shown, and
    # now and then restock: every state any client received keeps every stock
    # at 0 or more (PC1), every client ends on the same shop, and each dish's
    # stock equals its start plus acknowledged restocks minus acknowledged orders.
    report = run_bench(hub, "--kind", "shop", "--clients", 4, "--rate", 200, "--duration", 2, "--warmup", 0.5)
    assert report["kind"] == "shop"
    assert report["converged"] is True and report["errors"] == 0 and report["connectFailures"] == 0
    shop = report["shop"]
    assert shop["stockViolations"] == 0 and shop["statesChecked"] > 0
    assert shop["conserved"] is True, shop["unconserved"]
    assert report["intentsSent"].get("order", 0) > 0 and report["intentsSent"].get("restock", 0) > 0
    assert set(report["refusals"]) <= {"sold_out", "not_enough_stock", "price_changed", "unavailable", "out_of_range"}
    assert report["unseen"] == 0


def test_bench_spreads_clients_over_several_hubs_and_splits_visibility(hub):
    # R12: with several hub URLs each board's clients alternate between them and
    # the visibility samples split by where the receiver is. The same hub given
    # twice needs no cluster: clients 0 and 2 are on "hub 0", 1 and 3 on "hub 1",
    # so each change has two receivers on its sender's hub (the sender included)
    # and two on the other.
    url = f"ws://127.0.0.1:{hub.port}"
    out = subprocess.run([str(BIN / "syncclient"), "bench", url, url, "--json", "--quiet",
                          "--hub-pid", str(hub.proc.pid), "--hub-pid", str(hub.proc.pid),
                          "--clients", "4", "--rate", "60", "--duration", "2", "--warmup", "0.5"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["converged"] is True and report["unseen"] == 0 and report["connected"] == 4
    assert report["hubs"] == [url, url] and report["hubProcesses"] == 2
    same, cross = report["visibilitySameHubMillis"], report["visibilityCrossHubMillis"]
    assert same["count"] > 0 and same["count"] == cross["count"]
    assert same["count"] + cross["count"] == report["visibilityMillis"]["count"]
    # One hub: the report is as before, without the split.
    single = run_bench(hub, "--clients", 2, "--rate", 20, "--duration", 0.5, "--warmup", 0.2, "--prefix", "one")
    assert not {"hubs", "hubProcesses", "visibilitySameHubMillis", "visibilityCrossHubMillis"} & set(single)


def test_raw_bytes_pads_every_message_the_broadcaster_relays(hub):
    # `--raw --raw-bytes N` (Benchmarks/paced_letters.py, a ceiling that
    # carries the hub's bytes): every frame the tool reads from the raw
    # broadcaster is an echo of one of its messages, so with the padding each
    # is exactly N bytes; without it, the bare echo is far shorter. Against
    # the hub the report gives the mean of its frames too.
    sys.path.insert(0, str(ROOT / "Benchmarks"))
    import campaign
    saved_bin, campaign.BIN = campaign.BIN, BIN
    raw = campaign.Server("raw")
    try:
        def run(*extra):
            out = subprocess.run([str(BIN / "syncclient"), "bench", f"ws://127.0.0.1:{raw.port}", "--json", "--quiet", "--raw",
                                  "--clients", "3", "--rate", "30", "--duration", "1", "--warmup", "0.3", *map(str, extra)],
                                 capture_output=True, text=True, timeout=60)
            assert out.returncode == 0, out.stderr
            return json.loads(out.stdout.strip().splitlines()[-1])
        padded, bare = run("--raw-bytes", 150), run()
    finally:
        raw.stop()
        campaign.BIN = saved_bin
        sys.path.remove(str(ROOT / "Benchmarks"))
    assert padded["framesDeliveredPerSecond"] > 0 and padded["meanFrameBytes"] == 150
    assert 0 < bare["meanFrameBytes"] < 100
    assert run_bench(hub, "--clients", 3, "--rate", 30, "--duration", 1, "--warmup", 0.3)["meanFrameBytes"] > 50
    # Padding is for the broadcaster's messages only, and bounded (below 96
    # bytes a bare message could not be padded to the size asked).
    bounds = "--raw-bytes must be 0 (no padding) or 96...1048576"
    for args, message in ((["--raw-bytes", "150"], "--raw-bytes pads the messages of --raw"),
                          (["--raw", "--raw-bytes=-1"], bounds), (["--raw", "--raw-bytes", "95"], bounds),
                          (["--raw", "--raw-bytes", str(2 << 20)], bounds)):
        out = subprocess.run([str(BIN / "syncclient"), "bench", f"ws://127.0.0.1:{hub.port}", *args],
                             capture_output=True, text=True, timeout=30)
        assert out.returncode != 0 and message in out.stderr, out.stderr
