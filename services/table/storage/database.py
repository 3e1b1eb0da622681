"""The table service's stores write and read through servicekit.sqlstore (shared with the tournament
service since issue 25, for servicekit.leases): the names the table service's modules import from here."""

from servicekit.sqlstore import (
    Cursor,
    Database,
    Dialect,
    Row,
    ScriptTx,
    StoreUnavailable,
    Tx,
    lock_clause,
)

__all__ = ["Cursor", "Database", "Dialect", "Row", "ScriptTx", "StoreUnavailable", "Tx", "lock_clause"]
