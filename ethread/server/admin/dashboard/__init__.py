"""The developer dashboard: server-rendered pages on the service's own HTTP server.

- :mod:`.sessions`: signed session cookies and the CSRF token of each form;
- :mod:`.pages`: the HTML (escaped, no script, one stylesheet);
- :mod:`.site`: the routes: logging in with a key or the admin token, a key's figures of the
  day, the admin's list of keys, issuing (the new key shown once) and revoking.
"""

from .site import Dashboard

__all__ = ["Dashboard"]
