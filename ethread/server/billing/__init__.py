"""Credits and the ledger they are kept in: prices and admission (:mod:`.credits`), the ledger
interface (:mod:`.ledger`) and its engines (:mod:`.ledger_mapped`, :mod:`.ledger_sqlite`,
:mod:`.ledger_redis`). The ledger is the one owner of balances and daily usage."""
