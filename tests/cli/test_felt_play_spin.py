"""`felt play` at a Spin (issue 23, docs/fairness.md section 11, NK-6.4): the dealer, the wallet, the table
and the tournament services as processes. felt play registers with a fresh seed of the player's own, given
after the Spin's commitment was published; once the bots fill the Spin and the multiplier is drawn it
prints one line: the draw verified, the player's seed mixed in. The server's proof lists that seed as the
player's. At the Spin's table the hands get the player's seeds and are verified as at any table."""

from __future__ import annotations

import re

import pytest
from felt.play import tournament
from felt.play.session import Console
from poker.table.v1 import table_service_pb2 as tpb
from poker.tournament.v1 import tournament_service_pb2 as pb
from servicekit.auth import Role

from tests.cli.test_felt_play_e2e import check_or_fold
from tests.tournament_service.conftest import Stack, stack  # noqa: F401 (the services, as processes)

pytestmark = pytest.mark.slow


def test_felt_play_registers_at_a_spin_with_its_own_seed_and_verifies_the_draw(stack: Stack) -> None:  # noqa: F811
    ops = stack.tournaments()
    made = ops.CreateTournament(
        pb.CreateTournamentRequest(
            request_id="play-spin", format=pb.FORMAT_SPIN, game=tpb.GAME_NO_LIMIT_HOLDEM, buy_in=100, fee=7
        )
    ).tournament
    tid = made.tournament_id
    stack.fund("spinna", 1_000)
    player = stack.tournaments("spinna", Role.PLAYER)
    lines: list[str] = []
    found, spin = tournament.register(player, made, lines.append)
    assert spin is not None and spin.commitment == made.spin_commitment and len(spin.seed) == 32
    assert len(lines) == 1 and lines[0].startswith("Registered (entry "), lines
    ops.AddBots(pb.AddBotsRequest(request_id="play-spin-bots", tournament_id=tid, count=2))
    answers = ["CAREFUL"] * 8

    def read(prompt: str) -> str:
        return check_or_fold(lines) if answers and answers.pop() else "q"

    session = tournament.TournamentSession(
        player, stack.tables("spinna"), tid, "spinna", Console(read, lines.append),
        from_seq=found.last_seq + 1, spin=spin,
    )  # fmt: skip
    assert session.run() == 0
    out = "\n".join(lines)
    assert (
        f"Spin {tid} verified: your seed was mixed in, and the draw is the one committed before it" in out
    ), out
    assert re.search(r"^Spin multiplier drawn: x\d+", out, re.M), out[-3000:]
    drawn = ops.GetTournament(pb.GetTournamentRequest(tournament_id=tid)).tournament
    mine = [s for s in drawn.spin_proof.client_seeds if s.player_id == "spinna"]
    assert len(mine) == 1 and mine[0].from_player and mine[0].seed == spin.seed
    assert drawn.spin_proof.commitment == made.spin_commitment
    # The Spin's table: the hands the player finished are verified, none failed.
    assert re.search(r"^Hand #\d+ verified", out, re.M), out[-3000:]
    assert "NOT verified" not in out, out[-3000:]


def test_the_last_registration_draws_the_multiplier_and_felt_play_verifies_it_at_once(stack: Stack) -> None:  # noqa: F811
    """The player takes the Spin's last seat: their Register draws the multiplier, whose event is older
    than the answer felt play follows the tournament from; the draw is checked all the same, once."""
    ops = stack.tournaments()
    made = ops.CreateTournament(
        pb.CreateTournamentRequest(
            request_id="play-spin-last",
            format=pb.FORMAT_SPIN,
            game=tpb.GAME_NO_LIMIT_HOLDEM,
            buy_in=100,
            fee=7,
        )
    ).tournament
    tid = made.tournament_id
    ops.AddBots(pb.AddBotsRequest(request_id="play-spin-last-bots", tournament_id=tid, count=2))
    stack.fund("lastone", 1_000)
    player = stack.tournaments("lastone", Role.PLAYER)
    lines: list[str] = []
    found, spin = tournament.register(player, made, lines.append)
    assert spin is not None and spin.drawn, found
    session = tournament.TournamentSession(
        player, stack.tables("lastone"), tid, "lastone", Console(lambda _prompt: "q", lines.append),
        from_seq=found.last_seq + 1, spin=spin,
    )  # fmt: skip
    assert session.run() == 0
    out = "\n".join(lines)
    verified = f"Spin {tid} verified: your seed was mixed in, and the draw is the one committed before it"
    assert out.count(verified) == 1, out
