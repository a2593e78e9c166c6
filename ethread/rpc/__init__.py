"""The RPC surface: every JSON-RPC method ethread answers, declared once as a row of one table
(:mod:`.table`, one module per namespace), the one place that decides which source answers a
call (:mod:`.sources`), and :class:`~.dispatcher.Dispatcher`, which answers requests against a
backend with that table. :mod:`ethread.codec` below is the wire alone."""
