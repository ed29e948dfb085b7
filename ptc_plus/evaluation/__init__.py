"""The token evaluation (issue 15): tasks run in every style (ADR 0094) on the reference host, metered and reported.

:mod:`.task` says what a task is; :mod:`.runner` runs one (:func:`~.runner.run_task`,
:func:`~.runner.warm_up`) with the scripted model of :mod:`.driver`; :mod:`.exchange`
holds what a run produced. Nothing is imported here, so reading results never starts
the engine (hosts, sandboxes, MCP servers).
"""
