"""Rating proper: Bradley–Terry fits, Elo, and intervals clustered by task.

Import the submodules directly (``eloledger.rating.bt``, ``.comparisons``, ``.bootstrap``,
``.sandwich``); this package file stays empty so importing one part stays cheap. What tokens
buy is in :mod:`eloledger.budget`; the Elo table with costs is in :mod:`eloledger.report`.
"""
