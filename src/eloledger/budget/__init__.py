"""What tokens buy: budget curves, matched budgets, the fairness verdict and the CI gates.

Built on :mod:`eloledger.rating` (the fit and its intervals) and the ledger's outcomes:
``sessions`` and ``outcomes`` read the ledger into per-arm sessions and counts; ``curves`` and
``checkpoints`` draw Elo against budget (sampling arms, agent sessions), ``reference`` and
``sampling_line`` give the best-of-k line they are judged against; ``fairness`` and ``gates``
decide whether a gain is real at the same budget; ``files`` reads their input files; the
``*_sim`` modules are the planted-truth designs their studies run.
"""
