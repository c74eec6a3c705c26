"""Rating: Bradley–Terry fits, Elo, bootstrap intervals by task and the Elo-per-token table.

Import the submodules directly (``eloledger.rating.bt``, ``.comparisons``, ``.bootstrap``,
``.table``); this package file stays empty so importing one part stays cheap.
"""
