"""Testing with ethread: the pytest plugin (:mod:`ethread.testing.pytest_plugin`)."""
