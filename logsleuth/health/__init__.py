"""`logsleuth health`: a running server's steady-state lines against the health patterns (docs/health.md)."""
