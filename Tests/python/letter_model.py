"""An independent reference model of the letter board (issue #9).

Written from the rules in docs/rules/letters.md (B2-B10) and the merge construction in
docs/SEMANTICS.md (sections 1, 2, 4, 5, 6, 7), not from the Swift engine:

- the state is a list of at most 6 selections, each a letter and the id
  ``(replica, seq)`` of the operation that picked it (section 6: a reset
  clears the picks its sender saw, named by those ids);
- the state of a board is the replay of every operation, sorted by stamp
  ``(lamport, replica)``, through the sequential rules below, starting from
  the checkpoint's state (empty for a board never compacted);
- ``prepare`` turns a person's intent into the change that travels
  (section 2 and 4), against the state the person sees.

Operations are the wire's JSON objects:
``{"id": [replica, seq], "lamport": L, "change": {"op": ...}}``.
Nothing here does I/O; the model is plain lists and dicts so that it can be
read against docs/rules/letters.md line by line.
"""

CAPACITY = 6  # B5
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"  # B1


class Refused(Exception):
    """An intent the rules refuse (B5, B10): nothing is recorded."""

    def __init__(self, code):
        super().__init__(code)
        self.code = code


def op_id(op):
    """(replica, seq) of a wire operation."""
    replica, seq = op["id"]
    return (replica, seq)


def stamp(op):
    """The total order every replica computes: Lamport time, then replica id."""
    return (op["lamport"], op["id"][0])


def order_of(selections):
    """The selection order (B2): the letters, place 1 first."""
    return [letter for letter, _ in selections]


def _index(selections, letter):
    for i, (l, _) in enumerate(selections):
        if l == letter:
            return i
    return None


def apply(selections, change, oid):
    """Replays one change made by operation ``oid``, in place. Returns
    ``"changed"``, ``"unchanged"`` or ``"refused"``; never raises on a
    well-formed change (every change applies in every state)."""
    kind = change["op"]
    if kind == "select":  # B4, B5, B9
        letter = change["letter"]
        if _index(selections, letter) is not None:
            return "unchanged"
        if len(selections) >= CAPACITY:
            return "refused"  # C4: the earliest stamps win; this one stays refused
        selections.append((letter, tuple(oid)))
        return "changed"
    if kind == "deselect":  # B6, B9
        i = _index(selections, change["letter"])
        if i is None:
            return "unchanged"
        del selections[i]
        return "changed"
    if kind == "move":  # B7 and SEMANTICS section 4
        letter = change["letter"]
        i = _index(selections, letter)
        if i is None:
            return "unchanged"  # a concurrent deselect won (C3)
        before = list(selections)
        picked = selections.pop(i)  # lifted out; it keeps the pick that made it
        anchor = _index(selections, change["anchor"]) if change["anchor"] != letter else None
        if anchor is not None:
            at = anchor if change["side"] == "before" else anchor + 1
        else:
            place = max(1, min(change["place"], len(selections) + 1))
            at = place - 1
        selections.insert(at, picked)
        return "changed" if selections != before else "unchanged"
    if kind == "reset":  # B8 and SEMANTICS section 6
        seen = {tuple(s) for s in change["seen"]}
        kept = [s for s in selections if s[1] not in seen]
        if len(kept) == len(selections):
            return "unchanged"
        selections[:] = kept
        return "changed"
    raise ValueError(f"unknown change {change!r}")


def replay(operations, start=(), frontier=(0, 0)):
    """The state defined by ``operations``: those stamped after ``frontier``,
    sorted by stamp, applied to ``start`` (a checkpoint's selections)."""
    selections = [(letter, tuple(by)) for letter, by in start]
    for op in sorted((o for o in operations if stamp(o) > tuple(frontier)), key=stamp):
        apply(selections, op["change"], op_id(op))
    return selections


def prepare(selections, intent):
    """A person's intent, checked against the state they see, as the change
    to record; None when it records nothing (B9); raises Refused (B5, B10).

    intent: ("select", L) | ("deselect", L) | ("move", L, place) | ("reset",)
    """
    kind = intent[0]
    if kind == "select":
        if _index(selections, intent[1]) is not None:
            return None
        if len(selections) >= CAPACITY:
            raise Refused("board_full")
        return {"op": "select", "letter": intent[1]}
    if kind == "deselect":
        if _index(selections, intent[1]) is None:
            return None
        return {"op": "deselect", "letter": intent[1]}
    if kind == "move":
        letter, place = intent[1], intent[2]
        i = _index(selections, letter)
        if i is None:
            raise Refused("not_selected")
        if not 1 <= place <= len(selections):
            raise Refused("bad_place")
        if place == i + 1:
            return None
        # Dropped on the place of the letter that holds it: just before it when
        # moving towards the front, just after it when moving towards the back.
        anchor = selections[place - 1][0]
        side = "before" if place < i + 1 else "after"
        return {"op": "move", "letter": letter, "anchor": anchor, "side": side, "place": place}
    if kind == "reset":
        if not selections:
            return None
        return {"op": "reset", "seen": [list(by) for _, by in selections]}
    raise ValueError(f"unknown intent {intent!r}")


def valid_state(order):
    """B2: 0 to 6 distinct letters A-Z."""
    return (isinstance(order, list) and len(order) <= CAPACITY and len(set(order)) == len(order)
            and all(isinstance(l, str) and len(l) == 1 and l in LETTERS for l in order))


def checkpoint_selections(checkpoint):
    """The selections of a wire checkpoint ``{"state": {"selections": [...]}, ...}``."""
    return [(s["letter"], tuple(s["selectedBy"])) for s in checkpoint["state"]["selections"]]


def checkpoint_frontier(checkpoint):
    f = checkpoint["frontier"]
    return (f["lamport"], f["replica"])


def checkpoint_versions(checkpoint):
    """{replica: highest seq folded into the checkpoint}."""
    return {r: s for r, s in checkpoint.get("versions", [])}


def checkpoint_forget_horizon(checkpoint):
    """Ops of replicas the hub forgot (no entry in `versions`) stamped at or
    before this stamp are folded into the checkpoint too (replica forgetting)."""
    f = checkpoint.get("forgetHorizon") or {"lamport": 0, "replica": 0}
    return (f["lamport"], f["replica"])
