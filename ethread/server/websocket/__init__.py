"""WebSocket: the endpoint at ``/ws/v3/<key>`` (:mod:`.endpoint`) and the uvicorn protocol it
runs on (:mod:`.protocol`)."""
