"""An independent reading of the juice bar's rules (docs/rules/stock.md,
J1-J9), written from the rules page alone, for test_stock.py to judge the
hub's frames by. Nothing here is taken from the hub's Swift code.

A stock is a dict fruit -> count. A `Bar` is the whole shared state the
rules describe (stock, made, recent) and applies intents the way the rules
say they land in the total order."""

# J1: the five fruits, their bounds and starting count.
FRUITS = ("strawberry", "banana", "pineapple", "kiwi", "mango")
START = 10
LOWEST, HIGHEST = 0, 999

# J2: the menu, in the table's order: id -> (shown as, what it takes).
MENU = {
    "strawberry": ("Strawberry juice", {"strawberry": 16}),
    "banana": ("Banana juice", {"banana": 2}),
    "kiwi": ("Kiwi juice", {"kiwi": 3}),
    "pineapple": ("Pineapple juice", {"pineapple": 2}),
    "strawberry_banana": ("Strawberry-banana juice", {"strawberry": 10, "banana": 1}),
    "mango": ("Mango juice", {"mango": 3}),
    "mango_kiwi": ("Mango-kiwi juice", {"mango": 2, "kiwi": 1}),
}
JUICES = tuple(MENU)

# J7: how many of the latest makes are kept.
RECENT_KEPT = 20


def title(juice):
    return MENU[juice][0]


def uses(juice):
    return dict(MENU[juice][1])


def ready_message(juice):
    """J3 / JV2: what the ack of a make says."""
    return f"{title(juice)} is ready. Enjoy!"


def fresh_stock():
    """J1, J9."""
    return {f: START for f in FRUITS}


def in_range(count):
    return isinstance(count, int) and not isinstance(count, bool) and LOWEST <= count <= HIGHEST


def can_make(stock):
    """J6: for each juice, how many could be made from `stock` alone."""
    return {j: min(stock[f] // n for f, n in uses(j).items()) for j in JUICES}


def shortfall(stock, juice):
    """J3: the fruits `juice` lacks, as (fruit, have, need), in the menu's order."""
    return [(f, stock[f], n) for f, n in uses(juice).items() if stock[f] < n]


def short_message(stock, juice):
    """J3: "not enough fruit: strawberry 4 of 16" (one entry per short fruit)."""
    return "not enough fruit: " + ", ".join(f"{f} {have} of {need}" for f, have, need in shortfall(stock, juice))


def used_by(juices):
    """Fruit taken by a list of made juices (JC1's conservation)."""
    out = {f: 0 for f in FRUITS}
    for j in juices:
        for f, n in uses(j).items():
            out[f] += n
    return out


class Bar:
    """The shared state as the rules describe it; `apply` returns
    ("applied", None), ("unchanged", None) or ("refused", code)."""

    def __init__(self, stock=None):
        self.stock = dict(stock or fresh_stock())
        self.made = {}
        self.recent = []

    def apply(self, intent, who="?"):
        kind = intent["type"]
        if kind == "make":
            juice = intent["juice"]
            if shortfall(self.stock, juice):                     # J3: all or nothing
                return "refused", "not_enough_fruit"
            for f, n in uses(juice).items():
                self.stock[f] -= n
            self.made[juice] = self.made.get(juice, 0) + 1     # J7
            self.recent = (self.recent + [{"who": who, "juice": juice}])[-RECENT_KEPT:]
            return "applied", None
        if kind == "restock":                                    # J4
            result = self.stock[intent["fruit"]] + intent["by"]
            if not LOWEST <= result <= HIGHEST:
                return "refused", "out_of_range"
            if intent["by"] == 0:
                return "unchanged", None
            self.stock[intent["fruit"]] = result
            return "applied", None
        if kind == "set_stock":                                  # J5
            fruit = intent["fruit"]
            if self.stock[fruit] != intent["from"]:
                return "refused", "stale"
            if not LOWEST <= intent["to"] <= HIGHEST:
                return "refused", "out_of_range"
            if intent["to"] == intent["from"]:
                return "unchanged", None
            self.stock[fruit] = intent["to"]
            return "applied", None
        if kind == "reset_stock":                                # J9
            if self.stock == fresh_stock():
                return "unchanged", None
            self.stock = fresh_stock()
            return "applied", None
        raise ValueError(intent)

    def view(self):
        return {"stock": dict(self.stock), "can_make": can_make(self.stock),
                "made": dict(self.made), "recent": list(self.recent)}
