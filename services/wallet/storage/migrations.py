"""Versioned schema migrations, applied in order at start (or by `felt migrate`: servicekit.schema), each
recorded in `schema_migrations` in the same transaction. A migration is never edited once
released: changes are new versions. Each dialect has the same tables; the differences are only
in syntax (identity columns, triggers)."""

from __future__ import annotations

from collections.abc import Callable

# Guards shared in spirit by both dialects: ledger rows are immutable, posted totals only grow,
# a resolved hold stays resolved, request ids are kept forever.
_SQLITE_V1 = """
CREATE TABLE accounts (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    owner TEXT NOT NULL,
    debits_posted INTEGER NOT NULL DEFAULT 0 CHECK (debits_posted >= 0),
    credits_posted INTEGER NOT NULL DEFAULT 0 CHECK (credits_posted >= 0),
    debits_pending INTEGER NOT NULL DEFAULT 0 CHECK (debits_pending >= 0),
    created_at_ms INTEGER NOT NULL,
    UNIQUE (kind, owner),
    CHECK (kind IN ('ISSUANCE', 'HOUSE') OR credits_posted - debits_posted - debits_pending >= 0)
);
CREATE TABLE transfers (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    memo TEXT NOT NULL,
    batch_id TEXT NOT NULL,
    hold_id TEXT NOT NULL,
    issue_reason TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL
);
CREATE INDEX transfers_by_batch ON transfers (batch_id) WHERE batch_id <> '';
CREATE TABLE postings (
    transfer_seq INTEGER NOT NULL REFERENCES transfers (seq),
    idx INTEGER NOT NULL,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    side TEXT NOT NULL CHECK (side IN ('DEBIT', 'CREDIT')),
    amount INTEGER NOT NULL CHECK (amount > 0),
    PRIMARY KEY (transfer_seq, idx)
);
CREATE INDEX postings_by_account ON postings (account_id, transfer_seq);
CREATE TABLE holds (
    id TEXT PRIMARY KEY,
    debit_account_id TEXT NOT NULL REFERENCES accounts (id),
    credit_account_id TEXT NOT NULL REFERENCES accounts (id),
    amount INTEGER NOT NULL CHECK (amount > 0),
    status TEXT NOT NULL,
    memo TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER,
    captured_amount INTEGER NOT NULL DEFAULT 0,
    capture_transfer_id TEXT NOT NULL DEFAULT '',
    resolved_at_ms INTEGER
);
CREATE INDEX holds_pending_by_expiry ON holds (expires_at_ms) WHERE status = 'PENDING';
CREATE INDEX holds_pending_by_account ON holds (debit_account_id) WHERE status = 'PENDING';
CREATE TABLE requests (
    id TEXT PRIMARY KEY,
    op TEXT NOT NULL,
    params TEXT NOT NULL,
    result_ref TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL
);
CREATE TRIGGER accounts_guard BEFORE UPDATE ON accounts
WHEN NEW.debits_posted < OLD.debits_posted OR NEW.credits_posted < OLD.credits_posted
  OR NEW.id <> OLD.id OR NEW.kind <> OLD.kind OR NEW.owner <> OLD.owner
BEGIN SELECT RAISE(ABORT, 'ledger: posted totals only grow'); END;
CREATE TRIGGER accounts_no_delete BEFORE DELETE ON accounts
BEGIN SELECT RAISE(ABORT, 'ledger: accounts are kept'); END;
CREATE TRIGGER transfers_no_update BEFORE UPDATE ON transfers
BEGIN SELECT RAISE(ABORT, 'ledger: transfers are immutable'); END;
CREATE TRIGGER transfers_no_delete BEFORE DELETE ON transfers
BEGIN SELECT RAISE(ABORT, 'ledger: transfers are immutable'); END;
CREATE TRIGGER postings_no_update BEFORE UPDATE ON postings
BEGIN SELECT RAISE(ABORT, 'ledger: postings are immutable'); END;
CREATE TRIGGER postings_no_delete BEFORE DELETE ON postings
BEGIN SELECT RAISE(ABORT, 'ledger: postings are immutable'); END;
CREATE TRIGGER holds_resolved_once BEFORE UPDATE ON holds WHEN OLD.status <> 'PENDING'
BEGIN SELECT RAISE(ABORT, 'ledger: a hold resolves once'); END;
CREATE TRIGGER holds_no_delete BEFORE DELETE ON holds
BEGIN SELECT RAISE(ABORT, 'ledger: holds are kept'); END;
CREATE TRIGGER requests_no_delete BEFORE DELETE ON requests
BEGIN SELECT RAISE(ABORT, 'ledger: request ids are kept'); END;
INSERT INTO accounts (id, kind, owner, created_at_ms) VALUES ('acc_issuance', 'ISSUANCE', 'platform', 0);
"""

_POSTGRES_V1 = """
CREATE TABLE accounts (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    owner TEXT NOT NULL,
    debits_posted BIGINT NOT NULL DEFAULT 0 CHECK (debits_posted >= 0),
    credits_posted BIGINT NOT NULL DEFAULT 0 CHECK (credits_posted >= 0),
    debits_pending BIGINT NOT NULL DEFAULT 0 CHECK (debits_pending >= 0),
    created_at_ms BIGINT NOT NULL,
    UNIQUE (kind, owner),
    CHECK (kind IN ('ISSUANCE', 'HOUSE') OR credits_posted - debits_posted - debits_pending >= 0)
);
CREATE TABLE transfers (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    memo TEXT NOT NULL,
    batch_id TEXT NOT NULL,
    hold_id TEXT NOT NULL,
    issue_reason TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL
);
CREATE INDEX transfers_by_batch ON transfers (batch_id) WHERE batch_id <> '';
CREATE TABLE postings (
    transfer_seq BIGINT NOT NULL REFERENCES transfers (seq),
    idx INTEGER NOT NULL,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    side TEXT NOT NULL CHECK (side IN ('DEBIT', 'CREDIT')),
    amount BIGINT NOT NULL CHECK (amount > 0),
    PRIMARY KEY (transfer_seq, idx)
);
CREATE INDEX postings_by_account ON postings (account_id, transfer_seq);
CREATE TABLE holds (
    id TEXT PRIMARY KEY,
    debit_account_id TEXT NOT NULL REFERENCES accounts (id),
    credit_account_id TEXT NOT NULL REFERENCES accounts (id),
    amount BIGINT NOT NULL CHECK (amount > 0),
    status TEXT NOT NULL,
    memo TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    expires_at_ms BIGINT,
    captured_amount BIGINT NOT NULL DEFAULT 0,
    capture_transfer_id TEXT NOT NULL DEFAULT '',
    resolved_at_ms BIGINT
);
CREATE INDEX holds_pending_by_expiry ON holds (expires_at_ms) WHERE status = 'PENDING';
CREATE INDEX holds_pending_by_account ON holds (debit_account_id) WHERE status = 'PENDING';
CREATE TABLE requests (
    id TEXT PRIMARY KEY,
    op TEXT NOT NULL,
    params TEXT NOT NULL,
    result_ref TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL
);
CREATE FUNCTION ledger_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ledger: rows of this table are immutable';
END $$;
CREATE FUNCTION ledger_accounts_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.debits_posted < OLD.debits_posted OR NEW.credits_posted < OLD.credits_posted
       OR NEW.id <> OLD.id OR NEW.kind <> OLD.kind OR NEW.owner <> OLD.owner THEN
        RAISE EXCEPTION 'ledger: posted totals only grow';
    END IF;
    RETURN NEW;
END $$;
CREATE FUNCTION ledger_holds_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.status <> 'PENDING' THEN
        RAISE EXCEPTION 'ledger: a hold resolves once';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER accounts_guard BEFORE UPDATE ON accounts FOR EACH ROW EXECUTE FUNCTION ledger_accounts_guard();
CREATE TRIGGER accounts_no_delete BEFORE DELETE ON accounts FOR EACH ROW EXECUTE FUNCTION ledger_refuse();
CREATE TRIGGER transfers_immutable BEFORE UPDATE OR DELETE ON transfers
    FOR EACH ROW EXECUTE FUNCTION ledger_refuse();
CREATE TRIGGER postings_immutable BEFORE UPDATE OR DELETE ON postings
    FOR EACH ROW EXECUTE FUNCTION ledger_refuse();
CREATE TRIGGER holds_resolved_once BEFORE UPDATE ON holds FOR EACH ROW EXECUTE FUNCTION ledger_holds_guard();
CREATE TRIGGER holds_no_delete BEFORE DELETE ON holds FOR EACH ROW EXECUTE FUNCTION ledger_refuse();
CREATE TRIGGER requests_no_delete BEFORE DELETE ON requests FOR EACH ROW EXECUTE FUNCTION ledger_refuse();
INSERT INTO accounts (id, kind, owner, created_at_ms) VALUES ('acc_issuance', 'ISSUANCE', 'platform', 0);
"""

# Version 2: request ids scoped by caller. The requests of version 1 (one global namespace; each was
# also the id of the hold or transfer it made) are kept, read-only, in `legacy_requests`: a repeat that
# matches one of them exactly is still answered from it, and their holds and transfers keep their ids.
# New requests are keyed by (caller, id).
_SQLITE_V2 = """
ALTER TABLE requests RENAME TO legacy_requests;
DROP TRIGGER requests_no_delete;
CREATE TRIGGER legacy_requests_no_delete BEFORE DELETE ON legacy_requests
BEGIN SELECT RAISE(ABORT, 'ledger: request ids are kept'); END;
CREATE TRIGGER legacy_requests_no_insert BEFORE INSERT ON legacy_requests
BEGIN SELECT RAISE(ABORT, 'ledger: requests from before per-caller request ids are read-only'); END;
CREATE TRIGGER legacy_requests_no_update BEFORE UPDATE ON legacy_requests
BEGIN SELECT RAISE(ABORT, 'ledger: requests from before per-caller request ids are read-only'); END;
CREATE TABLE requests (
    caller TEXT NOT NULL,
    id TEXT NOT NULL,
    op TEXT NOT NULL,
    params TEXT NOT NULL,
    result_ref TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    PRIMARY KEY (caller, id)
);
CREATE TRIGGER requests_no_delete BEFORE DELETE ON requests
BEGIN SELECT RAISE(ABORT, 'ledger: request ids are kept'); END;
"""

_POSTGRES_V2 = """
ALTER TABLE requests RENAME TO legacy_requests;
ALTER INDEX requests_pkey RENAME TO legacy_requests_pkey;
ALTER TRIGGER requests_no_delete ON legacy_requests RENAME TO legacy_requests_no_delete;
CREATE TRIGGER legacy_requests_read_only BEFORE INSERT OR UPDATE ON legacy_requests
    FOR EACH ROW EXECUTE FUNCTION ledger_refuse();
CREATE TABLE requests (
    caller TEXT NOT NULL,
    id TEXT NOT NULL,
    op TEXT NOT NULL,
    params TEXT NOT NULL,
    result_ref TEXT NOT NULL,
    created_at_ms BIGINT NOT NULL,
    PRIMARY KEY (caller, id)
);
CREATE TRIGGER requests_no_delete BEFORE DELETE ON requests FOR EACH ROW EXECUTE FUNCTION ledger_refuse();
"""

SQLITE: list[tuple[int, str]] = [(1, _SQLITE_V1), (2, _SQLITE_V2)]
POSTGRES: list[tuple[int, str]] = [(1, _POSTGRES_V1), (2, _POSTGRES_V2)]


VERSION_TABLE = "schema_migrations"
# Any constant: serialises the migrations of wallet processes starting together and `felt migrate`.
ADVISORY_LOCK = 7_426_001


def missing(applied: set[int], migrations: list[tuple[int, str]]) -> list[str]:
    """The migrations a wallet of this release needs that `applied` lacks, named for a log line."""
    return [f"wallet {version}" for version, _ in migrations if version not in applied]


def pending(applied: set[int], migrations: list[tuple[int, str]]) -> list[tuple[int, str]]:
    return [(v, sql) for v, sql in migrations if v not in applied]


def apply_all(
    run_script: Callable[[str], object], applied: set[int], migrations: list[tuple[int, str]], now_ms: int
) -> list[int]:
    """Runs the pending migrations through `run_script` (inside the caller's transaction) and
    returns their versions."""
    done = []
    for version, sql in pending(applied, migrations):
        run_script(sql)
        run_script(f"INSERT INTO {VERSION_TABLE} (version, applied_at_ms) VALUES ({version}, {now_ms})")
        done.append(version)
    return done
