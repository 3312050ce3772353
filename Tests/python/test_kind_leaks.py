"""Issue 33: a kind lives in its folders. A sixth kind should be its
`Kinds/NAME/` folders (BoardCRDT, SyncWire, SyncHub, syncclient), its page
under `Sources/SyncHub/Web/`, and one line per table (HostedKinds.all,
WatchedKinds, the proxy's location). These tests read the tree (no build):

- every place in `Sources/` outside a `Kinds/` folder that names a kind
  (its type, or its path segment as a string: `"set"`, `"/set/..."`) is
  listed below with how many lines do; a new place, or more lines in a
  listed one, fails. The list is what is left to move into the kinds'
  folders (docs/ARCHITECTURE.md, "Adding a kind"); it only ever shrinks.
- the tables outside Sources that must name every kind do: the shipped
  proxy's WebSocket and page location, and the README's list of kinds.
"""
import collections, pathlib, re

ROOT = pathlib.Path(__file__).resolve().parents[2]

# What still names a kind outside its folders (file -> lines). Remove an
# entry when its file stops naming kinds; never add one without a reason.
KNOWN = {
    # "boards" there is not the letter kind's path segment but a word of
    # its own that happens to be spelt alike: the token claim (A4), the
    # admin API's collection `/admin/api/boards` and `syncclient admin boards`.
    "Sources/SyncHub/Auth/TokenClaims.swift": 1,           # the `boards` claim
    "Sources/SyncHub/Shell/HubServer+Admin.swift": 3,      # the routes of /admin/api/boards
    "Sources/syncclient/Admin/AdminActions.swift": 1,      # POST /admin/api/boards/KIND/NAME/ACTION
    "Sources/syncclient/Admin/AdminReads.swift": 3,        # `admin boards`, GET /admin/api/boards/KIND/NAME
}


def kinds():
    """(type names, path segments) as the kinds' own folders declare them."""
    types, segments = set(), set()
    for path in (ROOT / "Sources/BoardCRDT/Kinds").rglob("*.swift"):
        types |= set(re.findall(r"public enum (\w+): BoardKind", path.read_text()))
    for path in (ROOT / "Sources/SyncWire/Kinds").rglob("*.swift"):
        segments |= set(re.findall(r'pathSegment = "(\w+)"', path.read_text()))
    return sorted(types), sorted(segments)


def test_the_kinds_are_found_in_their_folders():
    types, segments = kinds()
    assert len(types) == len(segments) >= 5, (types, segments)


def test_no_new_place_outside_the_kinds_folders_names_a_kind():
    types, segments = kinds()
    alternatives = "|".join(segments)
    naming = re.compile(r"\b(" + "|".join(types) + r")\b|[\"/](" + alternatives + r")/|\"(" + alternatives + r")\"")
    found = collections.Counter()
    for path in sorted((ROOT / "Sources").rglob("*.swift")):
        relative = path.relative_to(ROOT).as_posix()
        if "/Kinds/" in relative:
            continue
        for line in path.read_text().splitlines():
            if not line.strip().startswith("//") and naming.search(line):
                found[relative] += 1
    grown = {place: count for place, count in found.items() if count > KNOWN.get(place, 0)}
    assert not grown, ("these name a kind outside its folders (move it into Kinds/, or say why here): "
                       + ", ".join(f"{place} ({count} lines, {KNOWN.get(place, 0)} known)" for place, count in sorted(grown.items())))


def test_the_shipped_proxy_carries_every_kind():
    _, segments = kinds()
    conf = (ROOT / "deploy/nginx.conf").read_text()
    location = re.search(r"location ~ \^/\(([^)]*)\)/", conf)
    assert location, "deploy/nginx.conf has no location for the boards' paths"
    assert sorted(location.group(1).split("|")) == segments, location.group(0)


def test_the_readme_lists_every_kind():
    _, segments = kinds()
    readme = (ROOT / "README.md").read_text()
    missing = [segment for segment in segments if f"/{segment}/" not in readme]
    assert not missing, f"README.md never shows a path of: {missing}"
