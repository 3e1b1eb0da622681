"""The seeded whole-platform simulation (issue 13): `python -m tests.simulation --seed N` replays one seed."""
