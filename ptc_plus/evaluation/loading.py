"""Loading a task suite by path (``benchmarks/tasks`` by default): a package whose ``SUITE`` is a :class:`Suite`,
or whose ``load()`` makes one (a suite that fetches its data, as ``benchmarks/bfcl`` does, only when it is run).

The suite is not part of the installed package: it lives in the checkout and
is imported from its directory, so ``ptc-plus eval --tasks DIR`` measures
exactly the tasks in ``DIR``. Its modules may import each other relatively
(``from .world import ...``) or absolutely from the directory two levels up
(``benchmarks.catalog_data`` for ``<root>/benchmarks/tasks``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path

from ptc_plus.errors import PtcError, UsageError
from ptc_plus.evaluation.task import Suite

SUITE_ATTRIBUTE = "SUITE"
FACTORY_ATTRIBUTE = "load"


class SuiteMissing(UsageError):
    """The tasks directory does not exist or is not a Python package (no ``__init__.py``).

    :ivar params: ``path``.
    """

    code = "PTC-7420"


class SuiteBroken(PtcError):
    """The tasks package failed to import, or its ``SUITE`` is missing or not a ``Suite``.

    :ivar params: ``path``, ``reason`` (the exception's type and message).
    """

    code = "PTC-7421"


def load_suite(directory: Path) -> Suite:
    """Import the package at ``directory`` and return its ``SUITE`` (or what its ``load()`` returns).

    :raises SuiteMissing: no package there.
    :raises SuiteBroken: it does not import, or has no :class:`Suite` named ``SUITE`` and no ``load()`` making one.
    A :class:`~ptc_plus.errors.PtcError` of ``load()`` (its data cannot be had) propagates with its own code.
    """
    directory = directory.expanduser().resolve()
    init = directory / "__init__.py"
    if not init.is_file():
        raise SuiteMissing(path=str(directory))
    # A name of its own per directory: two suites (or a suite and an installed `benchmarks`) never collide.
    name = "ptc_eval_suite_" + hashlib.sha256(str(directory).encode()).hexdigest()[:12]
    module = sys.modules.get(name)
    if module is None:
        root = str(directory.parent.parent)
        if root not in sys.path:
            sys.path.append(root)
        spec = importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(directory)])
        if spec is None or spec.loader is None:
            raise SuiteMissing(path=str(directory))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # the suite's own code: any failure is a broken suite, reported with its cause
            for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
                del sys.modules[loaded]
            raise SuiteBroken(path=str(directory), reason=f"{type(exc).__name__}: {exc}") from exc
    suite = getattr(module, SUITE_ATTRIBUTE, None)
    factory = getattr(module, FACTORY_ATTRIBUTE, None)
    if suite is None and callable(factory):
        try:
            suite = factory()
        except PtcError:
            raise
        except Exception as exc:  # the suite's own code, as for its import
            raise SuiteBroken(path=str(directory), reason=f"{type(exc).__name__}: {exc}") from exc
    if not isinstance(suite, Suite):
        found = "nothing" if suite is None else type(suite).__name__
        raise SuiteBroken(path=str(directory), reason=f"{SUITE_ATTRIBUTE} is {found}, not a Suite")
    return suite


__all__ = ["SuiteBroken", "SuiteMissing", "load_suite"]
