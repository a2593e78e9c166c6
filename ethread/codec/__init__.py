"""The JSON-RPC wire: hex and parameters in (:mod:`.hex`, :mod:`.params`), model objects out
as JSON (:mod:`.serialize`, :mod:`.answers`, :mod:`.stored_answers`), the envelope
(:mod:`.envelope`), the request pipeline (:mod:`.pipeline`) and the answer cache
(:mod:`.response_cache`). The methods themselves are :mod:`ethread.rpc`'s."""
