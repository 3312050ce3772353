"""An independent reading of the shared reminders list's rules
(docs/rules/todo.md: T1-T7, TC1-TC6), written from the rules page and the
wire the hub speaks (docs/PROTOCOL.md), for test_todo.py to judge the hub's
frames by. Nothing here is taken from the hub's Swift code.

A thin client's intents reach the hub one at a time in its total order, so
the list is modelled as a sequence that applies each intent, where it lands,
to the state left by the ones before it:

- the sequence keeps deleted items in their places (as "tombstones"), so an
  item added or moved after a deleted one lands where that one was (TC5),
  and a deleted item's id stays taken (T2) and names who deleted it (T6);
- `add` puts the item directly after its anchor (T2), so each person's run
  of "x2 after x1, x3 after x2" stays together whatever lands after the
  run's anchor meanwhile (TC1);
- `move` takes the one item out and puts it directly after its anchor (T5):
  items that had been added after it stay where they are;
- an `edit` with a base that is no longer the text is merged (TC2): each
  side is reduced to the span it changed against the base (common prefix and
  suffix removed); spans apart keep both, overlapping spans let the later
  edit win and tell the earlier author (`notice`); two insertions at the
  same place overlap (the rules' "oat" against "soy"). Spans that only
  touch (one ends where the other starts) are not decided by the rules: the model
  then offers every reading (`Todo.apply` returns several states), and the
  caller keeps the one the hub shows.
"""
import copy, re

ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")          # T1
HUB_ID = re.compile(r"^[A-Za-z0-9]{8}$")           # the hub's own ids (ack "id")
MAX_TEXT = 1000                                     # T1: characters, title and memo
LINE_BREAKS = ("\n", "\r", "\u2028", "\u2029", "\x0b", "\x0c", "\x85")
FIELDS = ("title", "memo")


def deleted_message(who):
    """T6: the refusal of an intent on an item someone deleted."""
    return f"{who} deleted this reminder"


def missing_message(item_id):
    """T6: the refusal of an intent on an item (or anchor) that never existed."""
    return f"there is no reminder {item_id}"


def overwritten_message(who, field, text):
    """TC2: the notice to the author whose acked edit was overwritten."""
    return f"{who} changed this reminder's {field} at the same time; it now reads \"{text}\""


# ------------------------------------------------------------------ frames (K8)


def is_text(v):
    return isinstance(v, str)


def frame_error(frame):
    """The `error` code a frame gets before it is ever applied (K8, T1), or
    None when the frame is well formed. Only the checks the rules and the
    wire name; what a field holds beyond its shape is the sequence's job."""
    t = frame.get("type")

    def need(field):
        return frame.get(field) is None

    def bad_id(field, nullable=False):
        v = frame.get(field)
        if v is None:
            return not nullable
        return not (isinstance(v, str) and ID.match(v))

    def bad_text(field, title):
        if field not in frame:
            return False
        v = frame[field]
        if not is_text(v) or len(v) > MAX_TEXT:
            return True
        return title and any(b in v for b in LINE_BREAKS)

    if t == "add":
        if "after" not in frame:
            return "missing_field"
        if "id" in frame and frame["id"] is not None and bad_id("id"):
            return "bad_field"
        if frame["after"] is not None and bad_id("after"):
            return "bad_field"
        if bad_text("title", True) or bad_text("memo", False):
            return "bad_field"
        return None
    if t == "edit":
        if need("id"):
            return "missing_field"
        if bad_id("id"):
            return "bad_field"
        if "title" not in frame and "memo" not in frame:
            return "missing_field"
        if bad_text("title", True) or bad_text("memo", False):
            return "bad_field"
        for b in ("base", "title_base", "memo_base"):
            if b in frame and frame[b] is not None and not is_text(frame[b]):
                return "bad_field"
        return None
    if t == "done":
        if need("id") or need("done"):
            return "missing_field"
        if bad_id("id") or not isinstance(frame["done"], bool):
            return "bad_field"
        return None
    if t == "move":
        if need("id") or "after" not in frame:
            return "missing_field"
        if bad_id("id") or (frame["after"] is not None and bad_id("after")):
            return "bad_field"
        return None
    if t == "delete":
        if need("id"):
            return "missing_field"
        return "bad_field" if bad_id("id") else None
    if t == "editing":
        if "id" not in frame:
            return "missing_field"
        return "bad_field" if frame["id"] is not None and bad_id("id") else None
    return "unknown_type"


# ------------------------------------------------------------------ TC2 merge


def changed_span(base, text):
    """What an edit changed against its base: (start, end, replacement),
    base[start:end] replaced by `replacement`, once the common prefix and
    then the common suffix are removed."""
    p = 0
    n = min(len(base), len(text))
    while p < n and base[p] == text[p]:
        p += 1
    s = 0
    while s < n - p and base[len(base) - 1 - s] == text[len(text) - 1 - s]:
        s += 1
    return p, len(base) - s, text[p:len(text) - s]


def apply_spans(base, first, second):
    """Both spans on the base, `first` before `second` in the text."""
    (a0, a1, ar), (b0, b1, br) = first, second
    return base[:a0] + ar + base[a1:b0] + br + base[b1:]


def merge(base, current, new):
    """TC2 for one field: the text an edit (base -> new) leaves when the
    field reads `current`. Returns (readings, overwrote): the possible
    resulting texts (one, unless the rules leave it open) and, per reading,
    whether the earlier change was overwritten (-> notice)."""
    if current == base:
        return [(new, False)]
    if new == base:                       # the edit changes nothing: open
        return [(current, False), (new, False)]
    a = changed_span(base, current)       # what happened since the base
    b = changed_span(base, new)           # what this edit does
    if a[1] < b[0] or b[1] < a[0]:
        both = apply_spans(base, a, b) if a[1] < b[0] else apply_spans(base, b, a)
        if len(both) > MAX_TEXT:                  # T1 bounds the merge too: the later edit stands
            return [(new, True)]
        return [(both, False)]
    if (a[0] < b[1] and b[0] < a[1]) or (a[0] == a[1] == b[0] == b[1]):
        # Crossing spans, or two insertions at one place (the rules'
        # example: "Buy oat milk" against "Buy soy milk").
        return [(new, True)]
    # The spans touch (an insertion at the other's edge): not decided.
    out = [(new, True)]
    if a[1] <= b[0]:
        out.append((apply_spans(base, a, b), False))
    if b[1] <= a[0]:
        out.append((apply_spans(base, b, a), False))
    return [(t, o) for t, o in out if len(t) <= MAX_TEXT]


# ------------------------------------------------------------------ the list


class Item:
    def __init__(self, item_id, title, memo):
        self.id = item_id
        self.title = title
        self.memo = memo
        self.done = False
        self.deleted_by = None            # who deleted it (T6), once deleted
        self.author = {}                  # field -> (name, ref) of its last edit

    def shown(self):
        return {"id": self.id, "title": self.title, "memo": self.memo, "done": self.done}


class Outcome:
    """What one intent did where it landed: `kind` is "applied",
    "unchanged" or "refused" (`code`, `message`); `notices` are
    (to_name, ref, id, field, text, by) for TC2."""

    def __init__(self, kind, code=None, message=None, notices=()):
        self.kind, self.code, self.message, self.notices = kind, code, message, list(notices)

    def __repr__(self):
        return f"Outcome({self.kind}, {self.code}, {self.message!r}, {self.notices})"


class Todo:
    """The shared state as the rules describe it. `apply` returns a list of
    (Todo, Outcome): one, unless a TC2 merge is left open by the rules."""

    def __init__(self):
        self.seq = []                     # every id ever added, deleted ones too, in list order
        self.items = {}

    def copy(self):
        return copy.deepcopy(self)

    # -- what a state frame shows
    def shown(self):
        return [self.items[i].shown() for i in self.seq if self.items[i].deleted_by is None]

    def ids(self):
        return [i for i in self.seq if self.items[i].deleted_by is None]

    def refuse_target(self, item_id):
        """T6 for the item an intent acts on; None when it is there."""
        it = self.items.get(item_id)
        if it is None:
            return Outcome("refused", "no_such_item", missing_message(item_id))
        if it.deleted_by is not None:
            return Outcome("refused", "no_such_item", deleted_message(it.deleted_by))
        return None

    def place_after(self, item_id, after):
        """Puts `item_id` (not in seq) directly after `after` (None: top);
        a deleted anchor still holds its place (TC5)."""
        at = 0 if after is None else self.seq.index(after) + 1
        self.seq.insert(at, item_id)

    def refusals(self, frame):
        """Every refusal the rules allow for this intent here (the order the
        hub checks them in is not fixed by the rules)."""
        t = frame["type"]
        out = []
        if t == "add":
            if frame.get("id") is not None and frame["id"] in self.items:
                out.append(Outcome("refused", "duplicate_id", None))
            after = frame["after"]
            if after is not None and after not in self.items:
                out.append(Outcome("refused", "no_such_item", missing_message(after)))
            return out
        r = self.refuse_target(frame["id"])
        if r:
            out.append(r)
        if t == "move":
            after = frame["after"]
            if after is not None and after == frame["id"]:
                out.append(Outcome("refused", "bad_move", None))
            elif after is not None and after not in self.items:
                out.append(Outcome("refused", "no_such_item", missing_message(after)))
        return out

    def apply(self, frame, who, ref=None, new_id=None):
        """The intent `frame` (well formed: frame_error is None) made by
        `who` where it lands; `new_id` is the id the hub's ack reports for an
        add. Returns [(Todo, Outcome), ...]."""
        t = frame["type"]
        if t == "editing":
            return [(self, Outcome("unchanged"))]
        refused = self.refusals(frame)
        if refused:
            return [(self, refused[0])]
        nxt = self.copy()
        if t == "add":
            item_id = frame.get("id") or new_id
            assert item_id is not None, "an add without id needs the id the hub gave"
            nxt.items[item_id] = Item(item_id, frame.get("title", ""), frame.get("memo", ""))
            nxt.place_after(item_id, frame["after"])
            return [(nxt, Outcome("applied"))]
        it = nxt.items[frame["id"]]
        if t == "done":
            if it.done == frame["done"]:
                return [(self, Outcome("unchanged"))]
            it.done = frame["done"]
            return [(nxt, Outcome("applied"))]
        if t == "delete":
            it.deleted_by = who
            return [(nxt, Outcome("applied"))]
        if t == "move":
            before = list(nxt.seq)
            nxt.seq.remove(it.id)
            nxt.place_after(it.id, frame["after"])
            if nxt.seq == before:
                return [(self, Outcome("unchanged"))]
            return [(nxt, Outcome("applied"))]
        if t == "edit":
            return self._edit(frame, who, ref)
        raise ValueError(frame)

    def _edit(self, frame, who, ref):
        both = "title" in frame and "memo" in frame
        branches = [(self.copy(), [])]
        for field in FIELDS:
            if field not in frame:
                continue
            base = frame.get(f"{field}_base") if both else frame.get("base", frame.get(f"{field}_base"))
            grown = []
            for state, notices in branches:
                it = state.items[frame["id"]]
                current = getattr(it, field)
                if base is None:
                    readings = [(frame[field], False)]
                else:
                    readings = merge(base, current, frame[field])
                for text, overwrote in readings:
                    s = state.copy()
                    item = s.items[frame["id"]]
                    ns = list(notices)
                    earlier = item.author.get(field)
                    if overwrote and earlier and earlier[0] != who:
                        ns.append((earlier[0], earlier[1], item.id, field, text, who))
                    setattr(item, field, text)
                    item.author[field] = (who, ref)
                    grown.append((s, ns))
            branches = grown
        out = []
        for s, ns in branches:
            it, old = s.items[frame["id"]], self.items[frame["id"]]
            same = it.title == old.title and it.memo == old.memo
            out.append((s, Outcome("unchanged" if same else "applied", notices=ns)))
        return out
