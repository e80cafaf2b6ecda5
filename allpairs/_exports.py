"""A package's public names imported on first use (PEP 562), so that importing the package loads none of
its modules: one mechanism for every package that names its members lazily."""
from __future__ import annotations

from typing import Callable


def lazy_exports(package: str, exports: dict[str, str], namespace: dict) -> tuple[Callable, Callable]:
    """The ``__getattr__`` and ``__dir__`` of ``package``: ``exports`` maps a public name to the submodule
    defining it; a name is imported on first use and kept in ``namespace`` (the package's globals)."""

    def __getattr__(name: str):
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        # The import statement's path, not importlib's, so that -X importtime shows the module by name.
        value = getattr(__import__(f"{package}.{module}", fromlist=[name]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
