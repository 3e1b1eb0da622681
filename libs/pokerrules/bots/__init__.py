"""Table bots (NK-7.6): act on their own view only, through the same legal-action API as people.

decision = decide(view_for(hand, seat), seed)     # Action within the legal min/max, think time, equity
move = bot_move(table_state, seed)                # for the bot whose turn it is at a table, else None
"""

from pokerrules.bots.equity import estimate_equity
from pokerrules.bots.seats import BotMove, bot_move
from pokerrules.bots.strategy import BotProfile, Decision, decide

__all__ = ["BotMove", "BotProfile", "Decision", "bot_move", "decide", "estimate_equity"]
