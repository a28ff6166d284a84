"""The command layer: typer commands, option table, running and printing."""
