"""The tournament service: poker.tournament.v1.TournamentService (README.md)."""
