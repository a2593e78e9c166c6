"""The RPC surface: every JSON-RPC method as a row of one table (:mod:`.table`), which source
answers a call (:mod:`.sources`), and the :class:`~.dispatcher.Dispatcher`. The wire alone is
:mod:`ethread.codec`."""
