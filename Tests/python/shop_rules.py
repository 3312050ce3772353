"""An independent reading of the banchan shop's rules (docs/rules/shop.md, P1-P12,
PC1-PC6) for the end-to-end tests in test_shop.py.

Written from the rules text alone, never from the hub's code: given a
catalog (the `sections` of a state frame) and an intent, what the hub must
answer and what the catalog becomes. Answers are plain dicts holding only
what the rules fix (type, code, field, lines, current, total); the tests
compare those members and ignore the rest (ref, message wording, version).

Where the rules leave something open, the choice made here is the one the
hub was described to make, and is marked "(as built)".
"""
import copy, re

# -- P1: the three sections, in this order, with their fixed words ----------
SECTIONS = (
    ("main", "메인반찬", "한그릇 뚝딱 메인 요리"),
    ("soup", "국.찌개", "김이 모락모락 국.찌개"),
    ("side", "밑반찬", "언제 먹어도 든든한 밑반찬"),
)
SECTION_IDS = tuple(s[0] for s in SECTIONS)

# -- P2: a dish's fields and their limits ------------------------------------
DISH_FIELDS = ("id", "title", "description", "price", "original_price", "badges", "thumb",
               "images", "detail_images", "stock", "available", "sold")
SETTABLE = ("section", "title", "description", "price", "original_price", "badges", "thumb",
            "images", "detail_images", "stock", "available")
DISH_ID = re.compile(r"[a-z0-9_-]{1,32}")
TITLE_MAX, DESCRIPTION_MAX = 100, 500
PRICE_MAX = 10_000_000
STOCK_MAX = 9_999
BADGES_MAX, BADGE_MAX = 5, 20
IMAGES_MAX, DETAIL_IMAGES_MAX = 10, 20

# -- P4: images ----------------------------------------------------------------
IMAGE_NAME = re.compile(r"[a-z0-9._-]{1,64}")
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".webp": "image/webp", ".svg": "image/svg+xml"}
IMAGE_MAX_BYTES = 1 << 20
IMAGES_PER_SHOP = 200

# -- P6 / P7: orders -----------------------------------------------------------
ORDER_DONE = "주문이 완료되었습니다"
LINES_MAX = 20
QUANTITY_MIN, QUANTITY_MAX = 1, 99
FAULTS = ("sold_out", "not_enough_stock", "unavailable", "price_changed")   # P6: first of these
MY_ORDERS_KEPT = 20


def whole(v):
    """A JSON integer (not a bool)."""
    return isinstance(v, int) and not isinstance(v, bool)


def image_name_ok(name):
    return isinstance(name, str) and IMAGE_NAME.fullmatch(name) is not None and \
        any(name.endswith(ext) for ext in IMAGE_TYPES)


def image_type(name):
    return next(t for ext, t in IMAGE_TYPES.items() if name.endswith(ext))


def bytes_are_of_type(name, data):
    """P4: the body's bytes are of the type the name's ending says."""
    if name.endswith(".png"):
        return data.startswith(b"\x89PNG\r\n\x1a\n")
    if name.endswith(".jpg"):
        return data.startswith(b"\xff\xd8\xff")
    if name.endswith(".webp"):
        return len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    if name.endswith(".svg"):
        text = data.lstrip()
        if text.startswith(b"<?xml"):                        # an XML declaration may come first
            text = text[text.find(b"?>") + 2:].lstrip() if b"?>" in text else b""
        return text.startswith(b"<svg")
    return False


def one_line_text(v, low, high):
    return isinstance(v, str) and low <= len(v) <= high and "\n" not in v and "\r" not in v


def new_dish(dish_id, **fields):
    """A dish with P8's defaults (empty, null, 0 stock, available, nothing sold)."""
    d = {"id": dish_id, "title": "", "description": "", "price": 0, "original_price": None,
         "badges": [], "thumb": None, "images": [], "detail_images": [], "stock": 0,
         "available": True, "sold": 0}
    d.update(fields)
    return d


class Shop:
    """One shop board's catalog, images and orders, as the rules say they
    must be after each intent."""

    def __init__(self, sections, images=()):
        # sections: the state frame's list; the order within a section matters.
        self.sections = {s["id"]: [copy.deepcopy(d) for d in s["dishes"]] for s in sections}
        self.images = set(images)
        self.orders = {}                 # who -> [order, ...], oldest first

    @classmethod
    def from_state(cls, state):
        """The catalog of a state frame; its images: the ones it names
        (the sample's are stored on every shop, P3)."""
        images = set()
        for s in state["sections"]:
            for d in s["dishes"]:
                images.update(([d["thumb"]] if d["thumb"] else []) + d["images"] + d["detail_images"])
        return cls(state["sections"], images)

    # -- reading -------------------------------------------------------------
    def find(self, dish_id):
        """(section id, dish) or (None, None)."""
        for sid in SECTION_IDS:
            for d in self.sections[sid]:
                if d["id"] == dish_id:
                    return sid, d
        return None, None

    def dish(self, dish_id):
        return self.find(dish_id)[1]

    def view(self):
        """The `sections` member of the state frame the catalog makes."""
        return [{"id": sid, "title": title, "subtitle": subtitle,
                 "dishes": copy.deepcopy(self.sections[sid])} for sid, title, subtitle in SECTIONS]

    def ids(self):
        return [d["id"] for sid in SECTION_IDS for d in self.sections[sid]]

    def my_orders(self, who):
        """P7: that name's latest 20 orders, newest first."""
        return [copy.deepcopy(o) for o in reversed(self.orders.get(who, [])[-MY_ORDERS_KEPT:])]

    # -- P6: orders ------------------------------------------------------------
    @staticmethod
    def shape_fault(lines):
        """The field of a shape fault of an order (answered bad_field), or None."""
        if not isinstance(lines, list) or not 1 <= len(lines) <= LINES_MAX:
            return "lines"
        for line in lines:
            if not (isinstance(line.get("dish"), str) and DISH_ID.fullmatch(line["dish"])):
                return "dish"
            if not (whole(line.get("quantity")) and QUANTITY_MIN <= line["quantity"] <= QUANTITY_MAX):
                return "quantity"
            if not (whole(line.get("price")) and 0 <= line["price"] <= PRICE_MAX):
                return "price"
        return None

    def line_faults(self, lines):
        """P6: every failing line as the refusal lists it, in line order."""
        wanted = {}
        for line in lines:                                  # lines naming one dish add up
            wanted[line["dish"]] = wanted.get(line["dish"], 0) + line["quantity"]
        faults = []
        for i, line in enumerate(lines):
            d = self.dish(line["dish"])
            if d is not None and d["stock"] == 0:
                faults.append({"index": i, "code": "sold_out"})
            elif d is not None and d["stock"] < wanted[line["dish"]]:
                faults.append({"index": i, "code": "not_enough_stock", "available": d["stock"]})
            elif d is None or not d["available"]:
                faults.append({"index": i, "code": "unavailable"})
            elif d["price"] != line["price"]:
                faults.append({"index": i, "code": "price_changed", "price": d["price"]})
        return faults

    def judge_order(self, lines):
        """The answer the order must get, without applying it."""
        if lines is None:
            return {"type": "error", "code": "missing_field"}
        field = self.shape_fault(lines)
        if field:
            return {"type": "rejected", "code": "bad_field", "field": field}
        faults = self.line_faults(lines)
        if faults:
            return {"type": "rejected", "code": faults[0]["code"], "lines": faults}
        return {"type": "ack", "total": sum(l["price"] * l["quantity"] for l in lines), "message": ORDER_DONE}

    def order(self, lines, who):
        """Judges and, when taken, applies the order (stock down, sold up,
        the order kept for `who` with its id still unknown: name_last_order)."""
        answer = self.judge_order(lines)
        if answer["type"] == "ack":
            for line in lines:
                d = self.dish(line["dish"])
                d["stock"] -= line["quantity"]
                d["sold"] += line["quantity"]
            self.orders.setdefault(who, []).append(
                {"order": None, "lines": copy.deepcopy(lines), "total": answer["total"]})
        return answer

    def name_last_order(self, who, order_id):
        self.orders[who][-1]["order"] = order_id

    # -- P2 / P10: values ----------------------------------------------------------
    def value_fault(self, field, value):
        """Whether one value is within P2's limits on its own (True: bad)."""
        if field == "id":
            return not (isinstance(value, str) and DISH_ID.fullmatch(value))
        if field == "section":
            return value not in SECTION_IDS
        if field == "title":
            return not one_line_text(value, 1, TITLE_MAX)
        if field == "description":
            return not (isinstance(value, str) and len(value) <= DESCRIPTION_MAX)
        if field == "price":
            return not (whole(value) and 0 <= value <= PRICE_MAX)
        if field == "original_price":
            return not (value is None or (whole(value) and 0 <= value <= PRICE_MAX))
        if field == "badges":
            return not (isinstance(value, list) and len(value) <= BADGES_MAX
                        and all(one_line_text(b, 1, BADGE_MAX) for b in value))
        if field == "thumb":
            return not (value is None or value in self.images)
        if field == "images":
            return not (isinstance(value, list) and len(value) <= IMAGES_MAX and all(v in self.images for v in value))
        if field == "detail_images":
            return not (isinstance(value, list) and len(value) <= DETAIL_IMAGES_MAX
                        and all(v in self.images for v in value))
        if field == "stock":
            return not (whole(value) and 0 <= value <= STOCK_MAX)
        if field == "available":
            return not isinstance(value, bool)
        raise KeyError(field)

    def fault_of(self, dish, named):
        """The first bad field of `dish` (a whole dish, `section` included)
        among `named`, in P2's order; then the discount rule (original_price
        above price), blamed on original_price when it was named, else on
        price (as built)."""
        for field in ("id",) + SETTABLE:
            if field in named and self.value_fault(field, dish[field]):
                return field
        if dish["original_price"] is not None and dish["original_price"] <= dish["price"]:
            return "original_price" if "original_price" in named else "price"
        return None

    # -- P8: the catalog intents -----------------------------------------------------
    def add_dish(self, frame, made_id=None):
        """add_dish; `made_id` is the id the hub made when the frame has none."""
        for need in ("section", "title", "price"):
            if need not in frame:
                return {"type": "error", "code": "missing_field"}
        dish_id = frame.get("id", made_id)
        fields = {k: copy.deepcopy(frame[k]) for k in SETTABLE if k in frame}
        dish = {**new_dish(dish_id), **fields}
        named = ("id",) * ("id" in frame) + tuple(fields)
        bad = self.fault_of(dish, named)
        if bad:
            return {"type": "rejected", "code": "bad_field", "field": bad}
        if self.dish(dish_id) is not None:
            return {"type": "rejected", "code": "duplicate_id"}
        section = dish.pop("section")
        self.sections[section].append(dish)                   # last in its section
        return {"type": "ack", "id": dish_id}

    def remove_dish(self, frame):
        sid, d = self.find(frame["dish"])
        if d is not None:
            self.sections[sid].remove(d)
        return {"type": "ack", "changed": d is not None}

    def edit_dish(self, frame):
        sets, seen = frame.get("set"), frame.get("from")
        if not sets or seen is None or any(k not in seen for k in sets):
            return {"type": "error", "code": "missing_field"}
        sid, d = self.find(frame["dish"])
        if d is None:
            return {"type": "rejected", "code": "unknown_dish"}
        now = {**copy.deepcopy(d), "section": sid}
        after = {**now, **copy.deepcopy(sets)}
        stale = {k: now[k] for k in sets if seen[k] != now[k]}
        if stale:                    # P9: what the editor saw first: the stale fields as they are now
            return {"type": "rejected", "code": "stale", "current": stale}
        bad = self.fault_of(after, tuple(sets))
        if bad:
            return {"type": "rejected", "code": "bad_field", "field": bad}
        new_section = after.pop("section")
        if new_section != sid:
            self.sections[sid].remove(d)
            self.sections[new_section].append(after)
        else:
            self.sections[sid][self.sections[sid].index(d)] = after
        return {"type": "ack"}

    def restock(self, frame):
        d = self.dish(frame["dish"])
        if d is None:
            return {"type": "rejected", "code": "unknown_dish"}
        if not 0 <= d["stock"] + frame["by"] <= STOCK_MAX:
            return {"type": "rejected", "code": "out_of_range"}
        d["stock"] += frame["by"]
        return {"type": "ack"}

    def set_stock(self, frame):
        d = self.dish(frame["dish"])
        if d is None:
            return {"type": "rejected", "code": "unknown_dish"}
        # A stale `from` is answered before a bad `to` (as built; the rules
        # do not say which comes first).
        if frame["from"] != d["stock"]:
            return {"type": "rejected", "code": "stale", "current": {"stock": d["stock"]}}
        if not (whole(frame["to"]) and 0 <= frame["to"] <= STOCK_MAX):
            return {"type": "rejected", "code": "bad_field", "field": "to"}
        d["stock"] = frame["to"]
        return {"type": "ack"}

    def apply(self, frame, who, made_id=None):
        """Any intent: the answer it must get (the catalog changed when taken)."""
        kind = frame["type"]
        if kind == "order":
            return self.order(frame.get("lines"), who)
        if kind == "my_orders":
            return {"type": "ack", "orders": self.my_orders(who)}
        if kind == "add_dish":
            return self.add_dish(frame, made_id)
        return getattr(self, kind)(frame)


def matches(answer, expected):
    """Whether the hub's `answer` is the model's `expected` in every member
    the rules fix; refusals must carry a message a person can act on."""
    if answer.get("type") != expected["type"]:
        return False
    if answer["type"] in ("rejected", "error"):
        if answer.get("code") != expected["code"] or not answer.get("message"):
            return False
    for member in ("field", "lines", "current", "total", "message", "orders", "id"):
        if member in expected and answer.get(member) != expected[member]:
            return False
    return True
