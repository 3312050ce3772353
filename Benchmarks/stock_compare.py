import json, subprocess, time, sys, os
BIN = "/work/main/.build-sb/release"
out = []
for rep in range(3):
    for kind in (["stock", "letters"] if rep % 2 == 0 else ["letters", "stock"]):
        hub = subprocess.Popen([f"{BIN}/synchub", "--in-memory", "--port", "18912", "--rate", "10000000", "--burst", "10000000"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.7)
        cmd = [f"{BIN}/syncclient", "bench", "ws://127.0.0.1:18912", "--kind", kind, "--clients", "50",
               "--duration", "10", "--warmup", "1", "--json", "--quiet", "--hub-pid", str(hub.pid), "--prefix", f"cmp{rep}"]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        hub.terminate(); hub.wait()
        rep_json = json.loads(r.stdout.strip().splitlines()[-1])
        rep_json["_rc"] = r.returncode; rep_json["_kind"] = kind; rep_json["_rep"] = rep
        out.append(rep_json)
        s = rep_json.get("stock") or {}
        print(kind, rep, "rc", r.returncode, "acked/s", round(rep_json["acknowledgedPerSecond"]), "answers/s", round(rep_json.get("answersPerSecond") or rep_json["acknowledgedPerSecond"]),
              "refusals/s", round(rep_json.get("refusalsPerSecond") or 0), "made/s", round(s.get("juicesMadePerSecond", 0)),
              "p99 vis", rep_json["visibilityMillis"]["p99"], "p99 every", rep_json["visibilityAtEveryClientMillis"]["p99"],
              "hubCPU", rep_json.get("hubCPUPercent"), "benchCPU", rep_json.get("benchCPUPercent"),
              "conv", rep_json["converged"], "viol", s.get("countViolations"), "states", s.get("statesChecked"), "conserved", s.get("conserved"), flush=True)
json.dump(out, open("/tmp/stock-bench-compare.json", "w"), indent=1)
