"""Testing with ethread: the pytest plugin (:mod:`ethread.testing.pytest_plugin`, registered
through the ``pytest11`` entry point) and its assertion output."""
