"""The code that runs inside the child process of a ``run_code`` run.

Everything in this package uses the standard library only and relative
imports: the child starts as ``python -I -S`` and imports this directory as
a top-level package named ``worker``, so it must not import ``ptc_plus`` (or
anything installed). The host imports the same modules as
``ptc_plus.runtime.worker`` to share the lossless-value rules.
"""
