"""The web pages: play in the browser, leaderboards, rules, accounts (English and German)."""
