"""PTC Plus as an llm plugin (ADR 0074): code mode with the plan for every llm conversation.

llm loads :mod:`ptc_plus.doors.llm.plugin` from its entry-point group
``llm`` (``llm install ptc-plus``, or ``pip install ptc-plus`` into llm's
environment). Each conversation is one session of the embedded reference host
with PTC Plus loaded (:mod:`.conversation`), its host tools llm's other
registered tools (:mod:`.host_tools`); ``llm capabilities`` is
:mod:`.commands`. Nothing here is imported by the rest of the package: this
unit sits above the command line it mounts.
"""

from __future__ import annotations

__all__: list[str] = []
