"""Fleet memory (issue 42, docs/history.md): every verdict of ``run``, ``node`` and ``judge`` appended to a local
SQLite store, and what is read back from it.

- ``store``: where the store is, its versioned schema, the write (WAL, a busy timeout: many prolog processes at
  once) and the read;
- ``analysis``: pure functions over the rows: a host's timeline, what flaps, the lemon score;
- ``view``: ``preflight history``'s terminal text and JSON.

The store takes only a :class:`~preflight.model.RedactedReport`: what is recorded is what the report shows.
"""
