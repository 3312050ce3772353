"""The reference model of randomized_hub.py against docs/rules/letters.md and the worked
cases of docs/SEMANTICS.md section 3 (no hub needed: a few milliseconds)."""
import pytest
import letter_model as m


class Scenario:
    """Replicas 1 and 2 (and 3) recording operations; replay = the board."""

    def __init__(self):
        self.ops = []
        self.seq = {}
        self.lamport = 0

    def record(self, replica, change, lamport=None):
        seq = self.seq.get(replica, 0) + 1
        self.seq[replica] = seq
        if lamport is None:
            self.lamport += 1
            lamport = self.lamport
        self.lamport = max(self.lamport, lamport)
        op = {"id": [replica, seq], "lamport": lamport, "change": change}
        self.ops.append(op)
        return op

    def intent(self, replica, intent, lamport=None, seen_state=None):
        state = seen_state if seen_state is not None else m.replay(self.ops)
        change = m.prepare(state, intent)
        return self.record(replica, change, lamport) if change else None

    def order(self):
        return m.order_of(m.replay(self.ops))

    def setup(self, letters):
        for letter in letters:
            self.intent(9, ("select", letter))  # replica 9: earlier history, seen by both


def concurrent(before, first, second, third=None):
    """Board `before` (seen by both), then 1 does `first`, 2 does `second`,
    each against what it saw, with equal Lamport times: 1's is ordered first."""
    s = Scenario()
    s.setup(before)
    seen = m.replay(s.ops)
    base = s.lamport
    for replica, intents in ((1, first), (2, second)):
        state = [x for x in seen]
        for k, intent in enumerate(intents):
            change = m.prepare(state, intent)
            if change:
                op = s.record(replica, change, base + 1 + k)
                m.apply(state, change, m.op_id(op))
    return s


def test_sequential_rules_b4_to_b10():
    s = Scenario()
    for letter in "FDA":
        s.intent(1, ("select", letter))
    assert s.order() == ["F", "D", "A"]
    s.intent(1, ("move", "A", 2))  # B7: F D A, drag A onto D's place
    assert s.order() == ["F", "A", "D"]
    assert s.intent(1, ("select", "F")) is None  # B9
    assert s.intent(1, ("deselect", "Z")) is None
    assert s.intent(1, ("move", "F", 1)) is None
    s.intent(1, ("deselect", "F"))  # B6
    assert s.order() == ["A", "D"]
    for letter in "BCEG":
        s.intent(1, ("select", letter))
    with pytest.raises(m.Refused) as full:  # B5
        s.intent(1, ("select", "H"))
    assert full.value.code == "board_full"
    with pytest.raises(m.Refused) as unselected:  # B10
        s.intent(1, ("move", "Z", 1))
    assert unselected.value.code == "not_selected"
    with pytest.raises(m.Refused) as place:
        s.intent(1, ("move", "A", 7))
    assert place.value.code == "bad_place"
    s.intent(1, ("move", "A", 6))  # forward move lands on the place
    assert s.order() == ["D", "B", "C", "E", "G", "A"]
    s.intent(1, ("reset",))  # B8
    assert s.order() == []
    assert s.intent(1, ("reset",)) is None


@pytest.mark.parametrize("before, first, second, expected", [
    ("", [("select", "A")], [("select", "B")], "AB"),                       # C3 different letters
    ("X", [("select", "C")], [("select", "C")], "XC"),                      # C3 same letter
    ("ABC", [("move", "C", 1)], [("deselect", "C")], "AB"),                 # deselect vs move
    ("ABC", [("deselect", "C")], [("move", "C", 1)], "AB"),
    ("ABCD", [("move", "D", 2)], [("deselect", "A")], "DBC"),               # move keeps its neighbour
    ("ABCD", [("deselect", "B")], [("move", "D", 2)], "ADC"),               # neighbour gone: fallback
    ("ABCDEF", [("deselect", l) for l in "FEDC"], [("move", "A", 6)], "BA"),  # fallback clamped
    ("ABC", [("move", "A", 3)], [("move", "A", 2)], "BAC"),                 # two moves: last stamp wins
    ("ABCD", [("select", "E"), ("select", "F")], [("select", "G"), ("select", "H")], "ABCDEG"),  # C4
    ("AB", [("reset",)], [("select", "C")], "C"),                           # C5 reset vs select
    ("AB", [("select", "C")], [("reset",)], "C"),
    ("AB", [("reset",)], [("deselect", "A"), ("select", "A")], "A"),        # re-pick survives
    ("ABC", [("reset",)], [("move", "C", 1)], ""),                          # a move saves nothing
    ("ABC", [("reset",)], [("reset",)], ""),
])
def test_semantics_section_3_cases(before, first, second, expected):
    assert "".join(concurrent(before, first, second).order()) == expected


def test_c4_refused_select_is_not_resurrected_and_late_deselect_makes_room():
    s = concurrent("ABCDE", [("select", "F")], [("select", "G")])
    assert "".join(s.order()) == "ABCDEF"
    s.intent(1, ("deselect", "A"))
    assert "".join(s.order()) == "BCDEF"  # G does not come back
    late = concurrent("ABCDE", [("select", "F")], [("select", "G")])
    # A deselect of A by replica 0, with the same Lamport time as both picks
    # (so ordered before them), arrives late: G now counts.
    pick_time = late.ops[-1]["lamport"]
    late.ops.append({"id": [0, 1], "lamport": pick_time, "change": {"op": "deselect", "letter": "A"}})
    assert "".join(late.order()) == "BCDEFG"


def test_replay_ignores_arrival_order_and_duplicates():
    s = concurrent("ABCD", [("select", "E"), ("move", "A", 3)], [("deselect", "B"), ("reset",)])
    forward = m.replay(s.ops)
    assert m.replay(list(reversed(s.ops))) == forward
    # A checkpoint after some prefix replays to the same state.
    ordered = sorted(s.ops, key=m.stamp)
    cut = ordered[len(ordered) // 2]
    start = m.replay(ordered[: len(ordered) // 2 + 1])
    assert m.replay(ordered, start=start, frontier=m.stamp(cut)) == forward
