"""Dealer service: provably fair shoes over gRPC (poker.dealer.v1.DealerService)."""
