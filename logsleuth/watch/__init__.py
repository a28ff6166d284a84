"""Following a launch: stages, readiness, failures, fleets and launching."""
