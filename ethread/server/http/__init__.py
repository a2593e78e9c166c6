"""HTTP: the ASGI application (:mod:`.app`), uvicorn's httptools protocol with bounds on how a
request's headers arrive (:mod:`.protocol`), and the opt-in lean path that answers JSON-RPC
POSTs from the parser's callbacks (:mod:`.lean`, with :mod:`.admission_turn`)."""
