"""What PTC Plus keeps per host session: gate decision, frozen environment, and its projections.

:class:`~ptc_plus.session.controller.PtcController` (one per host) answers the
plugin's hooks from these pieces; :mod:`ptc_plus.plugin` only routes hooks to it.
"""
