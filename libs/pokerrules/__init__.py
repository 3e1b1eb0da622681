"""Pure game rules of Felt: cards, betting engine, pots, casino games — no I/O."""
