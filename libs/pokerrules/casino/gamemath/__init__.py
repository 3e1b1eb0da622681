"""Exact game math (PAR sheets) of the banked games: complete enumeration with suit symmetry, C evaluator."""
