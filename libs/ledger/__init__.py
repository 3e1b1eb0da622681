"""The wallet's pure domain: a double-entry ledger of virtual chips (rule NK-6: chips are virtual).

No I/O here: the model (accounts, postings, transfers, holds), the commands a caller may send, their
validation, the balance arithmetic that refuses overdrafts, the idempotency comparison, and the
ledger invariants. `services/wallet` is the imperative shell that stores all this.
"""
