"""Serving processes: one process binding its sockets and running uvicorn (:mod:`.runner`),
the supervisor that forks workers after building the service (:mod:`.workers`), how they
share accepting connections (:mod:`.fair_accept`) and cached answers
(:mod:`.shared_fragments`)."""
