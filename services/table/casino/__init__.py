"""The casino part of the table service: tables running the pure engines of `pokerrules.casino`, with money
in the wallet and cards from the dealer."""
