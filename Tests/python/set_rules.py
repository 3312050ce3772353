"""An independent reference of the Set rules (docs/rules/set.md, S1-S2, S9)
for the end-to-end tests: card codes, is_set, the sets on a table.

Written from the rules, not from the Swift code, so the tests check the hub
against a second reading of them. `shuffled` is the one exception: it
mirrors the hub's documented seeded shuffle (SplitMix64 + Fisher-Yates,
SetDeck.swift) so a test can tell whether a seeded deal is the one every
replica must reproduce (K15); the rules themselves fix no algorithm.
"""
from itertools import combinations

# S1: the values of each feature, in code order.
NUMBERS, SHAPES, SHADINGS, COLOURS = "123", "DSO", "FTO", "RGP"
FEATURES = (NUMBERS, SHAPES, SHADINGS, COLOURS)

ALL_CARDS = [n + s + f + c for n in NUMBERS for s in SHAPES for f in SHADINGS for c in COLOURS]
assert len(ALL_CARDS) == 81 and len(set(ALL_CARDS)) == 81


def is_card(code):
    return (isinstance(code, str) and len(code) == 4
            and all(code[i] in FEATURES[i] for i in range(4)))


def values(code):
    """The card's four feature values, each 0..2."""
    assert is_card(code), code
    return tuple(FEATURES[i].index(code[i]) for i in range(4))


def is_set(a, b, c):
    """S2: every feature all the same or all different on the three cards."""
    if len({a, b, c}) != 3:
        return False
    for x, y, z in zip(values(a), values(b), values(c)):
        if len({x, y, z}) == 2:
            return False
    return True


def completing(a, b):
    """S2: the one card that makes a set with a and b."""
    out = ""
    for i, (x, y) in enumerate(zip(values(a), values(b))):
        out += FEATURES[i][x if x == y else 3 - x - y]
    return out


def sets_in(cards):
    """Every set among `cards` (holes, None, ignored), each as a sorted triple."""
    present = [c for c in cards if c is not None]
    return [t for t in combinations(present, 3) if is_set(*t)]


def count_sets(cards):
    """S9: how many sets the table holds."""
    return len(sets_in(cards))


def first_set(cards):
    found = sets_in(cards)
    return found[0] if found else None


def non_set(cards):
    """Three cards of `cards` that are no set (None if every triple is one)."""
    present = [c for c in cards if c is not None]
    for t in combinations(present, 3):
        if not is_set(*t):
            return t
    return None


# --- the hub's documented seeded shuffle (K15), see the module docstring ---

_MASK = (1 << 64) - 1


class _SplitMix64:
    def __init__(self, seed):
        self.state = seed & _MASK

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        return z ^ (z >> 31)

    def below(self, bound):
        limit = _MASK - _MASK % bound
        while True:
            v = self.next()
            if v < limit:
                return v % bound


def shuffled(seed):
    """The 81 cards in the order a game with `seed` deals them (the first 12
    to the table, the rest the deck, top first)."""
    rng = _SplitMix64(seed)
    cards = list(ALL_CARDS)
    for i in range(len(cards) - 1, 0, -1):
        j = rng.below(i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return cards


if __name__ == "__main__":
    # The rule text's own examples.
    assert is_set("1DFR", "2SFR", "3OFR")
    assert not is_set("1DFR", "2DFR", "2DFG")
    assert completing("1DFR", "2DTG") == "3DOP"
    print("ok")
