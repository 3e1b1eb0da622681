"""Table bots (NK-7.6): act on their own view only, through the same legal-action API as people.

decision = decide(view_for(hand, seat), seed)     # Action within the legal min/max, think time, equity
move = bot_move(table_state, seed)                # for the bot whose turn it is at a table, else None
power = bot_power_move(table_state, now)          # Naiko tables: a shield answer or a power, first
"""

from pokerrules.bots.equity import estimate_equity
from pokerrules.bots.seats import BotMove, bot_answer, bot_move, bot_power, bot_power_move
from pokerrules.bots.strategy import BotProfile, Decision, decide

__all__ = [
    "BotMove",
    "BotProfile",
    "Decision",
    "bot_answer",
    "bot_move",
    "bot_power",
    "bot_power_move",
    "decide",
    "estimate_equity",
]
