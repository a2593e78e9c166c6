"""The JSON-RPC wire: parameters in, model objects out as JSON, the envelope, the request
pipeline and the answer cache. The methods themselves are :mod:`ethread.rpc`'s."""
