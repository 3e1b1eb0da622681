"""TableService: multiplayer No-Limit Hold'em and Pot-Limit Omaha tables over gRPC (issue 6)."""
