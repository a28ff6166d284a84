"""Logs a runtime keeps rather than a file: Docker/Podman containers, Kubernetes pods, systemd units."""
