"""The admin API and the dashboard, on a port of their own (:mod:`.site`, :mod:`.dashboard`,
:mod:`.web` for their small HTTP helpers)."""
