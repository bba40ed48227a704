"""A set rebuilt from the sender's items iterates in the sender's order.

In plain Python the program gets the very set the test built, so `tuple(s)`, `next(iter(s))` and `str(s)` show
its table's order, which depends on the table's history (its size after removals, collisions, who came
first), not only on its items. The receiver builds the set the plain way, from the items in the sender's
order, and checks its order. When that differs it plans a table of the sender's size (sent along when it is
not the size adds alone give): each item in turn takes a slot after the previous item's on its CPython probe
sequence, placeholder entries (hash = a slot, equal to nothing) occupy the slots it must probe past, more
placeholders make the table that size and are deleted again (iteration skips deleted entries), then the
items go in and the placeholders out. Every construction is checked by iterating the result, and the plain
set is kept when none gives the sender's order. A frozenset is built in one go: insertion orders are tried
instead (all of them for a few items, then repairs). Strings hash by the process's hash seed: the judge and
the program share it (both are forked from one worker, PYTHONHASHSEED=0: isolation.py).
"""

import itertools
import sys

_PROBES = 9  # CPython's LINEAR_PROBES: a colliding key tries the next slots first
_MAX_TABLE = 1 << 14  # the largest table planned (a small set that shrank from a large one)
_UNSIGNED = (1 << 64) - 1  # the C size_t the probe sequence is computed in
_BRANCH = 3  # slots tried per item on backtracking
_BUDGET = 400  # backtracking steps, beyond 8 per item
_REACH = 40  # probe positions an item may go through to its slot
_PERMUTED = 5  # a frozenset of up to this many items: every insertion order is tried
_REPAIRED = 256  # up to this many: repaired orders
_SCALARS = frozenset({int, str, bytes, float, bool, complex, type(None)})
_EMPTY = sys.getsizeof(set())
_ENTRY = 16  # bytes per slot of a set's table beyond its inline one of 8


class _Slot:
    """A placeholder occupying one slot; equal to nothing but itself."""

    __slots__ = ("h",)

    def __init__(self, h):
        self.h = h

    def __hash__(self):
        return self.h


def table_size(s):
    """The number of slots of a set's table."""
    return max(8, (sys.getsizeof(s) - _EMPTY) // _ENTRY)


def grown_size(n):
    """The table size n adds to an empty set give (a resize at 60 % fill, to 4 x used rounded up)."""
    size, fill = 8, 0
    while True:
        trigger = -(-(size - 1) * 3 // 5)  # the fill at which an add resizes
        if n < trigger:
            return size
        fill = trigger
        new = 8
        while new <= fill * 4:
            new <<= 1
        size = new


def hint(s):
    """The sender's table size when a receiver could not guess it (not the size adds alone give), else None."""
    size = table_size(s)
    return None if size == grown_size(len(s)) else size


def _plain(v):
    """True when v's hash is the builtin types' own (no code of the sender's would run)."""
    t = type(v)
    return t in _SCALARS or ((t is tuple or t is frozenset) and all(_plain(x) for x in v))


def _same(made, items):
    return len(made) == len(items) and all(a is b for a, b in zip(made, items, strict=True))


def rebuild(kind, items, size=None):
    """kind (set or frozenset) of items, iterating in the order of items whenever CPython's tables allow it;
    size: the sender's table size, when it sent one."""
    made = kind(items)
    if len(items) < 2 or _same(made, items):
        return made
    if len(made) != len(items) or not all(_plain(v) for v in items):
        return made  # equal items twice; hashes that would run the sender's code again (a handle's)
    if kind is frozenset:
        return _frozen(items) or made
    other = set()
    return other if refill(other, items, size) else made


def _frozen(items):
    """A frozenset of items iterating in their order, or None. Built in one go (no placeholders), it can only
    have a layout some insertion order gives: every order for a few items; then the order a plan without
    placeholders gives, in the table frozenset(dict) presizes (the size a frozenset copied from a set has);
    then repairs of the items' order (the first item out of place is inserted earlier)."""
    if len(items) <= _PERMUTED:
        orders = itertools.permutations(items)
    elif len(items) <= _REPAIRED:
        orders = itertools.chain(_planned(items), _repairs(items))
    else:
        orders = (items,)
    for order in orders:
        for made in (frozenset(order), frozenset(dict.fromkeys(order))):
            if _same(made, items):
                return made
    return None


def _planned(items):
    size = 8
    while size <= 2 * len(items):
        size <<= 1
    plan = _plan([hash(v) for v in items], size, placeholders=False)
    if plan is not None and not plan[1]:
        yield [items[k] for k in plan[0]]


def _repairs(items):
    order = list(items)
    for _ in range(2 * len(items)):
        yield order
        made = list(frozenset(order))
        i = next((i for i, (a, b) in enumerate(zip(made, items, strict=True)) if a is not b), None)
        if i is None:
            return
        j = next(k for k, v in enumerate(order) if v is items[i])
        k = next(k for k, v in enumerate(order) if v is made[i])
        if j < k:
            return
        order.insert(k, order.pop(j))


def refill(target, items, size=None):
    """Fill the empty set target with items so that it iterates in their order; True when it does (else it
    holds them in the plain order). size: the table size to plan (the sender's), else the likely ones."""
    hashes = None
    if len(items) <= _MAX_TABLE // 2 and all(_plain(v) for v in items):  # a table planned: _MAX_TABLE at most
        try:
            hashes = [hash(v) for v in items]
        except Exception:  # a tuple holding a list
            pass
    if size is None:
        presized = 8
        while len(items) >= 5 and presized <= 2 * len(items):
            presized <<= 1
        sizes = [s for s in dict.fromkeys((grown_size(len(items)), presized)) if s <= _MAX_TABLE]
    else:
        sizes = (size,) if type(size) is int and 8 <= size <= _MAX_TABLE and not size & (size - 1) else ()
    for size in sizes if hashes is not None else ():
        for placeholders in (False, True):  # a table that only grew needs none: that plan is the likelier
            plan = _plan(hashes, size, placeholders)
            if plan is None:
                continue
            if _build(target, items, size, *plan):
                return True
            target.clear()
            if not plan[1]:  # a table that only grew: the plan's insertion order, growing as the sender's did
                target.update([items[k] for k in plan[0]])
                if _same(target, items):
                    return True
                target.clear()
    target.update(items)
    return _same(target, items)


def _build(target, items, size, order, pushers, free):
    """Make target's table `size` slots with the pushers (placeholders) at their slots, add the items in
    `order`, drop the placeholders; False when it does not give the items' order, or cannot be made so
    (items and pushers past half the table: one presize cannot make it).

    The table gets its size from one presize: update() with a dict of d keys resizes (when that fills the
    table past 60 %) to the smallest power of two above 2 * (live + d), keeping only the live entries (the
    pushers, each at its slot), then adds the keys in the dict's order: spare placeholders first, then the
    items, size/2 - 1 entries in all (so the items go in without another resize)."""
    if len(pushers) + len(items) > (4 if size == 8 else size // 2 - 1):
        return False
    target.update(dict.fromkeys(_Slot(s) for s in pushers))
    spare = [_Slot(s) for s in itertools.islice(free, size // 2 - 1 - len(pushers) - len(items))] if size > 8 else []
    target.update(dict.fromkeys([*spare, *(items[k] for k in order)]))
    if table_size(target) != size:
        return False
    for q in list(target):
        if type(q) is _Slot:
            target.discard(q)
    return _same(target, items)


def _probes(h, mask):
    """The slots CPython's set lookup tries for hash h, in order (its linear runs, then perturbed jumps)."""
    perturb, i = h & _UNSIGNED, h & mask
    while True:
        yield from range(i, i + _PROBES + 1 if i + _PROBES <= mask else i + 1)
        perturb >>= 5
        i = (i * 5 + 1 + perturb) & mask


class _Path:
    """An item's probe sequence, computed as far as it is read."""

    __slots__ = ("slots", "more")

    def __init__(self, h, mask):
        self.slots, self.more = [], _probes(h, mask)

    def at(self, i):
        while len(self.slots) <= i:
            self.slots.append(next(self.more))
        return self.slots[i]


def _owned_before(slots, i, last, target, owner):
    """Without placeholders: every slot passed before slots[i] is an item's, or may still be one (after
    target: a later item's)."""
    return all(s in owner or s > target for s in slots[:i])


def _plan(hashes, size, placeholders=True):
    """(insertion order, placeholder slots, spare slots) that put item k at slot t_k, t increasing, in a table
    of `size`; None when this size cannot. Item k takes a slot after item k-1's on its probe sequence; every
    slot it passes before must be taken when it goes in: by an item inserted before it, or by a placeholder.
    The first free slot in probe order is tried first, later ones on backtracking, within a budget."""
    mask, n = size - 1, len(hashes)
    if n * 5 >= mask * 3:
        return None  # a table this size never holds n items
    paths = [_Path(h, mask) for h in hashes]
    targets, owner = [], {}  # slot -> item
    stack = []  # per placed item: the index of its slot in its path, tries left
    budget, start, tries = _BUDGET + 8 * n, 0, _BRANCH
    while len(targets) < n:
        budget -= 1
        if budget < 0:
            return None
        k, last = len(targets), targets[-1] if targets else -1
        path = paths[k]
        found = next((i for i in range(start, _REACH) if (s := path.at(i)) > last and s not in owner
                      and (placeholders or _owned_before(path.slots, i, last, s, owner))), None) if tries else None
        if found is None:  # back to the previous item's next slot
            if not stack:
                return None
            start, tries = stack.pop()
            del owner[targets.pop()]
            start += 1
            continue
        stack.append((found, tries - 1))
        targets.append(path.slots[found])
        owner[path.slots[found]] = k
        start, tries = 0, _BRANCH
    # who must go in before whom; the slots passed that no item takes get placeholders
    after = [set() for _ in range(n)]
    held = {}
    for k, (path, t) in enumerate(zip(paths, targets, strict=True)):
        for s in path.slots[:path.slots.index(t)]:
            j = owner.get(s)
            if j is None:
                held[s] = None
            elif j != k:
                after[k].add(j)
    order = _topological(after)
    if order is None:
        return None
    pushers = list(held)
    busy = set(held).union(*(p.slots[:p.slots.index(t) + 1] for p, t in zip(paths, targets, strict=True)))
    return order, pushers, [s for s in range(mask, -1, -1) if s not in busy]


def _topological(after):
    """An order of the items in which each comes after those in its `after` set (None: a cycle); the items'
    own order wherever it is free."""
    n = len(after)
    placed, order, done = [False] * n, [], 0
    while done < n:
        progress = False
        for k in range(n):
            if not placed[k] and all(placed[j] for j in after[k]):
                placed[k] = True
                order.append(k)
                done += 1
                progress = True
        if not progress:
            return None
    return order
