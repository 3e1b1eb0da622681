"""Typed clients of the platform's services for the services that call them, with one call policy.

- `calls.CallPolicy` / `calls.Calls`: a deadline on every call; a call that failed in transit
  (UNAVAILABLE, DEADLINE_EXCEEDED) is sent again only when it is idempotent (a read, or a change that
  carries its request id: the server then answers a repeat with the first result), with backoff, and
  after the last attempt the caller gets UNAVAILABLE `<DEPENDENCY>_UNAVAILABLE`. A dependency refusing our
  credentials is UNAVAILABLE `<DEPENDENCY>_REFUSED_CREDENTIALS` for the caller (it is our fault, not the
  player's, and passes once the token is renewed or the key fixed).
- `dealer.DealerClient`: shoes for the table and tournament services.
- `table.TableDirectorClient`: the tournament service's calls to its tables (TableDirectorService,
  WatchTable).
- `wallet.WalletCalls`: accounts by (kind, owner), holds and releases, for the table service's poker
  escrow and casino bets (and the tournament service's entries).

Channels come from `servicekit.client.channel(address, token_source, dependency=...)`.
"""
