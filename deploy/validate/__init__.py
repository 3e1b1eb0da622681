"""Offline validation of Felt's deployment files: Kubernetes manifests, Prometheus rules, Grafana
dashboard and Dockerfile. No cluster, no Prometheus server: `python deploy/check.py` runs every check."""
