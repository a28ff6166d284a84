"""Reading a source widening by widening: ingest, tracebacks and grouping driven over a Source."""
