"""Verifying a hand, a casino round or a Spin draw from what was published (docs/fairness.md section 11).

The checking itself is the stand-alone verifier's, `libs/dealing/verifier.py`, loaded here from its file
as a module of its own (no other Felt code runs in the check: the same file a third party copies). What
this module adds is for people: the proof fetched from the service that published it, made into the
verifier's JSON document, and a short result to show, with the timing the commitment scheme relies on
(the commitment published before the seeds were given).

For `felt play` and other clients:

    seed = fresh_seed()                          # at each ShoeCommitted: SubmitClientSeed(..., seed)
    outcome = check_hand(tables, table_id, hand, my_seed=seed)   # fetch (GetHandProof) and verify
    print(outcome.summary)                      # "hand 12 at t-1 verified: ..." or what failed

or, with a proof already fetched or saved, `verify_document(hand_document(response), my_seed)`
(`round_document`, `spin_document` for a casino round and a Spin).
"""

from __future__ import annotations

import importlib.util
import json
import secrets
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

VERIFIER_PATH = Path(__file__).resolve().parents[1] / "dealing" / "verifier.py"


@cache
def verifier() -> ModuleType:
    """libs/dealing/verifier.py as a module of its own (imports only the standard library)."""
    spec = importlib.util.spec_from_file_location("felt_standalone_verifier", VERIFIER_PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Outcome:
    """`ok`: every check passed (the verifier found no problem and the seeds came after the commitment).
    `summary`: one line for people; `problems`: what failed; `notes`: what was checked."""

    ok: bool
    summary: str
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _int(value: Any) -> int:
    return int(value or 0)  # proto JSON writes 64-bit integers as strings


def verify_document(document: Mapping[str, Any], my_seed: str | None = None) -> Outcome:
    """Check a proof document (a saved `felt verify` file, or `*_document` of a fetched proof) with the
    stand-alone verifier, then the order of events: every player's own seed given after the commitment
    was published, and the commitment before the deal. `my_seed`: the seed the caller gave, which must be
    among the mixed ones."""
    check = verifier().verify_document(dict(document))
    problems = [f"{p.reason}: {p.message}" for p in check.problems]
    about = document.get("about") or {}
    what = str(about.get("what", "shoe"))
    seeds = [s for s in document.get("client_seeds", []) if isinstance(s, Mapping)]
    committed = _int(document.get("committed_ms"))
    dealt = _int(document.get("dealt_ms"))
    notes = []
    if "commitment" in document:
        notes.append(f"commitment {str(document['commitment'])[:16]}… is SHA-256 of the revealed server seed")
    if seeds:
        own = [s for s in seeds if s.get("from_player")]
        notes.append(f"{len(seeds)} client seeds mixed into the shuffle ({len(own)} given by players)")
        early = [s for s in own if committed and _int(s.get("given_ms")) < committed]
        if early:
            problems.append(
                f"SEED_BEFORE_COMMITMENT: {len(early)} seed(s) given before the commitment was published"
            )
        if committed and dealt and dealt < committed:
            problems.append("DEALT_BEFORE_COMMITMENT: the deal is older than its commitment")
    if my_seed is not None and not any(s.get("seed") == my_seed and s.get("from_player") for s in seeds):
        problems.append("YOUR_SEED_MISSING: the seed you gave is not among the mixed ones")
    if check.cards_checked:
        notes.append(f"{check.cards_checked} cards at their positions in the shuffled order")
    if document.get("openings"):
        notes.append(f"{len(document['openings'])} of your cards open the commitments published at the deal")
    for draw in document.get("draws", []):
        notes.append(f"draw {draw.get('label')} = {draw.get('value')} recomputed")
    if "spin_table" in document:
        notes.append(f"multiplier x{document.get('multiplier')} is the published table's for the draw")
    if problems:
        return Outcome(False, f"{what}: NOT verified ({problems[0]})", problems, notes)
    return Outcome(True, f"{what} verified: " + "; ".join(notes), problems, notes)


def _dict(message: Any) -> dict[str, Any]:
    from google.protobuf import json_format

    return dict(json_format.MessageToDict(message, preserving_proto_field_name=True))


def hand_document(response: Any) -> dict[str, Any]:
    """A TableService GetHandProofResponse as the verifier's document."""
    about = {
        "what": f"hand {response.hand_number} at {response.table_id}",
        "table_id": response.table_id,
        "hand_number": int(response.hand_number),
        "your_seat": int(response.your_seat),
    }
    return {"about": about, **_dict(response.proof)}


def round_document(response: Any) -> dict[str, Any]:
    """A CasinoService GetRoundProofResponse as the verifier's document."""
    about = {
        "what": f"round {response.round} at {response.table_id}",
        "table_id": response.table_id,
        "round": int(response.round),
    }
    return {"about": about, **_dict(response.proof)}


def spin_document(tournament: Any) -> dict[str, Any]:
    """A drawn Spin (a Tournament message) as the verifier's document: its proof, its published table
    and the multiplier it paid."""
    about = {"what": f"Spin {tournament.tournament_id}", "tournament_id": tournament.tournament_id}
    table = [
        {"multiplier": m.multiplier, "chance_per_million": m.chance_per_million}
        for m in tournament.spin_table
    ]
    document = {"about": about, **_dict(tournament.spin_proof)}
    return {**document, "spin_table": table, "multiplier": int(tournament.spin_multiplier)}


def load(path: str) -> dict[str, Any]:
    """A saved proof (or a dealer Reveal) from a JSON file; "-" reads standard input."""
    with open(path if path != "-" else 0, encoding="utf-8") as handle:
        document = json.load(handle)
    if not isinstance(document, dict):
        raise ValueError("a proof is a JSON object")
    return document


def fetch_retrying(
    fetch: Callable[[], Any], is_not_ready: Callable[[Exception], bool], seconds: float
) -> Any:
    """`fetch()` again while its answer is 'not ready yet' (a proof whose seed is revealed a moment after
    the hand), for up to `seconds`."""
    give_up = time.monotonic() + seconds
    while True:
        try:
            return fetch()
        except Exception as exc:
            if not is_not_ready(exc) or time.monotonic() >= give_up:
                raise
            time.sleep(0.5)


def lines(outcome: Outcome) -> Sequence[str]:
    """The outcome as the command prints it."""
    out = [outcome.summary]
    out += [f"  ok    {note}" for note in outcome.notes] if outcome.ok else []
    out += [f"  FAIL  {problem}" for problem in outcome.problems]
    return out


def fresh_seed() -> str:
    """A client seed of the player's own: 128 bits from the OS CSPRNG, as 32 hex digits."""
    return secrets.token_hex(16)


def _not_ready(error: Exception) -> bool:
    from servicekit.errors import details_of

    return hasattr(error, "code") and details_of(error).reason == "PROOF_NOT_READY"  # type: ignore[arg-type]


def check_hand(
    tables: Any, table_id: str, hand: int, my_seed: str | None = None, wait: float = 5.0
) -> Outcome:
    """Fetch hand `hand`'s proof with a TableService stub (the caller's token: a player of the hand) and
    verify it; a proof not revealed yet is asked again for up to `wait` seconds."""
    from poker.table.v1 import table_service_pb2 as pb

    request = pb.GetHandProofRequest(table_id=table_id, hand_number=hand)
    response = fetch_retrying(lambda: tables.GetHandProof(request), _not_ready, wait)
    return verify_document(hand_document(response), my_seed)


def check_round(
    casino: Any, table_id: str, number: int, my_seed: str | None = None, wait: float = 5.0
) -> Outcome:
    """The same for a casino round, with a CasinoService stub."""
    from poker.table.v1 import casino_service_pb2 as cpb

    request = cpb.GetRoundProofRequest(table_id=table_id, round=number)
    response = fetch_retrying(lambda: casino.GetRoundProof(request), _not_ready, wait)
    return verify_document(round_document(response), my_seed)


def check_spin(tournaments: Any, tournament_id: str, my_seed: str | None = None) -> Outcome:
    """The same for a drawn Spin's multiplier, with a TournamentService stub."""
    from poker.tournament.v1 import tournament_service_pb2 as tpb

    found = tournaments.GetTournament(tpb.GetTournamentRequest(tournament_id=tournament_id)).tournament
    if not found.HasField("spin_proof"):
        return Outcome(False, f"Spin {tournament_id}: no draw to verify yet", ["NOT_DRAWN"])
    return verify_document(spin_document(found), my_seed)
