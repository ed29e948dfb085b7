"""The hostile-program suite (issue 8): adversarial programs through the real runtime, checked for escapes."""
