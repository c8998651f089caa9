"""Accounts: users' names (look-alikes refused), personal API tokens and sessions."""
