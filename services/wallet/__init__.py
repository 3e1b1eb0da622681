"""Wallet service: accounts of virtual chips, a double-entry ledger, holds, idempotent transfers."""
