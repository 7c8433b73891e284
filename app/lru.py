"""A bounded in-process cache shared by the threads of a worker."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class LRU(Generic[V]):
    """Keeps the ``size`` most recently used values, and with ``weigh`` at most ``budget``
    of their total weight (bytes, say). Values are shared between requests: never mutate
    one. ``get_or_compute`` computes outside the lock, so two threads may compute the same
    value once each; both results are equal, the last one is kept."""

    def __init__(self, size: int, *, budget: int = 0,
                 weigh: Callable[[V], int] | None = None) -> None:
        self.size = size
        self.budget = budget
        self._weigh = weigh
        self._weight = 0
        self._items: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: Hashable, value: V) -> V:
        with self._lock:
            old = self._items.get(key)
            self._items[key] = value
            self._items.move_to_end(key)
            if self._weigh is not None:
                self._weight += self._weigh(value) - (self._weigh(old) if old is not None
                                                       else 0)
            while len(self._items) > self.size or (
                    self._weigh is not None and self._weight > self.budget
                    and len(self._items) > 1):
                _key, dropped = self._items.popitem(last=False)
                if self._weigh is not None:
                    self._weight -= self._weigh(dropped)
        return value

    def get_or_compute(self, key: Hashable, compute: Callable[[], V]) -> V:
        found = self.get(key)
        return found if found is not None else self.put(key, compute())

    def __len__(self) -> int:
        return len(self._items)
