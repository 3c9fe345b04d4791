"""Model runs: the service that starts, follows, cancels and lists them; their folders, slots,
worker process and execution."""
