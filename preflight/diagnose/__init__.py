"""``preflight diagnose``: check every assumption of one launch line on the live hosts, then dry-run it."""
