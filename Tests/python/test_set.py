"""End-to-end tests of the Set table (docs/rules/set.md, S1-S10, SC1-SC4,
and the shared rules K5, K10, K12 as they apply to it) against the real
synchub binary over real sockets.

Each test is named after the rule it checks. Cards and sets are judged by
set_rules.py, an independent reading of S1/S2, never by the hub's own code.
Every wait is on a condition (a frame arriving), never a fixed sleep.
"""
import json, signal
import pytest
from kind_client import KindClient, clients_fixture, race, run_threads
import set_rules as R


class Client(KindClient):
    """One thin client on a Set board (kind_client.KindClient) with the
    Set's own intents."""

    kind = "set"
    timeout = 10

    def choose(self, card):
        return self.ok({"type": "choose", "card": card})

    def new_game(self, seed):
        return self.wait_state_after(self.ask({"type": "new_game", "seed": seed}))

    def wait_state_after(self, ack):
        assert ack["type"] == "ack", ack
        return self.state_at(ack["version"])

    def take(self, cards):
        """Chooses three cards in order; returns the state after the third."""
        for card in cards:
            state = self.choose(card)
        return state


clients = clients_fixture(Client)


def table_cards(state):
    return [c for c in state["table"] if c is not None]


def taken_cards(states):
    """Every card a match took, from the `last` of the states seen."""
    out = []
    for s in states:
        last = s.get("last")
        if last and last["result"] == "set" and last["cards"] not in [out[i:i + 3] for i in range(0, len(out), 3)]:
            out += last["cards"]
    return out


def check_state_invariants(state):
    """S1, S9, S7 and the frame shape (K4 + set.md "Frames") of one state."""
    assert state["type"] == "state" and state["kind"] == "set"
    # (`names` is left out here: test_kinds.test_k4_... checks it on its own.)
    for key in ("board", "version", "clients", "game", "table", "deck",
                "sets_on_table", "over", "players", "last"):
        assert key in state, (key, state)
    cards = table_cards(state)
    assert all(R.is_card(c) for c in cards), state["table"]
    assert len(set(cards)) == len(cards), state["table"]
    score_sum = sum(p["score"] for p in state["players"].values())
    # S1: the 81 cards are the deck, the table and the taken sets.
    assert state["deck"] + len(cards) + 3 * score_sum == 81, state
    assert state["deck"] % 3 == 0
    assert state["sets_on_table"] == R.count_sets(cards), (state["sets_on_table"], R.sets_in(cards))
    assert state["over"] == (state["deck"] == 0 and R.count_sets(cards) == 0), state
    for name, p in state["players"].items():
        assert set(p) == {"score", "misses", "picked", "mismatch"}, p
        assert len(p["picked"]) <= 3 and len(set(p["picked"])) == len(p["picked"])
        assert all(c in cards for c in p["picked"]), (name, p, state["table"])
        assert p["mismatch"] == (len(p["picked"]) == 3), p
        if p["mismatch"]:
            assert not R.is_set(*p["picked"])


def find_seed(predicate, start=1, limit=5000):
    """A seed whose opening table (by the reference shuffle) satisfies predicate.
    Only used to choose seeds; every test reads the table from the hub."""
    for seed in range(start, start + limit):
        if predicate(R.shuffled(seed)[:12]):
            return seed
    raise AssertionError("no seed found")


def seeded(client, seed):
    state = client.new_game(seed)
    assert len(state["table"]) == 12 and state["deck"] == 69
    return state


# ---------------------------------------------------------------- S1 / S2


def test_s1_reference_deck_is_81_distinct_codes():
    assert len(R.ALL_CARDS) == 81 == len(set(R.ALL_CARDS))
    assert R.is_card("3DOP") and R.is_card("1SFG")
    assert not R.is_card("4DFR") and not R.is_card("1XFR") and not R.is_card("2SFRR")


def test_s1_every_card_is_on_the_table_in_the_deck_or_taken(clients):
    ana = clients("s1", "ana")
    state = seeded(ana, 101)
    seen = [state]
    check_state_invariants(state)
    for _ in range(6):
        triple = R.first_set(state["table"])
        if triple is None:
            state = ana.ok({"type": "deal"})
        else:
            state = ana.take(triple)
        seen.append(state)
        check_state_invariants(state)
        taken = taken_cards(seen)
        assert len(taken) == len(set(taken)) == 3 * state["players"]["ana"]["score"]
        assert not set(taken) & set(table_cards(state))
        assert state["deck"] + len(table_cards(state)) + 3 * state["players"]["ana"]["score"] == 81
    assert state["players"]["ana"]["score"] >= 4


def test_s2_reference_agrees_with_the_rule_examples():
    assert R.is_set("1DFR", "2SFR", "3OFR")
    assert not R.is_set("1DFR", "2DFR", "2DFG")
    assert R.completing("1DFR", "2DTG") == "3DOP"
    # Exactly one completing card for any two distinct cards.
    for a in R.ALL_CARDS[:9]:
        for b in R.ALL_CARDS:
            if a != b:
                assert [c for c in R.ALL_CARDS if R.is_set(a, b, c)] == [R.completing(a, b)]


@pytest.mark.parametrize("seed", [7, 8, 9, 10])
def test_s2_hub_judges_sets_like_the_reference(clients, seed):
    ana = clients(f"s2-{seed}", "ana")
    state = seeded(ana, seed)
    # A triple that is a set, and one that is not, on this table.
    triple = R.first_set(state["table"])
    if triple is not None:
        after = ana.take(triple)
        assert after["last"] == {"player": "ana", "cards": list(triple), "result": "set"}
        assert after["players"]["ana"]["score"] == 1
        state = after
    wrong = R.non_set(state["table"])
    after = ana.take(wrong)
    assert after["last"] == {"player": "ana", "cards": list(wrong), "result": "not_set"}
    assert after["players"]["ana"]["misses"] == 1


# ---------------------------------------------------------------- S3


def test_s3_unplayed_board_starts_dealt(clients):
    c = clients("fresh")
    s = c.first
    assert s["game"] >= 1 and len(s["table"]) == 12 and None not in s["table"]
    assert s["deck"] == 69 and s["players"] == {} and s["last"] is None and s["over"] is False
    check_state_invariants(s)
    # A second visitor sees the same deal (it was dealt once, not per visitor).
    d = clients("fresh")
    assert d.first["table"] == s["table"] and d.first["game"] == s["game"]


def test_s3_same_seed_same_table_on_two_boards(clients):
    a, b = clients("s3-a", "ana"), clients("s3-b", "bo")
    sa, sb = seeded(a, 123), seeded(b, 123)
    assert sa["table"] == sb["table"] and len(set(sa["table"])) == 12
    other = seeded(b, 124)
    assert other["table"] != sa["table"]
    check_state_invariants(sa)


def test_s3_seeded_deal_is_the_recorded_shuffle(clients):
    """K15: the seed fixes the whole deck. The table matches the hub's
    documented shuffle (set_rules.shuffled), and a match refills its places,
    in table order, from the top of that deck (S5)."""
    ana = clients("s3-k15", "ana")
    deck = R.shuffled(4242)
    state = seeded(ana, 4242)
    assert state["table"] == deck[:12]
    triple = R.first_set(state["table"]) or pytest.skip("no set on this table")
    places = sorted(state["table"].index(c) for c in triple)
    after = ana.take(triple)
    expected = list(state["table"])
    for place, card in zip(places, deck[12:15]):
        expected[place] = card
    assert after["table"] == expected


def test_s3_new_game_wipes_scores_picks_and_last(clients):
    ana, bo = clients("s3-wipe", "ana"), clients("s3-wipe", "bo")
    state = seeded(ana, 31)
    triple = R.first_set(state["table"])
    assert triple, "seed 31 has a set"
    state = ana.take(triple)
    state = bo.choose(state["table"][0])
    assert state["players"]["ana"]["score"] == 1 and state["players"]["bo"]["picked"]
    assert state["last"] is not None
    game = state["game"]
    fresh = bo.new_game(31)
    assert fresh["game"] == game + 1
    assert fresh["players"] == {} and fresh["last"] is None
    assert fresh["deck"] == 69 and fresh["table"] == seeded(ana, 31)["table"]
    ana.wait_state(lambda s: s["version"] >= fresh["version"])


def test_s3_unplayed_board_starts_dealt_with_the_default_store(make_hub, tmp_path):
    """S3 + K4: the first state a visitor of an unplayed board gets already
    shows the new game (with the on-disk store too, not only in memory)."""
    hub = make_hub(data=str(tmp_path / "store"))
    c = Client(hub, "fresh-durable")
    try:
        assert c.first["game"] >= 1 and len(c.first["table"]) == 12, c.first
    finally:
        c.close()


def test_s3_opening_deal_survives_a_restart(make_hub, tmp_path):
    data = str(tmp_path / "store")
    hub = make_hub(data=data)
    c = Client(hub, "opening")
    first = c.wait_state(lambda m: m["game"] >= 1)
    c.close()
    assert hub.stop() == 0
    again = make_hub(data=data)
    d = Client(again, "opening")
    assert d.first["table"] == first["table"] and d.first["game"] == first["game"]
    assert d.first["version"] >= first["version"]
    d.close()


# ---------------------------------------------------------------- S4


def test_s4_picks_toggle_and_everyone_sees_them(clients):
    ana, bo = clients("s4", "ana"), clients("s4", "bo")
    state = seeded(ana, 40)
    a, b, c = state["table"][:3]
    v = state["version"]
    s = ana.choose(a)
    assert s["players"]["ana"] == {"score": 0, "misses": 0, "picked": [a], "mismatch": False}
    assert s["version"] > v
    s = ana.choose(b)
    assert s["players"]["ana"]["picked"] == [a, b]
    seen = bo.wait_state(lambda m: m["players"].get("ana", {}).get("picked") == [a, b])
    assert seen["version"] == s["version"]
    s = ana.choose(a)                                         # un-pick
    assert s["players"]["ana"]["picked"] == [b]
    bo.wait_state(lambda m: m["players"].get("ana", {}).get("picked") == [b])
    s = ana.choose(c)
    assert s["players"]["ana"]["picked"] == [b, c]
    s = ana.choose(b)
    s = ana.choose(c)
    assert s["players"]["ana"]["picked"] == []
    assert s["players"]["ana"]["score"] == 0 and s["last"] is None
    # Bo's pick is his own.
    s = bo.choose(a)
    assert s["players"]["bo"]["picked"] == [a] and s["players"]["ana"]["picked"] == []
    ana.wait_state(lambda m: m["players"].get("bo", {}).get("picked") == [a])


# ---------------------------------------------------------------- S5


def test_s5_match_scores_and_refills_the_same_places(clients):
    ana, bo = clients("s5", "ana"), clients("s5", "bo")
    state = seeded(ana, 55)
    triple = R.first_set(state["table"])
    assert triple
    places = {state["table"].index(c) for c in triple}
    after = ana.take(triple)
    assert after["players"]["ana"] == {"score": 1, "misses": 0, "picked": [], "mismatch": False}
    assert after["last"] == {"player": "ana", "cards": list(triple), "result": "set"}
    assert after["deck"] == 66 and len(after["table"]) == 12 and None not in after["table"]
    for i in range(12):
        if i in places:
            assert after["table"][i] not in triple and after["table"][i] not in state["table"]
        else:
            assert after["table"][i] == state["table"][i]
    check_state_invariants(after)
    assert bo.state_at(after["version"])["table"] == after["table"]


def test_s5_mismatch_stays_picked_then_next_choose_starts_fresh(clients):
    ana = clients("s5-miss", "ana")
    state = seeded(ana, 56)
    wrong = R.non_set(state["table"])
    after = ana.take(wrong)
    assert after["players"]["ana"] == {"score": 0, "misses": 1, "picked": list(wrong), "mismatch": True}
    assert after["last"] == {"player": "ana", "cards": list(wrong), "result": "not_set"}
    assert after["table"] == state["table"] and after["deck"] == 69
    # Next choose of one of the three: released, a fresh pick of just it.
    s = ana.choose(wrong[1])
    assert s["players"]["ana"] == {"score": 0, "misses": 1, "picked": [wrong[1]], "mismatch": False}
    # Another mismatch, then a card outside the three.
    wrong2 = R.non_set(state["table"])
    ana.choose(wrong[1])                                      # back to an empty pick
    ana.take(wrong2)
    other = next(c for c in state["table"] if c not in wrong2)
    s = ana.choose(other)
    assert s["players"]["ana"] == {"score": 0, "misses": 2, "picked": [other], "mismatch": False}


def deal_until_deck_is(client, size):
    state = client.state
    while state["deck"] > size:
        state = client.ok({"type": "deal"})
    return state


def test_s5_places_stay_empty_once_the_deck_is_used_up(clients):
    ana = clients("s5-holes", "ana")
    seeded(ana, 57)
    state = deal_until_deck_is(ana, 0)
    assert len(state["table"]) == 81 and state["deck"] == 0
    triple = R.first_set(state["table"])
    places = sorted(state["table"].index(c) for c in triple)
    after = ana.take(triple)
    assert len(after["table"]) == 81
    assert [i for i, c in enumerate(after["table"]) if c is None] == places
    assert [c for i, c in enumerate(after["table"]) if i not in places] == \
           [c for i, c in enumerate(state["table"]) if i not in places]
    check_state_invariants(after)


# ---------------------------------------------------------------- S6


def test_s6_deal_adds_three_at_the_end_and_leaves_picks(clients):
    ana, bo = clients("s6", "ana"), clients("s6", "bo")
    state = seeded(ana, 60)
    s = bo.choose(state["table"][5])
    v = s["version"]
    after = bo.ok({"type": "deal"})
    assert after["version"] > v
    assert after["table"][:12] == state["table"] and len(after["table"]) == 15
    assert after["deck"] == 66 and all(R.is_card(c) for c in after["table"][12:])
    assert after["players"]["bo"]["picked"] == [state["table"][5]]
    check_state_invariants(after)


def test_s6_deal_is_refused_deck_empty_when_the_deck_is_empty(clients):
    ana = clients("s6-empty", "ana")
    seeded(ana, 61)
    state = deal_until_deck_is(ana, 0)
    assert state["over"] is False                            # 81 cards hold a set
    ana.refused({"type": "deal"}, "deck_empty")
    # K11: nothing changed.
    probe = ana.choose(state["table"][0])
    assert probe["version"] == state["version"] + 1


def test_s6_deal_fills_holes_before_adding_at_the_end(clients):
    """Holes appear only once the deck is used up (S5), and the deck always
    holds a multiple of three, so through the hub a deal can never meet a
    hole with cards left to deal. This test documents that: after holes
    appear, every deal is refused deck_empty and the holes stay."""
    ana = clients("s6-holes", "ana")
    seeded(ana, 62)
    deal_until_deck_is(ana, 0)
    state = ana.take(R.first_set(ana.state["table"]))
    holes = [i for i, c in enumerate(state["table"]) if c is None]
    assert len(holes) == 3
    ana.refused({"type": "deal"}, "deck_empty")
    assert ana.state["table"] == state["table"]


# ---------------------------------------------------------------- S7 / S9


def play_to_the_end(client, states=None):
    """Always takes a set (reference), deals when there is none, until over."""
    state = client.state
    for _ in range(200):
        if states is not None:
            states.append(state)
        check_state_invariants(state)
        if state["over"]:
            return state
        triple = R.first_set(state["table"])
        if triple is not None:
            state = client.take(triple)
        else:
            assert state["deck"] > 0, state
            state = client.ok({"type": "deal"})
    raise AssertionError("the game never ended")


@pytest.mark.parametrize("seed", [70, 71])
def test_s7_game_over_refuses_choose_and_deal(clients, seed):
    ana, bo = clients(f"s7-{seed}", "ana"), clients(f"s7-{seed}", "bo")
    seeded(ana, seed)
    states = []
    end = play_to_the_end(ana, states)
    assert end["over"] is True and end["deck"] == 0 and R.count_sets(end["table"]) == 0
    assert end["sets_on_table"] == 0
    score = end["players"]["ana"]["score"]
    assert 3 * score + len(table_cards(end)) == 81
    seen = bo.state_at(end["version"])
    assert seen["over"] is True
    for who in (ana, bo):
        card = table_cards(end)[0] if table_cards(end) else taken_cards(states)[0]
        who.refused({"type": "choose", "card": card}, "game_over")
        who.refused({"type": "deal"}, "game_over")
    # Only new_game goes on.
    fresh = bo.new_game(seed)
    assert fresh["over"] is False and fresh["players"] == {} and len(fresh["table"]) == 12


@pytest.mark.parametrize("seed", [90, 91, 92, 93, 94])
def test_s9_sets_on_table_is_the_reference_count(clients, seed):
    ana = clients(f"s9-{seed}", "ana")
    state = seeded(ana, seed)
    assert state["sets_on_table"] == R.count_sets(state["table"])
    for _ in range(4):
        state = ana.ok({"type": "deal"})
        assert state["sets_on_table"] == R.count_sets(state["table"]), state
        triple = R.first_set(state["table"])
        state = ana.take(triple)
        assert state["sets_on_table"] == R.count_sets(state["table"]), state


# ---------------------------------------------------------------- S8


def test_s8_taken_not_on_table_and_bad_card(clients):
    ana, bo = clients("s8", "ana"), clients("s8", "bo")
    state = seeded(ana, 80)
    triple = R.first_set(state["table"])
    after = ana.take(triple)
    v = after["version"]
    bo.state_at(v)
    a = bo.refused({"type": "choose", "card": triple[1]}, "taken")
    assert triple[1] in a["message"] and "ana" in a["message"], a
    in_deck = next(c for c in R.ALL_CARDS if c not in after["table"] and c not in triple)
    a = bo.refused({"type": "choose", "card": in_deck}, "not_on_table")
    assert in_deck in a["message"], a
    for bad in ("4DFR", "1XFR", "2SFRR", "2sfr", ""):
        bo.ws.send(json.dumps({"type": "choose", "card": bad, "ref": "bad"}))
        e = bo.until(lambda m: m["type"] == "error")
        assert e["code"] == "bad_card" and e["message"], (bad, e)
    # K11: none of these changed anything; bo is not even a player yet (S10).
    probe = bo.choose(after["table"][0])
    assert probe["version"] == v + 1
    assert probe["players"]["bo"] == {"score": 0, "misses": 0, "picked": [after["table"][0]], "mismatch": False}


def test_s8_choose_without_a_card_is_a_frame_error(clients):
    c = clients("s8-missing")
    c.ws.send(json.dumps({"type": "choose"}))
    e = c.until(lambda m: m["type"] == "error")
    assert e["code"] == "missing_field", e
    c.ws.send(json.dumps({"type": "new_game", "seed": "x"}))
    e = c.until(lambda m: m["type"] == "error")
    assert e["code"] == "bad_field", e


# ---------------------------------------------------------------- S10 / K10


def test_s10_anyone_may_start_a_new_game_and_first_choose_makes_a_player(clients):
    ana, guest = clients("s10", "ana"), clients("s10")
    state = seeded(ana, 100)
    fresh = guest.new_game(101)                               # a guest may too
    assert fresh["game"] == state["game"] + 1 and fresh["players"] == {}
    assert "ana" in fresh["names"]
    s = guest.choose(fresh["table"][3])
    names = list(s["players"])
    assert len(names) == 1 and names[0].startswith("guest-"), s["players"]
    assert s["players"][names[0]] == {"score": 0, "misses": 0, "picked": [fresh["table"][3]], "mismatch": False}
    s = ana.choose(fresh["table"][4])
    assert s["players"]["ana"]["score"] == 0 and set(s["players"]) == {"ana", names[0]}


def test_k10_join_names_appear_in_names_and_as_players(clients):
    ana = clients("k10", "ana")
    s = ana.wait_state(lambda m: "ana" in m.get("names", []))
    bo = clients("k10", "bo")
    s = ana.wait_state(lambda m: sorted(m.get("names", [])) == ["ana", "bo"])
    assert s["clients"] == 2 and "ana" not in s["players"] and "bo" not in s["players"]
    s = bo.choose(s["table"][0])
    assert "bo" in s["players"]
    ana.wait_state(lambda m: "bo" in m["players"])
    # A rename: later intents are made by the new name.
    bo.join("bob")
    s = bo.choose(s["table"][1])
    assert s["players"]["bob"]["picked"] == [s["table"][1]]
    assert "bob" in bo.wait_state(lambda m: "bob" in m.get("names", []))["names"]


# ---------------------------------------------------------------- SC1


def test_sc1_a_match_drops_its_cards_from_other_picks_only(clients):
    ana, bo, cy = clients("sc1", "ana"), clients("sc1", "bo"), clients("sc1", "cy")
    state = seeded(ana, 110)
    triple = R.first_set(state["table"])
    rest = [c for c in state["table"] if c not in triple]
    ana.choose(triple[0]); ana.choose(rest[0])                # one card of the set kept
    cy_wrong = None
    # cy holds a mismatch of three including a card of the set.
    for x in rest:
        for y in rest:
            if x < y and not R.is_set(triple[1], x, y):
                cy_wrong = (triple[1], x, y)
                break
        if cy_wrong:
            break
    cy.take(cy_wrong)
    assert cy.state["players"]["cy"]["mismatch"] is True
    after = bo.take(triple)
    assert after["players"]["bo"]["score"] == 1
    assert after["players"]["ana"]["picked"] == [rest[0]]
    assert after["players"]["cy"]["picked"] == [cy_wrong[1], cy_wrong[2]]
    assert after["players"]["cy"]["mismatch"] is False and after["players"]["cy"]["misses"] == 1
    check_state_invariants(after)
    ana.state_at(after["version"]); cy.state_at(after["version"])
    assert ana.state["players"] == cy.state["players"] == after["players"]
    # Ana's pick of two lost a card to bo's match: the choose that would have
    # settled it is refused `taken` once (SC2, told once; her pick stays),
    # and her next choose goes on from her remaining pick.
    told = ana.refused({"type": "choose", "card": rest[1]}, "taken")
    assert triple[0] in told["message"] and "bo" in told["message"]
    s = ana.choose(rest[1])
    assert s["players"]["ana"]["picked"] == [rest[0], rest[1]]


# ---------------------------------------------------------------- SC2


def two_sets_sharing_one_card(table):
    sets = R.sets_in(table)
    for i, a in enumerate(sets):
        for b in sets[i + 1:]:
            if len(set(a) & set(b)) == 1:
                return a, b
    return None


@pytest.mark.parametrize("variant", ["shared_card_last", "shared_card_first"])
@pytest.mark.parametrize("attempt", range(3))
def test_sc2_two_sets_sharing_a_card_only_one_scores(clients, variant, attempt):
    """Ana and bo each hold two cards of a set; the two sets share one card.
    Both send their completing choose at once. `shared_card_last`: the shared
    card is what both choose last. `shared_card_first`: both picked the
    shared card earlier and choose their own third card last; the loser's
    choose was made on a pick of three (as its author saw it), so SC2 says it
    is refused `taken` naming the shared card, not turned into a plain pick."""
    seed = find_seed(lambda t: two_sets_sharing_one_card(t) is not None, start=1000 + 50 * attempt)
    board = f"sc2-{variant}-{attempt}"
    ana, bo = clients(board, "ana"), clients(board, "bo")
    state = seeded(ana, seed)
    bo.state_at(state["version"])
    set_a, set_b = two_sets_sharing_one_card(state["table"])
    shared = (set(set_a) & set(set_b)).pop()
    own_a = [c for c in set_a if c != shared]
    own_b = [c for c in set_b if c != shared]
    if variant == "shared_card_last":
        picks = {ana: own_a, bo: own_b}
        finals = {ana: shared, bo: shared}
    else:
        picks = {ana: [shared, own_a[0]], bo: [shared, own_b[0]]}
        finals = {ana: own_a[1], bo: own_b[1]}
    for who, cards in picks.items():
        for card in cards:
            who.choose(card)
    refs = race([(ana, {"type": "choose", "card": finals[ana]}), (bo, {"type": "choose", "card": finals[bo]})])
    answers = {ana: ana.answer(refs[0]), bo: bo.answer(refs[1])}
    kinds = sorted(a["type"] for a in answers.values())
    assert kinds == ["ack", "rejected"], answers
    winner = next(w for w, a in answers.items() if a["type"] == "ack")
    loser = bo if winner is ana else ana
    win_name, lose_name = ("ana", "bo") if winner is ana else ("bo", "ana")
    refusal = answers[loser]
    assert refusal["code"] == "taken", refusal
    assert shared in refusal["message"] and win_name in refusal["message"], refusal
    final = winner.state_at(answers[winner]["version"])
    final = loser.state_at(final["version"])
    assert final["players"][win_name]["score"] == 1
    assert final["players"][lose_name]["score"] == 0 and final["players"][lose_name]["misses"] == 0
    won = set_a if winner is ana else set_b
    assert final["last"] == {"player": win_name, "cards": [c for c in picks[winner] + [finals[winner]]], "result": "set"}
    assert sorted(final["last"]["cards"]) == sorted(won)
    # The loser keeps whichever picked cards are still on the table.
    still = [c for c in picks[loser] if c in final["table"]]
    assert still == [c for c in picks[loser] if c != shared]
    assert final["players"][lose_name]["picked"] == still, final["players"]
    assert final["players"][lose_name]["mismatch"] is False
    check_state_invariants(final)
    # Both connections end on the same state.
    other = winner.state_at(final["version"])
    assert {k: v for k, v in other.items()} == final


# ---------------------------------------------------------------- SC3


@pytest.mark.parametrize("dealers", [4, 6])
def test_sc3_simultaneous_deals_deal_while_the_deck_lasts(clients, dealers):
    board = f"sc3-{dealers}"
    first = clients(board, "d0")
    seeded(first, 130)
    state = deal_until_deck_is(first, 6)                      # room for two deals
    crowd = [first] + [clients(board, f"d{i}") for i in range(1, dealers)]
    for c in crowd:
        c.state_at(state["version"])
    refs = race([(c, {"type": "deal"}) for c in crowd])
    answers = [c.answer(r) for c, r in zip(crowd, refs)]
    acks = [a for a in answers if a["type"] == "ack"]
    refusals = [a for a in answers if a["type"] == "rejected"]
    assert len(acks) == 2 and len(refusals) == dealers - 2, answers
    assert all(a["code"] == "deck_empty" for a in refusals), refusals
    top = max(a["version"] for a in acks)
    assert sorted(a["version"] for a in acks) == [state["version"] + 1, state["version"] + 2]
    finals = [c.state_at(top) for c in crowd]
    assert all(f["table"] == finals[0]["table"] and f["version"] == top for f in finals)
    assert finals[0]["deck"] == 0 and len(finals[0]["table"]) == len(state["table"]) + 6
    assert finals[0]["table"][:len(state["table"])] == state["table"]
    check_state_invariants(finals[0])


# ---------------------------------------------------------------- SC4


def test_sc4_new_game_racing_with_play_ends_equal_everywhere(clients):
    board = "sc4"
    ana, bo, cy = clients(board, "ana"), clients(board, "bo"), clients(board, "cy")
    state = seeded(ana, 140)
    for c in (bo, cy):
        c.state_at(state["version"])
    old_table = state["table"]
    plays = {ana: [], bo: []}
    sets = R.sets_in(old_table)
    # Ana goes for a set, bo picks around and deals; cy starts a new game in
    # the middle of it all. All frames are pipelined.
    frames = []
    if sets:
        frames += [(ana, {"type": "choose", "card": c}) for c in sets[0]]
    frames += [(bo, {"type": "choose", "card": c}) for c in old_table[6:9]] + [(bo, {"type": "deal"})]
    sent = {ana: [], bo: [], cy: []}

    def player(c, mine):
        return lambda: sent[c].extend(c.send(f) for f in mine)

    def starter():
        sent[cy].append(cy.send({"type": "new_game", "seed": 141}))

    run_threads([player(c, [f for w, f in frames if w is c]) for c in (ana, bo)] + [starter])
    answers = {c: [c.answer(r) for r in refs] for c, refs in sent.items()}
    for c, got in answers.items():
        for a in got:
            assert a["type"] == "ack" or a["code"] in ("new_game", "taken", "not_on_table", "game_over"), a
    assert answers[cy][0]["type"] == "ack"
    top = max(a["version"] for got in answers.values() for a in got if a["type"] == "ack")
    finals = [c.state_at(top) for c in (ana, bo, cy)]
    for f in finals:
        assert f["version"] == top
        assert {k: v for k, v in f.items()} == finals[0]
    final = finals[0]
    assert final["game"] == state["game"] + 1
    check_state_invariants(final)
    # Plays ordered after the new game count on the new table only: every
    # player and pick is of the new game, whose cards are those seed 141
    # deals (less what matches took since, refilled from its deck).
    new_deck = R.shuffled(141)
    matches = sum(p["score"] for p in final["players"].values())
    deals = (len(final["table"]) - 12) // 3
    assert set(table_cards(final)) <= set(new_deck[:12 + 3 * (matches + deals)])
    for p in final["players"].values():
        assert all(c in final["table"] for c in p["picked"])
    # A fresh observer sees the same.
    observer = clients(board)
    assert {k: v for k, v in observer.first.items() if k != "clients"} == \
           {k: v for k, v in final.items() if k != "clients"}


# ---------------------------------------------------------------- K5 / K12


def test_k5_version_grows_with_every_change_even_a_pick(clients):
    ana = clients("k5", "ana")
    state = seeded(ana, 150)
    versions = [state["version"]]
    for card in state["table"][:2] + state["table"][:1]:
        a = ana.ask({"type": "choose", "card": card})
        assert a["type"] == "ack"
        versions.append(a["version"])
    a = ana.ask({"type": "deal"})
    versions.append(a["version"])
    a = ana.ask({"type": "new_game", "seed": 151})
    versions.append(a["version"])
    assert versions == sorted(set(versions)), versions
    # A refusal changes nothing: the next change is exactly one more.
    ana.refused({"type": "choose", "card": next(c for c in R.ALL_CARDS if c not in ana.state_at(versions[-1])["table"])},
                "not_on_table")
    a = ana.ask({"type": "choose", "card": ana.state["table"][0]})
    assert a["version"] == versions[-1] + 1


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
def test_k12_acknowledged_play_survives_a_restart(make_hub, tmp_path, how):
    data = str(tmp_path / "store")
    hub = make_hub(data=data)
    ana = Client(hub, "durable", "ana")
    state = seeded(ana, 160)
    triple = R.first_set(state["table"])
    after = ana.take(triple)
    picked = after["table"][0]
    a = ana.ask({"type": "choose", "card": picked})
    assert a["type"] == "ack"
    acked_version = a["version"]
    expect = ana.state_at(acked_version)
    hub.stop(how)
    with pytest.raises(Exception):                          # the hub is gone
        for _ in range(100):
            ana.recv(timeout=5)
    again = make_hub(data=data, port=hub.port)
    bo = Client(again, "durable", "bo")
    s = bo.first
    assert s["version"] >= acked_version
    assert s["table"] == expect["table"] and s["deck"] == expect["deck"]
    assert s["players"]["ana"] == {"score": 1, "misses": 0, "picked": [picked], "mismatch": False}
    assert s["last"] == {"player": "ana", "cards": list(triple), "result": "set"}
    # K5 across the restart: the next change's version is above every one before.
    a = bo.ask({"type": "choose", "card": s["table"][1]})
    assert a["type"] == "ack" and a["version"] > acked_version
    # K6: a keyed intent is not applied twice, also across restarts.
    k = bo.ask({"type": "choose", "card": s["table"][2], "key": "once"})
    k2 = bo.ask({"type": "choose", "card": s["table"][2], "key": "once"})
    assert k2["type"] == "ack" and k2["version"] == k["version"]
    assert bo.state_at(k["version"])["players"]["bo"]["picked"] == [s["table"][1], s["table"][2]]
    bo.close()
