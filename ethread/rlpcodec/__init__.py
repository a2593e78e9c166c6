"""RLP of the chain's records, both ways: the network forms ``geth export``, Era1 archives
and trie roots use, and the records a store keeps, made into models.

Named ``rlpcodec``, not ``rlp``, so that nothing can take it for the pyrlp package every
module here imports as ``rlp``. The modules, from the bottom up:

    items.py         RLP items: the fast reader of a store's records, the encoder, item spans
    fields.py        how a record's fields are read: STRICT (bytes from outside), TRUSTED
    headers.py       header RLP and its one decoder; what receipts read of a stored header
    transactions.py  one decoder per transaction type, the access-list and authorization
                     readers, a transaction's encodings and signing hash
    senders.py       senders recovered from a body's signatures
    assemble.py      decoded parts and execution results -> Block and Receipt models
    blocks.py        withdrawals, block RLP, a chain file's or a store's block -> Block
    receipts.py      receipt RLP; consensus receipts -> Receipt models
"""
