#!/usr/bin/env python3
"""The shop's images in a browser (issue 20; BENCHMARKS.md "The banchan shop").

    .build/pyvenv/bin/python Benchmarks/shop_images.py [--bin DIR] [--reps 3]

A fresh hub (`--in-memory`, release build in --bin, default .build/release)
serves /shop/NAME with the sample catalog. Headless Chromium at 375x812 (the
browser tests' phone) opens the page, waits until every thumbnail in view
has loaded, scrolls to the bottom and waits for the rest, then reloads the
page and does the same. Chromium's performance log (the DevTools Network
domain) gives each image request: whether it went to the network, its
status, and the bytes that came over the wire (`encodedDataLength`). Each
repetition uses a new browser profile (a cold cache). Prints requests and
bytes for the first load and the reload, per kind of request.
"""
import argparse, json, pathlib, socket, statistics, subprocess, sys, tempfile, time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def browser():
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=375,812",
                f"--user-data-dir={tempfile.mkdtemp(prefix='shop-images-')}"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)


def wait(driver, script, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if driver.execute_script(script):
            return
        time.sleep(0.05)
    raise RuntimeError(f"never true: {script}")


ALL_LOADED = "return [...document.querySelectorAll('#sections img')].length >= 12 && " \
             "[...document.querySelectorAll('#sections img')].every(i => i.complete && i.naturalWidth > 0)"


def load(driver, url):
    driver.get(url)
    wait(driver, "return document.body.dataset.conn === 'live' && document.querySelectorAll('#sections img').length >= 12")
    driver.execute_script("document.getElementById('main').scrollTop = 1e6")
    wait(driver, ALL_LOADED)


def image_traffic(entries):
    """Per image request: (status, bytes over the wire, from cache)."""
    requests, finished = {}, {}
    for entry in entries:
        message = json.loads(entry["message"])["message"]
        params = message.get("params", {})
        if message["method"] == "Network.responseReceived" and "/shop/" in params["response"]["url"] and "/images/" in params["response"]["url"]:
            entry = requests.setdefault(params["requestId"], {"fromCache": False})
            entry["status"] = params["response"]["status"]
            entry["url"] = params["response"]["url"]
            entry["fromCache"] = entry["fromCache"] or bool(params["response"].get("fromDiskCache") or params["response"].get("fromMemoryCache"))
        elif message["method"] == "Network.loadingFinished":
            finished[params["requestId"]] = params.get("encodedDataLength", 0)
        elif message["method"] == "Network.requestServedFromCache":
            requests.setdefault(params["requestId"], {"status": 200})["fromCache"] = True
    # Requests of Chromium's own pages (no shop URL) are left out.
    return [{**r, "bytes": finished.get(rid, 0)} for rid, r in requests.items() if "url" in r]


def summary(traffic):
    if "--urls" in sys.argv: print(sorted(t.get("url", "?").rsplit("/", 1)[-1] for t in traffic))
    network = [t for t in traffic if not t["fromCache"]]
    return {"urls": len({t.get("url") for t in traffic}), "images": len(traffic), "overTheNetwork": len(network), "fromCache": len(traffic) - len(network),
            "status304": sum(1 for t in network if t["status"] == 304), "bytes": sum(t["bytes"] for t in network)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", type=pathlib.Path, default=ROOT / ".build" / "release")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--urls", action="store_true", help="print the image names requested")
    args = parser.parse_args()
    port = free_port()
    hub = subprocess.Popen([str(args.bin / "synchub"), "--port", str(port), "--in-memory", "--log-level", "error"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
    results = []
    try:
        for rep in range(args.reps):
            driver = browser()
            try:
                url = f"http://127.0.0.1:{port}/shop/images-{rep}?name=ana"
                load(driver, url)
                first = summary(image_traffic(driver.get_log("performance")))
                load(driver, url)
                again = summary(image_traffic(driver.get_log("performance")))
            finally:
                driver.quit()
            results.append({"first": first, "reload": again})
            if "--urls" in sys.argv: print(first)
            print(f"  rep {rep + 1}: first {first}, reload {again}", flush=True)
    finally:
        hub.terminate()
        hub.wait(10)
    print("\n| load | images shown | requests over the network | answered 304 | from the browser's cache | bytes over the network |")
    print("| --- | --- | --- | --- | --- | --- |")
    for key, label in (("first", "first load (cold cache)"), ("reload", "reload (warm cache)")):
        rs = [r[key] for r in results]
        med = lambda k: statistics.median(r[k] for r in rs)
        print(f"| {label} | {med('images'):.0f} | {med('overTheNetwork'):.0f} | {med('status304'):.0f} | {med('fromCache'):.0f} | {med('bytes'):,.0f} |")
    out = ROOT / "Benchmarks" / "results" / "shop-images-latest.json"
    out.write_text(json.dumps(results, indent=1))
    print(f"\nraw results: {out}")


if __name__ == "__main__":
    main()
