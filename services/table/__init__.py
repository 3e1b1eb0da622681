"""Table service: hosts the banked casino games (poker.table.v1.CasinoService); later TableService too."""
