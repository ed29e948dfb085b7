"""The scripted demo session on the reference host (``ptc-plus demo``)."""
