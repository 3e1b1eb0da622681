"""`felt play`: a terminal front-end for the table service.

- `render`: TableView / TableEvent / LegalActions protos -> lines of text (pure).
- `commands`: a line the player typed + the legal actions -> what to send, or why not (pure).
- `session`: the loop (join, watch in a thread, prompt on your turn, act, leave) with I/O injected.
- `setup`: the command line's side: tokens, chips from the wallet in development, finding a table.
"""
