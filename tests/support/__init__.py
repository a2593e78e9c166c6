"""Helpers the tests share (no tests here): servers started in a thread or as ``ethread serve``,
peers (anvil, redis-server), the conformance data's location and case files, backends built
from a chain in memory, and the chains and messages several modules run two ways. A test
module imports from here, never from another test module."""
